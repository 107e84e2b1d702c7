"""GOT-OCR 2.0 (Wei et al. 2024, "General OCR Theory: Towards OCR-2.0 via a Unified End-to-end
Model"; transformers' ``GotOcr2ForConditionalGeneration``) and PP-Chart2Table (PaddlePaddle 2025,
the same class under model_type pp_chart2table): a SAM-style vision tower and a convolutional
projector (held, ``blocks/got_ocr2.py``) beside a Qwen2 text decoder. Counted: every parameter and
the forward over token ids; the cost of an image is not modelled.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields

_ADDED = {"neck_channels": 256, "window_side": 14, "global_layers": 4, "vision_qkv_bias": True,
          "vision_positions": True, "vision_rel_pos": True}
_HELP = {"neck_channels": "the neck's output channels O (output_channels)",
         "window_side": "the side w of a windowed layer's attention window (window_size)",
         "global_layers": "how many layers attend globally (global_attn_indexes)",
         "vision_qkv_bias": "the tower's fused QKV projection has a bias (qkv_bias)",
         "vision_positions": "learned absolute positions (use_abs_pos)",
         "vision_rel_pos": "decomposed relative positions in each layer (use_rel_pos)"}

FAMILIES = (Family(name="got_ocr2", description="GOT-OCR 2.0: a SAM-style vision tower and a convolutional projector "
                   "(held: images are not modelled), a Qwen2 text decoder",
                   flags=Extended(FLAGS, dict(gqa=True, qkv_bias=True), _ADDED),
                   sizes=SIZES + ("d_v", "h_v", "L_v", "d_ff_v", "S_img", "P_patch", "C_img", "N_img"),
                   optional=OPTIONAL, build=partial(Ref("symgpt.families.blocks.got_ocr2", "build"), name="got_ocr2"),
                   flag_help=Extended(FLAG_HELP, added=_HELP), choices=Extended(CHOICES)),)


def read(f: Fields):
    """transformers' GotOcr2Config (PPChart2TableConfig alike): text_config (Qwen2Config),
    vision_config (GotOcr2VisionConfig)."""
    from .qwen2 import read as read_qwen2

    text = sub_fields(f, "text_config")
    if not text.cfg:
        raise SymgptError(f"{f.where}: a GOT-OCR 2.0 config without its text_config is not modelled (give the "
                          "checkpoint's config.json, which has one)")
    mt = text.cfg.get("model_type", "qwen2")
    if mt != "qwen2":
        raise SymgptError(f"{f.where}: a GOT-OCR 2.0 text_config of model_type {str(mt)[:40]!r} is not modelled "
                          "(symgpt counts a Qwen2 decoder)")
    _, flags, sizes = read_qwen2(text)
    note_leftovers(f, text, "text_config")
    v = sub_fields(f, "vision_config")
    vt = v.cfg.get("model_type", f"{f.cfg.get('model_type', 'got_ocr2')}_vision")
    if vt not in ("got_ocr2_vision", "pp_chart2table_vision"):
        raise SymgptError(f"{f.where}: a vision_config of model_type {str(vt)[:40]!r} is not modelled")
    sizes.update(d_v=v.int("hidden_size", 768), L_v=v.int("num_hidden_layers", 12),
                 h_v=v.int("num_attention_heads", 12), d_ff_v=v.int("mlp_dim", 3072),
                 S_img=v.int("image_size", 1024), P_patch=v.int("patch_size", 16), C_img=v.int("num_channels", 3))
    glob = v.get("global_attn_indexes", [2, 5, 8, 11])[0]
    if not isinstance(glob, list) or not all(isinstance(i, int) and 0 <= i < sizes["L_v"] for i in glob) \
            or len(set(glob)) != len(glob):
        raise SymgptError(f"{f.where}: vision_config.global_attn_indexes must list distinct layer indices")
    window = v.int("window_size", 14, minimum=0)
    if window == 0:  # every layer global: no windowed layer reads window_side
        glob, window = list(range(sizes["L_v"])), 1
    if sizes["S_img"] % sizes["P_patch"] or sizes["d_v"] % sizes["h_v"]:
        raise SymgptError(f"{f.where}: image_size must be a multiple of patch_size and hidden_size of "
                          "num_attention_heads")
    flags.update(neck_channels=v.int("output_channels", 256), window_side=window, global_layers=len(glob),
                 vision_qkv_bias=v.bool("qkv_bias", True), vision_positions=v.bool("use_abs_pos", True),
                 vision_rel_pos=v.bool("use_rel_pos", True), tied=f.bool("tie_word_embeddings", True))
    v.silent("hidden_act", "layer_norm_eps", "attention_dropout", "initializer_range", "id2label", "label2id")
    note_leftovers(f, v, "vision_config")
    f.notes.append("images are not modelled for GOT-OCR 2.0: the vision tower and projector are held, their "
                   "parameters counted; N_img must be 0")
    f.silent("image_token_index", "image_token_id", "image_seq_length", "id2label", "label2id")
    sizes["N_img"] = 0
    return "got_ocr2", flags, sizes


READERS = {"got_ocr2": Reader(read, ("GotOcr2ForConditionalGeneration",)),
           "pp_chart2table": Reader(read, ("GotOcr2ForConditionalGeneration",))}

PRESETS: tuple = ()

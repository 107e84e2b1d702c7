"""PP-FormulaNet (PaddlePaddle, PP-FormulaNet in PaddleOCR 3.0; transformers'
``PPFormulaNetForConditionalGeneration``): SAM's ViT-Det image encoder with a convolutional neck and
projector, and an mBART-style decoder cross-attending to it (``blocks/pp_formulanet.py``). The
decoder reads the image in every forward, so only the parameters are modelled: any request with a
sequence length is refused in one line.
"""

from __future__ import annotations

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader, note_leftovers, sub_fields
from .seq2seq_decoder import CHOICES, FLAG_HELP, FLAGS, read_causal

_ADDED = {"tower_heads": 12, "tower_qkv_bias": True, "tower_rel_pos": True, "tower_abs_pos": True, "tower_window": 14,
          "tower_global": 4, "neck_out": 256, "post_in": 256, "post_mid": 512, "post_out": 1024, "post_decoder": 512}
_HELP = {"tower_heads": "the image encoder's heads (the width of its relative position tables: d_v / heads)",
         "tower_qkv_bias": "its qkv projection has a bias (qkv_bias)",
         "tower_rel_pos": "its relative position tables (use_rel_pos)",
         "tower_abs_pos": "its absolute position table of (S_img/P)² rows (use_abs_pos)",
         "tower_window": "the window side of its windowed layers (window_size)",
         "tower_global": "its global-attention layers (global_attn_indexes within the layers)",
         "neck_out": "the neck's channels (output_channels)", "post_in": "the projector's input channels",
         "post_mid": "its middle channels", "post_out": "its output channels (post_conv_out_channels)",
         "post_decoder": "its output width (decoder_hidden_size)"}

FAMILIES = (Family(
    name="pp_formulanet", description="PP-FormulaNet: SAM's ViT-Det image encoder, a convolutional projector and an "
    "mBART-style decoder cross-attending to it (parameters only)",
    flags={**FLAGS, "norm": "pre", "embed_scale": True, "tied": False, **_ADDED},
    sizes=("L", "d", "h", "V", "d_ff", "T_max", "d_v", "L_v", "d_ff_v", "S_img", "P_patch", "C_img", "N_img"),
    build=Ref("symgpt.families.blocks.pp_formulanet", "build"), flag_help={**FLAG_HELP, **_HELP}, choices=CHOICES),)

_SILENT = ("initializer_range", "id2label", "label2id", "model_type", "attention_dropout", "layer_norm_eps", "hidden_act",
           "dropout", "activation_dropout", "decoder_start_token_id", "use_cache", "pad_token_id", "bos_token_id",
           "eos_token_id", "is_encoder_decoder")


def read(f: Fields):
    """transformers' PPFormulaNetConfig: text_config (PPFormulaNetTextConfig), vision_config."""
    t = sub_fields(f, "text_config")
    _, flags, sizes = read_causal(t, "PPFormulaNetForConditionalGeneration",
                                  {"V": 50000, "d": 512, "L": 8, "h": 16, "d_ff": 2048, "T_max": 2560, "scale": True},
                                  norm="pre")
    t.notes.clear()  # the decoder-alone note: replaced by this type's own below
    flags["tied"] = False  # PPFormulaNetForConditionalGeneration ties nothing (_tied_weights_keys = {})
    t.silent("encoder_layers", "encoder_attention_heads", *_SILENT)
    note_leftovers(f, t, "text_config")
    v = sub_fields(f, "vision_config")
    sizes.update(d_v=v.int("hidden_size", 768), L_v=v.int("num_hidden_layers", 12), d_ff_v=v.int("mlp_dim", 3072),
                 S_img=v.int("image_size", 512), P_patch=v.int("patch_size", 16), C_img=v.int("num_channels", 3),
                 N_img=0)
    heads = v.int("num_attention_heads", 12)
    if sizes["d_v"] % heads or sizes["S_img"] % sizes["P_patch"]:
        raise SymgptError(f"{v.where}: hidden_size must be a multiple of num_attention_heads, image_size of patch_size")
    glob, _ = v.get("global_attn_indexes", [2, 5, 8, 11])
    if not isinstance(glob, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in glob):
        raise SymgptError(f"{v.where}: field 'global_attn_indexes' must be a list of layer indices")
    flags.update(tower_heads=heads, tower_qkv_bias=v.bool("qkv_bias", True), tower_rel_pos=v.bool("use_rel_pos", True),
                 tower_abs_pos=v.bool("use_abs_pos", True), tower_window=v.int("window_size", 14, minimum=0) or None,
                 tower_global=len({i for i in glob if 0 <= i < sizes["L_v"]}) or None,
                 neck_out=v.int("output_channels", 256), post_in=v.int("post_conv_in_channels", 256),
                 post_mid=v.int("post_conv_mid_channels", 512), post_out=v.int("post_conv_out_channels", 1024),
                 post_decoder=v.int("decoder_hidden_size", 512))
    if flags["tower_window"] is None and flags["tower_global"] != sizes["L_v"] and flags["tower_rel_pos"]:
        raise SymgptError(f"{v.where}: window_size 0 (every layer global) with global_attn_indexes short of the "
                          "layers is not modelled")
    v.silent(*_SILENT)
    note_leftovers(f, v, "vision_config")
    f.silent("tie_word_embeddings", "initializer_range", "is_encoder_decoder", "id2label", "label2id")
    f.notes.append("parameters only: the decoder cross-attends to the image encoder's output in every forward, and "
                   "that forward is not modelled (a request with T is refused)")
    return "pp_formulanet", flags, sizes


READERS = {"pp_formulanet": Reader(read, ("PPFormulaNetForConditionalGeneration",))}

PRESETS: tuple = ()

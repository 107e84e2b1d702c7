"""MiniCPM-V 4.6 / 4.7 and MiniCPM-OCR (OpenBMB; transformers' ``MiniCPMV4_6ForConditionalGeneration``,
``MiniCPMV4_7ForConditionalGeneration``, ``MiniCPMOcrForConditionalGeneration``): a Qwen3.5 text decoder
(``families/qwen3_next.py``), a SigLIP-style vision tower with a window-attention merger after one of its
layers, and a merger into the text width (``blocks/minicpmv.py``). Parameters exact; images (slices of
variable resolution, merged twice) are not modelled: N_img must be 0.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields
from .qwen3_next import FAMILIES as _QWEN

_TEXT = next(f for f in _QWEN if f.name == "qwen3_5")
_VISION = {"merge_window": 4, "merger_times": 1}
_VISION_HELP = {"merge_window": "patches the window-attention merger gathers (window_kernel_size k_h·k_w)",
                "merger_times": "the merger's blocks (merger_times): m - 1 at the vision width, the last into d"}

FAMILIES = (
    Family(name="minicpmv", description="MiniCPM-V 4.6/4.7, MiniCPM-OCR: Qwen3.5 text decoder, SigLIP-style tower "
           "with a window-attention merger, a merger into the text width (held: images are not modelled)",
           flags=Extended(FLAGS, _TEXT.flags.changes, {**_TEXT.flags.added, **_VISION}),
           sizes=SIZES + ("d_v", "h_v", "L_v", "d_ff_v", "S_img", "P_patch", "C_img", "N_img"), optional=OPTIONAL,
           build=partial(Ref("symgpt.families.blocks.minicpmv", "build"), name="minicpmv"),
           flag_help=Extended(FLAG_HELP, added={**_TEXT.flag_help.added, **_VISION_HELP}),
           choices=Extended(CHOICES, added=_TEXT.choices.added)),
)


def _pair(f: Fields, v: Fields, key: str) -> int:
    val = v.cfg.get(key, [2, 2])
    v.used.add(key)
    if not (isinstance(val, list) and len(val) == 2 and all(isinstance(i, int) and not isinstance(i, bool) and i > 0
                                                             for i in val)):
        raise SymgptError(f"{f.where}: {key} must be a pair of positive integers")
    return val[0] * val[1]


def read(f: Fields):
    """transformers' MiniCPMV4_6Config (MiniCPMV4_7Config, MiniCPMOcrConfig alike): text_config
    (Qwen3_5TextConfig), vision_config, merger_times, downsample_mode."""
    from .qwen3_next import read_qwen3_5_text

    text = sub_fields(f, "text_config")
    mt = text.cfg.get("model_type", "qwen3_5_text")
    if mt != "qwen3_5_text":
        raise SymgptError(f"{f.where}: a MiniCPM-V text_config of model_type {str(mt)[:40]!r} is not modelled")
    _, flags, sizes = read_qwen3_5_text(text)
    note_leftovers(f, text, "text_config")
    v = sub_fields(f, "vision_config")
    img, patch = v.cfg.get("image_size", 224), v.cfg.get("patch_size", 16)
    if not isinstance(img, int) or not isinstance(patch, int):
        raise SymgptError(f"{f.where}: a vision_config image_size or patch_size given as a pair is not modelled")
    sizes.update(d_v=v.int("hidden_size", 768), L_v=v.int("num_hidden_layers", 12),
                 h_v=v.int("num_attention_heads", 12), d_ff_v=v.int("intermediate_size", 3072),
                 S_img=v.int("image_size", 224), P_patch=v.int("patch_size", 16), C_img=v.int("num_channels", 3),
                 N_img=0)
    flags.update(merge_window=_pair(f, v, "window_kernel_size"), merger_times=f.int("merger_times", 1))
    v.int("insert_layer_id", 6, minimum=-1)
    v.str("hidden_act", "gelu_pytorch_tanh")
    v.silent("layer_norm_eps", "attention_dropout", "initializer_range", "id2label", "label2id", "model_type")
    note_leftovers(f, v, "vision_config")
    _pair(f, f, "merge_kernel_size")
    flags["tied"] = f.bool("tie_word_embeddings", False)
    f.notes.append("images are not modelled for MiniCPM-V: each is cut into slices of variable resolution whose "
                   "patches two mergers gather; N_img must be 0. The tower's and mergers' parameters are held")
    f.silent("downsample_mode", "drop_vision_last_layer", "image_size", "patch_size", "insert_layer_id",
             "image_token_id", "video_token_id", "image_start_id", "image_end_id", "slice_start_id", "slice_end_id",
             "newline_id", "initializer_range", "id2label", "label2id")
    return "minicpmv", flags, sizes


READERS = {"minicpmv4_6": Reader(read, ("MiniCPMV4_6ForConditionalGeneration",)),
           "minicpmv4_7": Reader(read, ("MiniCPMV4_7ForConditionalGeneration",)),
           "minicpm_ocr": Reader(read, ("MiniCPMOcrForConditionalGeneration",))}
PRESETS: tuple = ()

"""Qwen2.5-VL (Qwen Team 2025, the Qwen2.5-VL technical report; transformers'
``Qwen2_5_VLForConditionalGeneration``) and Qwen2-VL (Wang et al. 2024; ``Qwen2VLForConditionalGeneration``):
a Qwen2 text decoder and a vision tower (``blocks/qwen_vl.py``). Counted: every parameter and the forward over token ids; the cost of an
image (windowed attention, 2-D rotary, the 2×2 patch merger) is not modelled yet.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family, Preset
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, llama_like

BUILD = Ref("symgpt.families.blocks.qwen_vl", "build")

_ADDED = {"temporal_patch": 2, "merge_size": 2, "vision_out_dim": 3584}
_HELP = {"temporal_patch": "frames per patch of the vision tower's Conv3d (temporal_patch_size)",
         "merge_size": "the side m of the patch merger's m × m merge (spatial_merge_size)",
         "vision_out_dim": "the patch merger's output width (out_hidden_size)"}

# the image path of Qwen2.5-VL (vision_run): square images of S_img pixels, windowed attention
_RUN = {"vision_run": False, "window_size": 112, "full_layers_v": 4}
_RUN_HELP = {"vision_run": "run the vision tower over N_img images of S_img × S_img pixels per sequence (false: "
                           "its parameters held, N_img = 0)",
             "window_size": "the side in pixels of the vision tower's attention windows (window_size)",
             "full_layers_v": "the vision blocks with full attention over the image (len(fullatt_block_indexes))"}

FAMILIES = (Family(name="qwen2_5_vl", description="Qwen2.5-VL: a Qwen2 decoder with a vision tower (held unless "
                   "vision_run: a forward over token ids runs none of it)",
                   flags=Extended(FLAGS, dict(gqa=True, qkv_bias=True), {**_ADDED, **_RUN}),
                   sizes=SIZES + ("d_v", "L_v", "d_ff_v", "P_patch", "C_img", "N_img"),
                   optional=OPTIONAL + ("h_v", "S_img"),
                   build=partial(BUILD, name="qwen2_5_vl"), flag_help=Extended(FLAG_HELP, added={**_HELP, **_RUN_HELP}),
                   choices=Extended(CHOICES)),
            Family(name="qwen2_vl", description="Qwen2-VL: a Qwen2 decoder with a vision tower of LayerNorms and "
                   "GELU MLPs (held: a forward over token ids runs none of it)",
                   flags=Extended(FLAGS, dict(gqa=True, qkv_bias=True), {**_ADDED, "qwen2_vision": True}),
                   sizes=SIZES + ("d_v", "L_v", "d_ff_v", "P_patch", "C_img", "N_img"), optional=OPTIONAL,
                   build=partial(BUILD, name="qwen2_vl"),
                   flag_help=Extended(FLAG_HELP, added={**_HELP, "qwen2_vision": "Qwen2-VL's vision blocks "
                                                        "(LayerNorms, a GELU MLP of fc1/fc2, a LayerNorm merger)"}),
                   choices=Extended(CHOICES)),)

#: Qwen2_5_VLTextConfig's fields besides llama_like's
_TEXT_KNOWN = ("use_sliding_window", "sliding_window", "max_window_layers", "layer_types", "tokens_per_second",
               "vision_start_token_id", "vision_end_token_id", "vision_token_id", "image_token_id",
               "video_token_id", "rope_parameters", "rope_scaling", "rope_theta")


def read(f: Fields):
    """transformers' Qwen2_5_VLConfig: text_config (Qwen2_5_VLTextConfig; older config.json files
    keep its fields at the top level, as the config class reads them), vision_config
    (Qwen2_5_VLVisionConfig)."""
    flags, sizes = _read_text(f)
    v = _vision_fields(f)
    sizes.update(d_v=v.int("hidden_size", 3584), L_v=v.int("depth", 32), d_ff_v=v.int("intermediate_size", 3420),
                 P_patch=v.int("patch_size", 14), C_img=v.int("in_channels", 3))
    flags.update(temporal_patch=v.int("temporal_patch_size", 2), merge_size=v.int("spatial_merge_size", 2),
                 vision_out_dim=v.int("out_hidden_size", 3584))
    act = v.str("hidden_act", "silu")
    if act not in ("silu", "swish"):
        f.notes.append(f"the vision tower's activation {act[:30]!r} runs in no forward counted here")
    sizes["h_v"] = v.int("num_heads", 16)
    flags["window_size"] = v.int("window_size", 112)
    full, _ = v.get("fullatt_block_indexes", [7, 15, 23, 31])
    if not isinstance(full, list) or len(set(full)) != len(full) or not all(
            isinstance(i, int) and 0 <= i < sizes["L_v"] for i in full):
        raise SymgptError(f"{f.where}: vision_config fullatt_block_indexes must list distinct blocks of the depth")
    flags["full_layers_v"] = len(full) or None
    v.silent("in_chans", "spatial_patch_size", "tokens_per_second", "initializer_range", "rope_parameters",
             "depth", "model_type", "id2label", "label2id", "embed_dim", "num_hidden_layers")
    _finish(f, v, _RUN_NOTE)
    sizes["N_img"] = 0
    return "qwen2_5_vl", flags, sizes


def read_qwen2_vl(f: Fields):
    """transformers' Qwen2VLConfig: text_config (Qwen2VLTextConfig, or its fields at the top level),
    vision_config (Qwen2VLVisionConfig: embed_dim wide, an MLP of embed_dim·mlp_ratio, a merger
    out to hidden_size)."""
    flags, sizes = _read_text(f)
    v = _vision_fields(f)
    dv = v.int("embed_dim", 1280)
    ratio = v.int("mlp_ratio", 4)  # an int in Qwen2VLVisionConfig
    sizes.update(d_v=dv, L_v=v.int("depth", 32), d_ff_v=dv * ratio,  # int(embed_dim * mlp_ratio), as VisionMlp
                 P_patch=v.int("patch_size", 14), C_img=v.int("in_channels", 3))
    flags.update(temporal_patch=v.int("temporal_patch_size", 2), merge_size=v.int("spatial_merge_size", 2),
                 vision_out_dim=v.int("hidden_size", 3584), qwen2_vision=True)
    v.str("hidden_act", "quick_gelu")
    v.int("num_heads", 16)
    v.silent("in_chans", "spatial_patch_size", "initializer_range", "rope_parameters", "model_type", "id2label",
             "label2id")
    _finish(f, v)
    sizes["N_img"] = 0
    return "qwen2_vl", flags, sizes


def _vision_fields(f: Fields) -> Fields:
    v = f.cfg.get("vision_config") or {}
    f.used.add("vision_config")
    if not isinstance(v, dict):
        raise SymgptError(f"{f.where}: field 'vision_config' must be a JSON object")
    v = Fields(v, f"{f.where} vision_config")
    for key in ("patch_size", "temporal_patch_size", "spatial_merge_size"):
        if isinstance(v.cfg.get(key), list):
            raise SymgptError(f"{f.where}: vision_config {key} given as a list is not modelled")
    return v


_RUN_NOTE = ("the forward counted is over token ids unless vision_run is set: then over N_img square images of S_img "
             "pixels a side per sequence (resized by the processor to a multiple of patch_size·spatial_merge_size, "
             "here also of window_size), each (S_img/P_patch)²/merge_size² tokens of T, through windowed and "
             "full-attention blocks and the patch merger; the 2-D rotary tables and the window permutation's "
             "copies are not in the graph (no matmul); video is not modelled")


def _finish(f: Fields, v: Fields, note: str | None = None) -> None:
    f.notes.extend(v.notes)
    for k in v.leftovers():
        f.notes.append(f"field vision_config.{k[:60]!r} is not understood by symgpt: ignored")
    f.notes.append(note or "the forward counted is over token ids, without images or video: transformers does not "
                   "run the vision tower, whose parameters are counted. The cost of an image is not modelled yet")
    f.silent("image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id",
             "vision_token_id", "tie_word_embeddings", "initializer_range")


def _read_text(f: Fields):
    """The decoder's fields: text_config, or the top level of an older config.json."""
    nested = f.cfg.get("text_config")
    f.used.add("text_config")
    if nested is not None and not isinstance(nested, dict):
        raise SymgptError(f"{f.where}: field 'text_config' must be a JSON object")
    text = Fields(nested, f"{f.where} text_config") if nested is not None else f
    flags, sizes = llama_like(text, dict(V=152064, d=8192, d_ff=29568, L=80, h=64, h_kv=8, T_max=32768))
    if text.bool("use_sliding_window", False):
        raise SymgptError(f"{f.where}: use_sliding_window (sliding-window layers after max_window_layers) is not "
                          "modelled for Qwen2.5-VL")
    types = text.cfg.get("layer_types")
    if types is not None and set(types) - {"full_attention"}:
        raise SymgptError(f"{f.where}: layer_types other than full_attention are not modelled for Qwen2.5-VL")
    text.silent(*_TEXT_KNOWN)
    if text is not f:
        f.notes.extend(text.notes)
        for k in text.leftovers():
            f.notes.append(f"field text_config.{k[:60]!r} is not understood by symgpt: ignored")
        if f.bool("tie_word_embeddings", False):
            flags["tied"] = True
    return flags, sizes


READERS = {"qwen2_5_vl": Reader(read, ("Qwen2_5_VLForConditionalGeneration",)),
           "qwen2_vl": Reader(read_qwen2_vl, ("Qwen2VLForConditionalGeneration",))}

PRESETS: tuple = (
    Preset("qwen2.5-vl-7b", "qwen2_5_vl",
           {"V": 152064, "d": 3584, "d_ff": 18944, "L": 28, "h": 28, "h_kv": 4, "T_max": 128000, "d_v": 1280,
            "L_v": 32, "d_ff_v": 3420, "h_v": 16, "P_patch": 14, "C_img": 3, "N_img": 0},
           source="Qwen Team 2025 (Qwen2.5-VL Technical Report); Qwen/Qwen2.5-VL-7B-Instruct config.json "
                  "(tests/configs/vlm/qwen2.5-vl-7b-instruct.json)",
           note="8,292,166,656 parameters, the checkpoint's total (16,584,333,312 bytes of bfloat16 safetensors); "
                "published: 7B. Images: --set vision_run=true --set N_img=1 --set S_img=448 (256 tokens each)"),
)

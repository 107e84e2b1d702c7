"""Llama 4 with its vision encoder (Meta 2025, the Llama 4 Scout and Maverick model cards;
transformers' ``Llama4ForConditionalGeneration``, config ``llama4``): Llama 4's text decoder
(``families/llama4.py``), a ViT-style vision encoder with a 2-D rotary, a pixel shuffle and an
adapter MLP, and a linear projector (``blocks/llama4_vision.py``).

Images per sequence are the size N_img, each one tile of S_img × S_img pixels (the processor cuts
an image into such tiles and adds a global tile: count each tile as an image). A config is read
with N_img = 0 (text only, as the model's forward without ``pixel_values``).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields
from .llama4 import _ADDED, _HELP

_VISION = {"shuffle": 2, "adapter_in": 4096, "adapter_out": 4096, "vision_output_dim": 4096, "vision_runs": True}
_VISION_HELP = {
    "shuffle": "the pixel shuffle's side s (pixel_shuffle_ratio = 1/s): s × s patches make one image token",
    "adapter_in": "the vision adapter's first output width (projector_input_dim)",
    "adapter_out": "the vision adapter's second width (projector_output_dim)",
    "vision_output_dim": "the width the projector reads (vision_output_dim)",
    "vision_runs": "the adapter's and projector's widths chain, so an image can run (false: they are held and "
                   "N_img must be 0)",
}
_SIZES = ("d_v", "h_v", "L_v", "d_ff_v", "S_img", "P_patch", "C_img", "N_img")

FAMILIES = (
    Family(name="llama4", description="Llama 4 with its vision encoder: 2-D rotary ViT, pixel shuffle, adapter MLP "
           "and linear projector beside Llama 4's text decoder",
           flags=Extended(FLAGS, dict(gqa=True, moe=True, shared_expert="plain", router="sigmoid", topk_norm=False,
                                      qk_norm="head", qk_norm_after_rope=True, dense_ff=16384),
                          {**_ADDED, **_VISION}),
           sizes=SIZES + _SIZES, optional=OPTIONAL, build=partial(Ref("symgpt.families.blocks.llama4_vision", "build"),
                                                                  name="llama4"),
           flag_help=Extended(FLAG_HELP, added={**_HELP, **_VISION_HELP}), choices=Extended(CHOICES)),
)


def _read_vision(f: Fields, v: Fields, flags: dict, sizes: dict) -> None:
    """transformers' Llama4VisionConfig."""
    img, patch = v.cfg.get("image_size", 448), v.cfg.get("patch_size", 14)
    if not isinstance(img, int) or not isinstance(patch, int):
        raise SymgptError(f"{f.where}: a Llama 4 vision_config image_size or patch_size given as a pair is not "
                          "modelled")
    sizes.update(d_v=v.int("hidden_size", 768), L_v=v.int("num_hidden_layers", 34),
                 h_v=v.int("num_attention_heads", 16), d_ff_v=v.int("intermediate_size", 5632),
                 S_img=v.int("image_size", 448), P_patch=v.int("patch_size", 14), C_img=v.int("num_channels", 3),
                 N_img=0)
    ratio = v.fraction("pixel_shuffle_ratio", 0.5)
    if ratio.numerator != 1:
        raise SymgptError(f"{f.where}: pixel_shuffle_ratio {ratio} is not 1/s for a whole s: not modelled")
    s = ratio.denominator
    p_in, p_out = v.int("projector_input_dim", 4096), v.int("projector_output_dim", 4096)
    out = v.int("vision_output_dim", 7680)
    side, rest = divmod(sizes["S_img"], sizes["P_patch"])
    runs = (s * s * sizes["d_v"] == sizes["d_ff_v"] and p_in == p_out == out and not rest and side % s == 0
            and sizes["d_v"] % sizes["h_v"] == 0)
    flags.update(shuffle=s, adapter_in=p_in, adapter_out=p_out, vision_output_dim=out, vision_runs=runs)
    if v.str("hidden_act", "gelu") != "gelu":
        v.notes.append("the vision encoder's activation is exact GELU whatever hidden_act says (transformers' "
                       "Llama4VisionMLP hard-codes nn.GELU)")
    v.str("vision_feature_select_strategy", "default")
    v.silent("norm_eps", "initializer_range", "id2label", "label2id", "multi_modal_projector_bias",
             "projector_dropout", "attention_dropout", "rope_parameters", "model_type")
    if runs:
        t = (side // s) ** 2
        f.notes.append(f"images: N_img tiles per sequence (0 here; --set N_img=1 counts one), each "
                       f"{sizes['S_img']}×{sizes['S_img']} pixels: ({sizes['S_img']}/{sizes['P_patch']})² = "
                       f"{side * side} patches and a class token through the encoder, the class token dropped and "
                       f"{s}×{s} patches shuffled into one token: {t} tokens a tile; T counts them. The processor "
                       "cuts a large image into such tiles and adds a global tile: count every tile")
        f.notes.append("the vision encoder's 2-D rotary (queries and keys times a fixed complex table of each "
                       "patch's column and row) is elementwise: no parameters and no matmul FLOPs; the table is a "
                       "buffer transformers computes once, counted here as computed each forward (elementwise)")
    else:
        f.notes.append(f"this config cannot read an image: its vision adapter's widths do not chain ({s}²·"
                       f"hidden_size = {s * s * sizes['d_v']} against intermediate_size {sizes['d_ff_v']}, "
                       f"projector_input_dim {p_in}, projector_output_dim {p_out}, vision_output_dim {out}); "
                       "every parameter is counted, N_img must be 0")


def read(f: Fields):
    """transformers' Llama4Config: text_config (Llama4TextConfig), vision_config (Llama4VisionConfig)."""
    from .llama4 import read as read_text

    text = sub_fields(f, "text_config")
    mt = text.cfg.get("model_type", "llama4_text")
    if mt != "llama4_text":
        raise SymgptError(f"{f.where}: a Llama 4 text_config of model_type {str(mt)[:40]!r} is not modelled")
    _, flags, sizes = read_text(text)
    note_leftovers(f, text, "text_config")
    vision = sub_fields(f, "vision_config")
    vt = vision.cfg.get("model_type", "llama4_vision_model")
    if vt != "llama4_vision_model":
        raise SymgptError(f"{f.where}: a Llama 4 vision_config of model_type {str(vt)[:40]!r} is not modelled")
    _read_vision(f, vision, flags, sizes)
    note_leftovers(f, vision, "vision_config")
    if f.bool("tie_word_embeddings", False):
        raise SymgptError(f"{f.where}: Llama 4 with tied word embeddings is not modelled")
    f.silent("boi_token_index", "eoi_token_index", "image_token_index", "id2label", "label2id",
             "initializer_range")
    return "llama4", flags, sizes


READERS = {"llama4": Reader(read, ("Llama4ForConditionalGeneration",))}

PRESETS: tuple = ()

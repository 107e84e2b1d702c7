"""LFM3-VL (Liquid AI; transformers' ``Lfm3VlForConditionalGeneration``): the LFM3-VL vision
tower of gated short convolutions and grouped-query attention layers and an MLP projector (held,
``blocks/lfm3_vl.py``) beside LFM3's decoder. Counted: every parameter and the forward over token
ids; the cost of an image is not modelled.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields
from .lfm import ADDED, ADDED_HELP

_VISION = {"vision_conv_layers": 7, "vision_conv_kernel": 3, "vision_kv_heads": 8, "vision_temporal_patch": 2,
           "pixel_shuffle": 2, "projector_dim": 4096, "projector_bias": True}
_VISION_HELP = {"vision_conv_layers": "the tower's gated short-convolution layers (layer_types 'conv'); the other "
                                      "L_v - these are attention layers",
                "vision_conv_kernel": "the side k of the tower's depthwise k × k Conv2d (conv_kernel_size)",
                "vision_kv_heads": "the tower's key/value heads (num_key_value_heads)",
                "vision_temporal_patch": "frames per patch of the linear patch embedding (temporal_patch_size)",
                "pixel_shuffle": "the side m of the projector's m × m merge (spatial_merge_size)",
                "projector_dim": "the projector's hidden width P_h (projector_hidden_size)",
                "projector_bias": "the projector's linear maps have biases (projector_bias)"}

FAMILIES = (Family(name="lfm3_vl", description="LFM3-VL: a vision tower of short convolutions and attention "
                   "layers and an MLP projector (held: images are not modelled), LFM3's decoder",
                   flags=Extended(FLAGS, dict(gqa=True, qk_norm="head", tied=True, branch_norms=True,
                                              local_rope=True), {**ADDED, **_VISION}),
                   sizes=SIZES + ("d_conv", "d_v", "h_v", "L_v", "d_ff_v", "P_patch", "C_img", "N_img"),
                   optional=OPTIONAL, build=partial(Ref("symgpt.families.blocks.lfm3_vl", "build"), name="lfm3_vl"),
                   flag_help=Extended(FLAG_HELP, added={**ADDED_HELP, **_VISION_HELP}),
                   choices=Extended(CHOICES, added={"attn_gate": ("none", "sigmoid")})),)


def read(f: Fields):
    """transformers' Lfm3VlConfig: text_config (Lfm3Config), vision_config (Lfm3VlVisionConfig),
    the projector's fields."""
    from .lfm import READERS as LFM

    text = sub_fields(f, "text_config")
    if not text.cfg:
        raise SymgptError(f"{f.where}: an LFM3-VL config without its text_config is not modelled (give the "
                          "checkpoint's config.json, which has one)")
    mt = text.cfg.get("model_type", "lfm3")
    if mt != "lfm3":
        raise SymgptError(f"{f.where}: an LFM3-VL text_config of model_type {str(mt)[:40]!r} is not modelled")
    _, flags, sizes = LFM["lfm3"].read(text)
    note_leftovers(f, text, "text_config")
    v = sub_fields(f, "vision_config")
    vt = v.cfg.get("model_type", "lfm3_vl_vision")
    if vt != "lfm3_vl_vision":
        raise SymgptError(f"{f.where}: an LFM3-VL vision_config of model_type {str(vt)[:40]!r} is not modelled")
    L_v = v.int("num_hidden_layers", 14)
    types = v.cfg.get("layer_types")
    v.used.add("layer_types")
    if types is None:
        types = ["conv" if i < 2 or i % 2 else "full_attention" for i in range(L_v)]
    if not isinstance(types, list) or len(types) != L_v or not all(t in ("conv", "full_attention") for t in types):
        raise SymgptError(f"{v.where}: field 'layer_types' must list conv or full_attention for each of the "
                          f"{L_v} layers")
    sizes.update(d_v=v.int("hidden_size", 1024), L_v=L_v, h_v=v.int("num_attention_heads", 16),
                 d_ff_v=v.int("intermediate_size", 2560), P_patch=v.int("patch_size", 16),
                 C_img=v.int("in_channels", 3), N_img=0)
    flags.update(vision_conv_layers=types.count("conv"), vision_conv_kernel=v.int("conv_kernel_size", 3),
                 vision_kv_heads=v.int("num_key_value_heads", 8), vision_temporal_patch=v.int("temporal_patch_size", 2),
                 pixel_shuffle=v.int("spatial_merge_size", 2), projector_dim=f.int("projector_hidden_size", 4096),
                 projector_bias=f.bool("projector_bias", True), tied=f.bool("tie_word_embeddings", True))
    if sizes["d_v"] % sizes["h_v"] or sizes["h_v"] % flags["vision_kv_heads"]:
        raise SymgptError(f"{v.where}: hidden_size must be a multiple of num_attention_heads, num_attention_heads "
                          "of num_key_value_heads")
    v.silent("hidden_act", "norm_eps", "rope_parameters", "attention_dropout", "initializer_range", "id2label",
             "label2id")
    note_leftovers(f, v, "vision_config")
    f.notes.append("images are not modelled for LFM3-VL: the vision tower and projector are held, their parameters "
                   "counted; N_img must be 0")
    f.silent("image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id",
             "projector_hidden_act", "id2label", "label2id", "initializer_range")
    return "lfm3_vl", flags, sizes


READERS = {"lfm3_vl": Reader(read, ("Lfm3VlForConditionalGeneration",))}

PRESETS: tuple = ()

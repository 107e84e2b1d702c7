"""LFM2-VL (Liquid AI 2025; transformers' ``Lfm2VlForConditionalGeneration``): a SigLIP2 NaFlex
vision tower and a pixel-unshuffle MLP projector (held, ``blocks/lfm2_vl.py``) beside LFM2's
decoder of short convolutions and attention layers. Counted: every parameter and the forward over
token ids; the cost of an image is not modelled.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields
from .lfm import ADDED, ADDED_HELP

_VISION = {"vision_patches": 256, "pixel_shuffle": 2, "projector_dim": 2560, "projector_bias": True,
           "projector_norm": True, "vision_head": True}
_VISION_HELP = {"vision_patches": "the tower's learned position table rows (num_patches)",
                "pixel_shuffle": "the side s of the projector's pixel unshuffle (downsample_factor)",
                "projector_dim": "the projector's hidden width P_h (projector_hidden_size)",
                "projector_bias": "the projector's linear maps have biases (projector_bias)",
                "projector_norm": "a LayerNorm of s²·d_v before the projector (projector_use_layernorm)",
                "vision_head": "SigLIP2's attention-pooling head (vision_use_head), held"}

FAMILIES = (Family(name="lfm2_vl", description="LFM2-VL: a SigLIP2 NaFlex vision tower and an MLP projector (held: "
                   "images are not modelled), LFM2's decoder",
                   flags=Extended(FLAGS, dict(gqa=True, qk_norm="head", tied=True), {**ADDED, **_VISION}),
                   sizes=SIZES + ("d_conv", "d_v", "h_v", "L_v", "d_ff_v", "P_patch", "C_img", "N_img"),
                   optional=OPTIONAL, build=partial(Ref("symgpt.families.blocks.lfm2_vl", "build"), name="lfm2_vl"),
                   flag_help=Extended(FLAG_HELP, added={**ADDED_HELP, **_VISION_HELP}),
                   choices=Extended(CHOICES, added={"attn_gate": ("none", "sigmoid")})),)


def read(f: Fields):
    """transformers' Lfm2VlConfig: text_config (Lfm2Config), vision_config
    (Siglip2VisionConfig), the projector's fields."""
    from .lfm import READERS as LFM

    text = sub_fields(f, "text_config")
    if not text.cfg:
        raise SymgptError(f"{f.where}: an LFM2-VL config without its text_config is not modelled (give the "
                          "checkpoint's config.json, which has one)")
    mt = text.cfg.get("model_type", "lfm2")
    if mt != "lfm2":
        raise SymgptError(f"{f.where}: an LFM2-VL text_config of model_type {str(mt)[:40]!r} is not modelled")
    _, flags, sizes = LFM["lfm2"].read(text)
    note_leftovers(f, text, "text_config")
    v = sub_fields(f, "vision_config")
    vt = v.cfg.get("model_type", "siglip2_vision_model")
    if vt != "siglip2_vision_model":
        raise SymgptError(f"{f.where}: an LFM2-VL vision_config of model_type {str(vt)[:40]!r} is not modelled")
    sizes.update(d_v=v.int("hidden_size", 768), L_v=v.int("num_hidden_layers", 12),
                 h_v=v.int("num_attention_heads", 12), d_ff_v=v.int("intermediate_size", 3072),
                 P_patch=v.int("patch_size", 16), C_img=v.int("num_channels", 3), N_img=0)
    flags.update(vision_patches=v.int("num_patches", 256), vision_head=v.bool("vision_use_head", True),
                 pixel_shuffle=f.int("downsample_factor", 2), projector_dim=f.int("projector_hidden_size", 2560),
                 projector_bias=f.bool("projector_bias", True),
                 projector_norm=f.bool("projector_use_layernorm", True), tied=f.bool("tie_word_embeddings", True))
    v.silent("hidden_act", "layer_norm_eps", "attention_dropout", "initializer_range", "id2label", "label2id")
    note_leftovers(f, v, "vision_config")
    f.notes.append("images are not modelled for LFM2-VL: the vision tower and projector are held, their parameters "
                   "counted; N_img must be 0")
    f.silent("image_token_id", "projector_hidden_act", "id2label", "label2id", "initializer_range",
             "encoder_patch_size", "image_token_index", "max_image_tokens", "min_image_tokens", "max_tiles",
             "min_tiles", "downsample_factor", "do_image_splitting", "use_thumbnail", "tile_size",
             "max_pixels_tolerance", "use_image_special_tokens")
    return "lfm2_vl", flags, sizes


READERS = {"lfm2_vl": Reader(read, ("Lfm2VlForConditionalGeneration",))}

PRESETS: tuple = ()

"""Mistral 3 (Mistral AI 2025, Mistral Small 3.1; transformers' ``Mistral3ForConditionalGeneration``)
and LightOnOCR (LightOn 2025; ``LightOnOcrForConditionalGeneration``): Pixtral's vision tower
(Mistral AI 2024, "Pixtral 12B": RMSNorms, 2-D rotary attention, a gated MLP), a projector with a
patch merger (m × m patches into one token), and a Mistral (Mistral 3) or Qwen3 (LightOnOCR) text
decoder (``blocks/pixtral.py`` builds them).

Images: N_img square images of S_img × S_img pixels (S_img is read as the config's image_size,
the longest side Pixtral's processor resizes to; ``--set S_img=...`` counts a smaller one).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, unread_layers_note
from .vlm import VISION_CHOICES, VISION_FLAGS, VISION_HELP, VISION_SIZES, _read_towers

BUILD = Ref("symgpt.families.blocks.pixtral", "build")


def _family(name, description, decoder_changes, prefixes):
    vision = {**VISION_FLAGS, "vlm_projector": "pixtral", "vision_tower": "pixtral", "vision_activation": "gelu",
              "vision_head": False, "drop_cls": False, "projector_bias": False, "merge_size": 2}
    return Family(name=name, description=description, flags=Extended(FLAGS, decoder_changes, vision),
                  sizes=SIZES + VISION_SIZES, optional=OPTIONAL, build=partial(BUILD, name=name, prefixes=prefixes),
                  flag_help=Extended(FLAG_HELP, added={**VISION_HELP, "merge_size": "the side m of the patch "
                                                       "merger's m × m blocks (spatial_merge_size)"}),
                  choices=Extended(CHOICES, added={**VISION_CHOICES, "vlm_projector": ("pixtral",),
                                                   "vision_tower": ("pixtral",)}))


FAMILIES = (_family("mistral3", "Mistral 3: Pixtral vision tower, patch-merger projector, Mistral text decoder",
                    dict(gqa=True), ("vision_tower", "multi_modal_projector")),
            _family("lighton_ocr", "LightOnOCR: Pixtral vision tower, patch-merger projector, Qwen3 text decoder",
                    dict(gqa=True, qk_norm="head"), ("vision_encoder", "vision_projection")))


def read_pixtral(v: Fields, flags: dict, sizes: dict) -> None:
    """transformers' PixtralVisionConfig (head_dim is recomputed there as hidden_size // heads)."""
    for key in ("image_size", "patch_size"):
        if isinstance(v.cfg.get(key), list):
            raise SymgptError(f"{v.where}: {key} given as a list is not modelled for Pixtral")
    sizes.update(d_v=v.int("hidden_size", 1024), L_v=v.int("num_hidden_layers", 24),
                 h_v=v.int("num_attention_heads", 16), d_ff_v=v.int("intermediate_size", 4096),
                 S_img=v.int("image_size", 1024), P_patch=v.int("patch_size", 16), C_img=v.int("num_channels", 3))
    if sizes["d_v"] % sizes["h_v"]:
        raise SymgptError(f"{v.where}: hidden_size {sizes['d_v']} is not a multiple of num_attention_heads "
                          f"{sizes['h_v']}")
    rope = v.cfg.get("rope_parameters") or {}
    if isinstance(rope, dict) and rope.get("rope_type", "axial") not in ("axial", "default"):
        raise SymgptError(f"{v.where}: rope_type {str(rope.get('rope_type'))[:30]!r} is not Pixtral's axial rotary")
    flags["vision_activation"] = v.activation("hidden_act", "gelu")
    v.silent("attention_dropout", "initializer_range", "head_dim", "rope_parameters", "rope_theta", "vocab_size",
             "id2label", "label2id")


def _text(reader):
    def read(t: Fields):
        _, flags, sizes = reader(t)
        return flags, sizes
    return read


def _read(f: Fields, name: str, what: str, decoder: tuple):
    for key in ("text_config", "vision_config"):
        if not isinstance(f.cfg.get(key), dict):
            raise SymgptError(f"{f.where}: a {what} config without its {key} is not modelled (give the checkpoint's "
                              "config.json, which has one)")
    flags, sizes = _read_towers(f, what, decoder, ("pixtral", "Pixtral", read_pixtral))
    m = f.int("spatial_merge_size", 2)
    if m < 1:
        raise SymgptError(f"{f.where}: spatial_merge_size must be at least 1")
    flags.update(vlm_projector="pixtral", vision_tower="pixtral", merge_size=m,
                 tied=f.bool("tie_word_embeddings", True))
    if name == "mistral3":
        layer = f.get("vision_feature_layer", -1)[0]
        if not isinstance(layer, int) or isinstance(layer, bool):
            raise SymgptError(f"{f.where}: vision_feature_layer as a list (features of several layers concatenated) "
                              "is not modelled")
        flags.update(projector_bias=f.bool("multimodal_projector_bias", False),
                     projector_activation=f.activation("projector_hidden_act", "gelu"))
        f.notes.append(f"the vision tower runs all {sizes['L_v']} layers (transformers asks it for every hidden state) "
                       f"and the projector reads hidden state {layer}: every layer is counted")
        if (unread := unread_layers_note(sizes["L_v"], layer)) is not None:
            f.notes.append(unread)
    else:
        flags.update(projector_bias=False, projector_activation="gelu")  # LightOnOcrMultiModalProjector: nn.GELU()
    side, rest = divmod(sizes["S_img"], sizes["P_patch"])
    if rest or side % m:
        f.notes.append(f"this config cannot read an S_img × S_img image: {sizes['S_img']}/{sizes['P_patch']} patches "
                       f"a side do not fall into the merger's {m}×{m} blocks; counted with no images")
    else:
        f.notes.append(f"images: N_img per sequence (0 here; --set N_img=4 counts four), each square, "
                       f"{sizes['S_img']}×{sizes['S_img']} pixels (image_size, the longest side the processor "
                       f"resizes to; --set S_img=... for smaller): ({sizes['S_img']}/{sizes['P_patch']})² = "
                       f"{side * side} patches merged {m}×{m} to {side * side // (m * m)} tokens; T counts those "
                       "image tokens. Every image of the batch is packed into one sequence of the tower: its "
                       "attention scores are counted over the whole packed sequence, as transformers' eager and SDPA "
                       "attention compute them (a block-diagonal mask)")
    f.silent("image_token_index", "image_token_id", "id2label", "label2id", "initializer_range", "pad_token_id")
    sizes["N_img"] = 0
    return name, flags, sizes


def _read_mistral3(f: Fields):
    from .mistral import read

    return _read(f, "mistral3", "Mistral 3", ("mistral", "Mistral", _text(read)))


def _read_lighton(f: Fields):
    from .qwen3 import read

    return _read(f, "lighton_ocr", "LightOnOCR", ("qwen3", "Qwen3", _text(read)))


READERS = {"mistral3": Reader(_read_mistral3, ("Mistral3ForConditionalGeneration",)),
           "lighton_ocr": Reader(_read_lighton, ("LightOnOcrForConditionalGeneration",))}

PRESETS: tuple = ()

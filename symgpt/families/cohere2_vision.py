"""Command A Vision (Cohere 2025; transformers' ``Cohere2VisionForConditionalGeneration``): SigLIP's
vision tower, a pixel-shuffle projector with a SwiGLU (``blocks/cohere2_vision.py``) and a Cohere2
text decoder (Command R7B's block).

Images: N_img per sequence, each an S_img × S_img image or crop read whole (the processor's tiling
of a large image into crops and a thumbnail is a count of crops; count each as an image).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .cohere import COHERE_FLAGS
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader
from .vlm import VISION_CHOICES, VISION_FLAGS, VISION_HELP, VISION_SIZES, _read_towers, read_siglip

FAMILIES = (Family(
    name="cohere2_vision", description="Command A Vision: SigLIP vision tower, pixel shuffle and SwiGLU projector, "
    "Cohere2 text decoder",
    flags=Extended(FLAGS, dict(window=True, full_every=4, nope_full=True, **COHERE_FLAGS),
                   {**VISION_FLAGS, "vlm_projector": "cohere2_vision", "drop_cls": False, "pixel_shuffle": 2,
                    "align_dim": 36864}),
    sizes=SIZES + VISION_SIZES, optional=OPTIONAL,
    build=partial(Ref("symgpt.families.blocks.cohere2_vision", "build"), name="cohere2_vision"),
    flag_help=Extended(FLAG_HELP, added={**VISION_HELP, "pixel_shuffle": "the side s of the projector's pixel "
                                         "shuffle (downsample_factor)",
                                         "align_dim": "the projector's inner width I (alignment_intermediate_size): "
                                         "linear_1 to I, SwiGLU to I/2"}),
    choices=Extended(CHOICES, added={**VISION_CHOICES, "vlm_projector": ("cohere2_vision",)})),)


def _cohere2(t: Fields):
    from .cohere import read_cohere2

    _, flags, sizes = read_cohere2(t)
    return flags, sizes


def read(f: Fields):
    """transformers' Cohere2VisionConfig: text_config (Cohere2Config), vision_config
    (SiglipVisionConfig), downsample_factor, alignment_intermediate_size."""
    for key in ("text_config", "vision_config"):
        if not isinstance(f.cfg.get(key), dict):
            raise SymgptError(f"{f.where}: a Command A Vision config without its {key} is not modelled (give the "
                              "checkpoint's config.json, which has one)")
    flags, sizes = _read_towers(f, "Command A Vision", ("cohere2", "Cohere2", _cohere2),
                                ("siglip_vision_model", "SigLIP", read_siglip))
    s = f.int("downsample_factor", 2)
    inner = f.int("alignment_intermediate_size", 36864)
    if s < 1 or inner % 2:
        raise SymgptError(f"{f.where}: downsample_factor must be at least 1 and alignment_intermediate_size even")
    flags.update(vlm_projector="cohere2_vision", vision_tower="siglip", drop_cls=False, pixel_shuffle=s,
                 align_dim=inner, tied=f.bool("tie_word_embeddings", True))
    side, rest = divmod(sizes["S_img"], sizes["P_patch"])
    if rest or side % s:
        f.notes.append(f"this config cannot read an image: {sizes['S_img']}/{sizes['P_patch']} patches a side do "
                       f"not fall into {s}×{s} blocks (the projector's pixel shuffle); counted with no images")
    else:
        f.notes.append(f"images: N_img per sequence (0 here; --set N_img=4 counts four), each an {sizes['S_img']}×"
                       f"{sizes['S_img']} image or crop read whole: ({sizes['S_img']}/{sizes['P_patch']})² = "
                       f"{side * side} patches, pixel-shuffled {s}×{s} to {side * side // (s * s)} tokens; T counts "
                       "those image tokens. The processor's tiling into crops and a thumbnail is not derived: count "
                       "each crop as an image")
    f.silent("image_token_id", "id2label", "label2id", "initializer_range")
    sizes["N_img"] = 0
    return "cohere2_vision", flags, sizes


READERS = {"cohere2_vision": Reader(read, ("Cohere2VisionForConditionalGeneration",))}

PRESETS: tuple = ()

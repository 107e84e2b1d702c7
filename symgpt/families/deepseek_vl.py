"""DeepSeek-VL (Lu et al. 2024, "DeepSeek-VL: Towards Real-World Vision-Language Understanding";
transformers' ``DeepseekVLForConditionalGeneration``): SigLIP's vision tower, a 2-layer MLP aligner
(``blocks/deepseek_vl.py``) and a Llama text decoder. Images: N_img per sequence, each resized to
S_img × S_img, (S_img/P_patch)² tokens.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader
from .vlm import VISION_CHOICES, VISION_FLAGS, VISION_HELP, VISION_SIZES, _llama, _read_towers, read_siglip

FAMILIES = (Family(name="deepseek_vl", description="DeepSeek-VL: SigLIP vision tower, 2-layer MLP aligner, Llama text "
                   "decoder",
                   flags=Extended(FLAGS, {}, {**VISION_FLAGS, "vlm_projector": "deepseek_vl", "drop_cls": False}),
                   sizes=SIZES + VISION_SIZES, optional=OPTIONAL,
                   build=partial(Ref("symgpt.families.blocks.deepseek_vl", "build"), name="deepseek_vl"),
                   flag_help=Extended(FLAG_HELP, added=VISION_HELP),
                   choices=Extended(CHOICES, added={**VISION_CHOICES, "vlm_projector": ("deepseek_vl",)})),)


def read(f: Fields):
    """transformers' DeepseekVLConfig: text_config (LlamaConfig), vision_config (SiglipVisionConfig)."""
    for key in ("text_config", "vision_config"):
        if not isinstance(f.cfg.get(key), dict):
            raise SymgptError(f"{f.where}: a DeepSeek-VL config without its {key} is not modelled (give the "
                              "checkpoint's config.json, which has one)")
    flags, sizes = _read_towers(f, "DeepSeek-VL", ("llama", "Llama", _llama),
                                ("siglip_vision_model", "SigLIP", read_siglip))
    flags.update(vlm_projector="deepseek_vl", vision_tower="siglip", drop_cls=False,
                 tied=f.bool("tie_word_embeddings", True))
    side, rest = divmod(sizes["S_img"], sizes["P_patch"])
    if rest:
        raise SymgptError(f"{f.where}: vision_config image_size {sizes['S_img']} is not a multiple of patch_size "
                          f"{sizes['P_patch']}")
    f.notes.append(f"images: N_img per sequence (0 here; --set N_img=4 counts four), each resized to "
                   f"{sizes['S_img']}×{sizes['S_img']}: ({sizes['S_img']}/{sizes['P_patch']})² = {side * side} "
                   "tokens; T counts those image tokens")
    f.silent("image_token_id", "id2label", "label2id", "initializer_range")
    sizes["N_img"] = 0
    return "deepseek_vl", flags, sizes


READERS = {"deepseek_vl": Reader(read, ("DeepseekVLForConditionalGeneration",))}

PRESETS: tuple = ()

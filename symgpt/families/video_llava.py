"""Video-LLaVA (Lin et al. 2023, "Video-LLaVA: Learning United Visual Representation by Alignment
Before Projection"; transformers' ``VideoLlavaForConditionalGeneration``): LLaVA's CLIP image
tower, 2-layer MLP projector and Llama decoder, and a second CLIP tower for video frames
(``blocks/video_llava.py``). Images are priced as LLaVA's; videos are not modelled (the video
tower's parameters are counted, held).
"""

from __future__ import annotations

from functools import partial

from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader
from .vlm import VISION_CHOICES, VISION_FLAGS, VISION_HELP, VISION_SIZES, read_llava

FAMILIES = (Family(name="video_llava", description="Video-LLaVA: LLaVA's CLIP image tower, projector and Llama "
                   "decoder, and a CLIP video tower (held: videos are not modelled)",
                   flags=Extended(FLAGS, {}, {**VISION_FLAGS, "vlm_projector": "llava", "vision_tower": "clip",
                                              "vision_activation": "gelu"}),
                   sizes=SIZES + VISION_SIZES, optional=OPTIONAL,
                   build=partial(Ref("symgpt.families.blocks.video_llava", "build"), name="video_llava"),
                   flag_help=Extended(FLAG_HELP, added=VISION_HELP),
                   choices=Extended(CHOICES, added=VISION_CHOICES)),)


def read(f: Fields):
    """transformers' VideoLlavaConfig: LlavaConfig's fields (text_config, vision_config, the
    projector's) and the video's token counts; the video tower shares vision_config."""
    _, flags, sizes = read_llava(f)
    f.notes.append("videos are not modelled for Video-LLaVA: the video tower (a second CLIP tower of vision_config) "
                   "is held, its parameters counted")
    f.silent("video_token_index", "video_token_id", "video_seq_length")
    return "video_llava", flags, sizes


READERS = {"video_llava": Reader(read, ("VideoLlavaForConditionalGeneration",))}

PRESETS: tuple = ()

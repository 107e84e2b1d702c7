"""DeepSeek-VL (Lu et al. 2024; transformers' ``DeepseekVLForConditionalGeneration``): SigLIP's
vision tower (``blocks/vlm.py``, its attention-pooling head run and unused when vision_use_head)
and ``DeepseekVLAligner`` (linear1 d_v -> d, GELU, linear2 d -> d, with biases) beside a Llama
decoder. Tokens per image: every patch, t = (S_img/P_patch)².
"""

from __future__ import annotations

from functools import partial

from ... import ops
from ...core.symbols import N_img, P_patch, S_img, T, d, d_v
from ...graph import roles as R
from .encoder_layers import activation
from .vlm import PATCHES, vision_tower, with_encoder

PREFIXES = ("vision_model/", "aligner/", "merge_image_tokens")


def _vision(g, x, flags):
    feats = vision_tower(g, flags, "vision_model")                                            # (B·N, n, d_v)
    feats = g.op("aligner/linear1", ops.Linear(d_v, d, bias=True), feats, role=R.VISION_PROJECTOR, label="linear 1")
    feats = g.op("aligner/activation", activation("gelu"), feats, role=R.VISION_ACT, label="GELU")
    feats = g.op("aligner/linear2", ops.Linear(d, d, bias=True), feats, role=R.VISION_PROJECTOR, label="linear 2")
    g.require("integer", S_img / P_patch, "the image side S_img must be a multiple of the patch side P_patch",
              id="patches_divide_image")
    g.require("le", N_img * PATCHES - T, "T must count the N_img images' tokens (N_img·t positions)",
              id="image_tokens_within_sequence")
    return g.op("merge_image_tokens", ops.MergeImageTokens(), x, feats, role=R.IMAGE_MERGE,
                label="merge image features")                                                # (B, T, d)


def build(flags, bound, name="deepseek_vl", labels=None):
    return with_encoder(flags, bound, name, labels, partial(_vision, flags=flags), PREFIXES)

"""DeepSeek-VL (Lu et al. 2024; transformers' ``DeepseekVLForConditionalGeneration``): SigLIP's
vision tower (``blocks/vlm.py``, its attention-pooling head run and unused when vision_use_head)
and ``DeepseekVLAligner`` (linear1 d_v -> d, GELU, linear2 d -> d, with biases) beside a Llama
decoder. Tokens per image: every patch, t = (S_img/P_patch)².
"""

from __future__ import annotations

from functools import partial

import sympy

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


def _vision_hybrid(g, x, flags):
    """DeepSeek-VL hybrid (``DeepseekVLHybridModel``): the SigLIP tower, a SAM high-resolution
    encoder with a second neck and a convolutional projection (O -> 2O -> 4O, 3×3 stride 2, no
    bias), a learned scalar (high_res_vision_alpha) and the aligner (vision_proj d_v -> d/2,
    high_res_vision_proj 4O -> d/2, proj d -> d, with biases); everything but the tower held."""
    from ...core.symbols import B
    from .got_ocr2 import _held, held_neck, held_sam

    vision_tower(g, flags, "vision_model")
    sam = {k[4:]: sympy.Integer(v) if not isinstance(v, bool) else v for k, v in flags.items()
           if k.startswith("sam_")}
    out = sam["out"]
    held_sam(g, "high_res_vision_model/vision_encoder", sam)
    held_neck(g, "high_res_vision_neck", sam["dim"], out)
    _held(g, "high_res_vision_proj/conv1", ops.Linear(9 * out, 2 * out, bias=False), (B, 9 * out), "conv 3×3")
    _held(g, "high_res_vision_proj/conv2", ops.Linear(18 * out, 4 * out, bias=False), (B, 18 * out), "conv 3×3")
    _held(g, "high_res_vision_alpha", ops.AddPositions(sympy.Integer(1), sympy.Integer(1)),
          (B, sympy.Integer(1), sympy.Integer(1)), "alpha")
    _held(g, "aligner/vision_proj", ops.Linear(d_v, d / 2, bias=True), (B, d_v), "vision_proj")
    _held(g, "aligner/high_res_vision_proj", ops.Linear(4 * out, d / 2, bias=True), (B, 4 * out),
          "high_res_vision_proj")
    _held(g, "aligner/proj", ops.Linear(d, d, bias=True), (B, d), "proj")
    g.require("integer", d / 2, "the decoder width d must be even (the aligner's two halves)", id="aligner_halves")
    g.require("le", N_img, "images are not modelled for DeepSeek-VL hybrid (a SAM high-resolution encoder beside "
              "SigLIP): N_img must be 0", id="images_not_modelled")
    return x


def build_hybrid(flags, bound, name="deepseek_vl_hybrid", labels=None):
    return with_encoder(flags, bound, name, labels, partial(_vision_hybrid, flags=flags),
                        PREFIXES + ("high_res_vision",))

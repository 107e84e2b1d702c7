"""Command A Vision (Cohere 2025; transformers' ``Cohere2VisionForConditionalGeneration``): SigLIP's
vision tower (``blocks/vlm.py``, with its attention-pooling head when vision_use_head, run and
unused), then ``Cohere2VisionMultiModalProjector``: a pixel shuffle of s × s patches into one
token of s²·d_v features, ``linear_1`` (s²·d_v -> I, bias), a SwiGLU over its two halves
(``x, gate = chunk(2)``; SiLU(gate)·x) and ``linear_2`` (I/2 -> d, bias), beside a Cohere2
decoder. Tokens per image: t = (S_img/P_patch)² / s².
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import N_img, P_patch, S_img, T, d, d_v
from ...graph import roles as R
from .vlm import PATCHES, VISION_PREFIXES, vision_tower, with_encoder


def tokens_per_image(flags):
    return PATCHES / sympy.Integer(flags["pixel_shuffle"]) ** 2


def _vision(g, x, flags):
    s, inner = sympy.Integer(flags["pixel_shuffle"]), sympy.Integer(flags["align_dim"])
    p = "multi_modal_projector"
    feats = vision_tower(g, flags)                                                            # (B·N, n, d_v)
    feats = g.op(f"{p}/pixel_shuffle", ops.PixelShuffle(s), feats, role=R.VISION_POOL,
                 label=f"pixel shuffle {s}×{s}")                                               # (B·N, t, s²·d_v)
    h = g.op(f"{p}/linear_1", ops.Linear(s * s * d_v, inner, bias=True), feats, role=R.VISION_PROJECTOR,
             label="linear 1")                                                                # (B·N, t, I)
    half = inner / 2
    up = g.op(f"{p}/x", ops.Slice(sympy.Integer(0), half), h, role=R.VISION_PROJECTOR, label="x half")
    gate = g.op(f"{p}/gate", ops.Slice(half, half), h, role=R.VISION_PROJECTOR, label="gate half")
    gate = g.op(f"{p}/act", ops.SiLU(), gate, role=R.VISION_ACT, label="SiLU(gate)")
    h = g.op(f"{p}/mul", ops.Mul(), gate, up, role=R.VISION_ACT, label="SiLU(gate)·x")
    feats = g.op(f"{p}/linear_2", ops.Linear(half, d, bias=True), h, role=R.VISION_PROJECTOR,
                 label="linear 2")                                                            # (B·N, t, d)
    g.require("le", N_img * sympy.frac(S_img / P_patch / s), "an image's patch grid side S_img/P_patch must be a "
              f"multiple of the pixel shuffle's side {s} (downsample_factor)", id="patches_divide_image")
    g.require("le", N_img * tokens_per_image(flags) - T, "T must count the N_img images' tokens (N_img·t "
              "positions)", id="image_tokens_within_sequence")
    return g.op("merge_image_tokens", ops.MergeImageTokens(), x, feats, role=R.IMAGE_MERGE,
                label="merge image features")                                                # (B, T, d)


def build(flags, bound, name="cohere2_vision", labels=None):
    return with_encoder(flags, bound, name, labels, partial(_vision, flags=flags), VISION_PREFIXES)

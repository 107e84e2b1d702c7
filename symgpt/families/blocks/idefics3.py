"""Idefics3 and SmolVLM (``Idefics3Model``): the SigLIP-style vision tower of ``blocks/vlm.py``
(``Idefics3VisionTransformer``: the same modules as ``SiglipVisionTransformer`` without its
pooling head), then ``Idefics3Connector``: a pixel shuffle, each s × s block of the
(S_img/P_patch)² patch grid one token of s²·d_v features, and one linear map to d without bias
(``Idefics3SimpleMLP``). Tokens per image: t = (S_img/P_patch)² / s².

The tower's attention reads a patch mask (images padded to a common size); with every image
whole, as counted here, it masks nothing and adds no multiply-adds.
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import N_img, P_patch, S_img, T, d, d_v
from ...graph import roles as R
from .vlm import PATCHES, vision_tower, with_encoder

PREFIXES = ("vision_model/", "connector/", "merge_image_tokens")


def tokens_per_image(flags):
    return PATCHES / sympy.Integer(flags["pixel_shuffle"]) ** 2


def _vision(g, x, flags):
    s = sympy.Integer(flags["pixel_shuffle"])
    feats = vision_tower(g, flags, "vision_model")                                                         # (B·N, n, d_v)
    feats = g.op("connector/pixel_shuffle", ops.PixelShuffle(s), feats, role=R.VISION_POOL,
                 label=f"pixel shuffle {s}×{s}")                                               # (B·N, n/s², s²·d_v)
    feats = g.op("connector/modality_projection/proj", ops.Linear(s * s * d_v, d, bias=False), feats,
                 role=R.VISION_PROJECTOR, label="projection")                                 # (B·N, t, d)
    # a config whose grid the shuffle cannot split still counts its parameters: refused only with images
    g.require("le", N_img * sympy.frac(S_img / P_patch / s), "an image's patch grid side S_img/P_patch must be a "
              f"multiple of the pixel shuffle's side {s} (the connector's scale_factor)", id="patches_divide_image")
    g.require("le", N_img * tokens_per_image(flags) - T, "T must count the N_img images' tokens (N_img·t "
              "positions)", id="image_tokens_within_sequence")
    return g.op("merge_image_tokens", ops.MergeImageTokens(), x, feats, role=R.IMAGE_MERGE,
                label="merge image features")                                                # (B, T, d)


def build(flags, bound, name="idefics3", labels=None):
    return with_encoder(flags, bound, name, labels, partial(_vision, flags=flags), PREFIXES)

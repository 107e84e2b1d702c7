"""Video-LLaVA (Lin et al. 2023; transformers' ``VideoLlavaForConditionalGeneration``): LLaVA's
CLIP tower (``image_tower``), projector and Llama decoder, and a second CLIP tower of the same
configuration for video frames (``video_tower``), held: videos are not modelled, its parameters
are counted. Images go as LLaVA's do (``blocks/vlm.py``): t = (S_img/P_patch)² tokens with the
class token dropped (vision_feature_select_strategy 'default'), + 1 with 'full'.
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, C_img, L_v, N_img, P_patch, S_img, T, d_ff_v, d_v
from ...graph import roles as R
from .vlm import PATCHES, projector, tokens_per_image, vision_tower, with_encoder

PREFIXES = ("image_tower/", "video_tower/", "multi_modal_projector/", "merge_image_tokens")


def _held(g, path, op, shape, label):
    g.op(path, ops.Held(op, shape), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def held_clip_tower(g, prefix):
    """``CLIPVisionModel``'s parameters, declared held (not run)."""
    n = PATCHES + 1
    e = f"{prefix}/vision_model/embeddings"
    _held(g, f"{e}/patch_embedding", ops.Conv2d(C_img, d_v, P_patch, bias=False), (B, C_img, S_img, S_img),
          "patches (conv P×P, no bias)")
    _held(g, f"{e}/class_embedding", ops.ClassToken(d_v), (B, PATCHES, d_v), "class token")
    _held(g, f"{e}/position_embedding", ops.AddPositions(n, d_v), (B, n, d_v), "positions")
    _held(g, f"{prefix}/vision_model/pre_layrnorm", ops.LayerNorm(d_v), (B, d_v), "pre-LN")
    with g.repeat(f"{prefix}/vision_model/encoder/layers", L_v, label="video tower layer (held)", role=R.STACK,
                  length=sympy.Integer(1)):
        for name in ("layer_norm1", "layer_norm2"):
            _held(g, name, ops.LayerNorm(d_v), (B, d_v), name)
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            _held(g, f"self_attn/{name}", ops.Linear(d_v, d_v, bias=True), (B, d_v), name)
        _held(g, "mlp/fc1", ops.Linear(d_v, d_ff_v, bias=True), (B, d_v), "fc1")
        _held(g, "mlp/fc2", ops.Linear(d_ff_v, d_v, bias=True), (B, d_ff_v), "fc2")
    _held(g, f"{prefix}/vision_model/post_layernorm", ops.LayerNorm(d_v), (B, d_v), "post-LN")


def _vision(g, x, flags):
    held_clip_tower(g, "video_tower")
    feats = projector(g, flags, vision_tower(g, flags, "image_tower/vision_model"))
    g.require("integer", S_img / P_patch, "the image side S_img must be a multiple of the patch side P_patch",
              id="patches_divide_image")
    g.require("le", N_img * tokens_per_image(flags) - T, "T must count the N_img images' tokens (N_img·t "
              "positions)", id="image_tokens_within_sequence")
    return g.op("merge_image_tokens", ops.MergeImageTokens(), x, feats, role=R.IMAGE_MERGE,
                label="merge image features")                                                # (B, T, d)


def build(flags, bound, name="video_llava", labels=None):
    return with_encoder(flags, bound, name, labels, partial(_vision, flags=flags), PREFIXES)

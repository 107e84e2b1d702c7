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
    # tests/test_activations_vlm.py: ids computed per image, the merge a masked scatter
    feats = vision_tower(g, flags, "vision_model", lookup="per_image")                        # (B·N, n, d_v)
    feats = g.op("connector/pixel_shuffle", ops.PixelShuffle(s), feats, role=R.VISION_POOL,
                 label=f"pixel shuffle {s}×{s}")                                   # (B·N, n/s², s²·d_v)
    feats = g.op("connector/modality_projection/proj", ops.Linear(s * s * d_v, d, bias=False), feats,
                 role=R.VISION_PROJECTOR, label="projection")                                 # (B·N, t, d)
    # a config whose grid the shuffle cannot split still counts its parameters: refused only with images
    g.require("le", N_img * sympy.frac(S_img / P_patch / s), "an image's patch grid side S_img/P_patch must be a "
              f"multiple of the pixel shuffle's side {s} (the connector's scale_factor)", id="patches_divide_image")
    g.require("le", N_img * tokens_per_image(flags) - T, "T must count the N_img images' tokens (N_img·t "
              "positions)", id="image_tokens_within_sequence")
    return g.op("merge_image_tokens", ops.ScatterImageTokens(N_img), x, feats, role=R.IMAGE_MERGE,
                label="merge image features")                                                # (B, T, d)


def build(flags, bound, name="idefics3", labels=None):
    return with_encoder(flags, bound, name, labels, partial(_vision, flags=flags), PREFIXES)


def _held(g, path, op, shape, label):
    g.op(path, ops.Held(op, shape), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def _vision_idefics2(g, x, flags):
    """Idefics2: the tower (Idefics3's) and ``Idefics2Connector``, held: a gated MLP d_v -> d_ff -> d
    (``modality_projection``, no biases) and the perceiver resampler (r latents of d; per layer
    RMSNorms of latents and context, attention with h_r heads of d_r and h_r,kv key/value heads, an
    RMSNorm and a gated MLP of 4d; a final RMSNorm)."""
    from ...core.symbols import B, d_ff

    vision_tower(g, flags, "vision_model")
    r, depth = sympy.Integer(flags["resampler_latents"]), sympy.Integer(flags["resampler_depth"])
    hr, dr, hkv = (sympy.Integer(flags[k]) for k in ("resampler_heads", "resampler_head_dim", "resampler_kv_heads"))
    p = "connector/modality_projection"
    for n in ("gate_proj", "up_proj"):
        _held(g, f"{p}/{n}", ops.Linear(d_v, d_ff, bias=False), (B, d_v), n)
    _held(g, f"{p}/down_proj", ops.Linear(d_ff, d, bias=False), (B, d_ff), "down_proj")
    p = "connector/perceiver_resampler"
    _held(g, f"{p}/latents", ops.AddPositions(r, d), (B, r, d), "latents")
    with g.repeat(f"{p}/layers", depth, label="perceiver layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("input_latents_norm", "input_context_norm", "post_attention_layernorm"):
            _held(g, n, ops.RMSNorm(d), (B, d), n)
        _held(g, "self_attn/q_proj", ops.Linear(d, hr * dr, bias=False), (B, d), "q_proj")
        for n in ("k_proj", "v_proj"):
            _held(g, f"self_attn/{n}", ops.Linear(d, hkv * dr, bias=False), (B, d), n)
        _held(g, "self_attn/o_proj", ops.Linear(hr * dr, d, bias=False), (B, hr * dr), "o_proj")
        for n in ("gate_proj", "up_proj"):
            _held(g, f"mlp/{n}", ops.Linear(d, 4 * d, bias=False), (B, d), n)
        _held(g, "mlp/down_proj", ops.Linear(4 * d, d, bias=False), (B, 4 * d), "down_proj")
    _held(g, f"{p}/norm", ops.RMSNorm(d), (B, d), "norm")
    g.require("le", N_img, "images are not modelled for Idefics2 (its perceiver resampler is held): N_img must be 0",
              id="images_not_modelled")
    return x


def build_idefics2(flags, bound, name="idefics2", labels=None):
    return with_encoder(flags, bound, name, labels, partial(_vision_idefics2, flags=flags), PREFIXES)


def _vision_aria(g, x, flags):
    """Aria (``AriaModel``): Idefics3's vision tower and ``AriaProjector``, held: Q learned queries
    of d_v, a cross-attention (q/k/v projections without bias, ``nn.MultiheadAttention`` with its
    in- and out-projections, a linear map, two LayerNorms), a LayerNorm and an MLP d_v -> d -> d
    without biases."""
    from ...core.symbols import B

    vision_tower(g, flags, "vision_tower")
    q = sympy.Integer(flags["projector_queries"])
    p, c = "multi_modal_projector", "multi_modal_projector/cross_attn"
    _held(g, f"{p}/query", ops.AddPositions(q, d_v), (B, q, d_v), "queries")
    for n in ("q_proj", "k_proj", "v_proj"):
        _held(g, f"{c}/{n}", ops.Linear(d_v, d_v, bias=False), (B, d_v), n)
    _held(g, f"{c}/multihead_attn/in_proj", ops.Linear(d_v, 3 * d_v, bias=True), (B, d_v), "in_proj")
    _held(g, f"{c}/multihead_attn/out_proj", ops.Linear(d_v, d_v, bias=True), (B, d_v), "out_proj")
    _held(g, f"{c}/linear", ops.Linear(d_v, d_v, bias=True), (B, d_v), "linear")
    for n in (f"{c}/layer_norm", f"{c}/layer_norm_kv", f"{p}/layer_norm"):
        _held(g, n, ops.LayerNorm(d_v), (B, d_v), n.rsplit("/", 1)[-1])
    _held(g, f"{p}/feed_forward/linear_in", ops.Linear(d_v, d, bias=False), (B, d_v), "linear_in")
    _held(g, f"{p}/feed_forward/linear_out", ops.Linear(d, d, bias=False), (B, d), "linear_out")
    g.require("le", N_img, "images are not modelled for Aria (its cross-attention projector is held): N_img must "
              "be 0", id="images_not_modelled")
    return x


def build_aria(flags, bound, name="aria", labels=None):
    return with_encoder(flags, bound, name, labels, partial(_vision_aria, flags=flags),
                        ("vision_tower/", "multi_modal_projector/"))

"""Kosmos-2 (Peng et al. 2023, "Kosmos-2: Grounding Multimodal Large Language Models to the World";
transformers' ``Kosmos2ForConditionalGeneration``), declared with transformers' module names.

The vision model is CLIP's (``blocks/vlm.py``'s tower: class token, pre-LayerNorm; the
post-LayerNorm run on the pooled class token inside the tower and on every position by the
model, one set of weights). ``image_to_text_projection``: a dense map d_v -> d of the features,
then n_q learned latent queries (``latent_query``) attend (``x_attn``, biases) over the features
with the queries appended; the n_q outputs take the places of the image tokens in the text
decoder's input (``image_embeds_position_mask``): T counts N_img·n_q. The text decoder is the
generic decoder with XGLM's flags (sinusoidal positions, embeddings × √d, pre-LN, biases, tied
head) and Magneto's sub-LayerNorms (``inner_attn_ln`` before ``out_proj``, ``ffn_layernorm``
before ``fc2``). The features' L2 normalisation (``nn.functional.normalize``) is not a node: it
has no parameters and no matmul.
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, N_img, P_patch, S_img, T, d, d_v
from ...graph import roles as R
from .attention import AttentionSpec, Projections, attention
from .vlm import vision_tower, with_encoder

PREFIXES = ("vision_tower/", "image_to_text_projection/", "merge_image_tokens")


def _vision(g, x, flags):
    nq = sympy.Integer(flags["queries"])
    feats = vision_tower(g, flags)                                                              # (B·N, n, d_v)
    feats = g.op("vision_tower/post_layernorm_all", ops.LayerNorm(d_v), feats,
                 tie={"weight": g.param("vision_tower/post_layernorm", "weight"),
                      "bias": g.param("vision_tower/post_layernorm", "bias")}, role=R.VISION_NORM,
                 label="post-LN (every position)")
    p = "image_to_text_projection"
    h_feats = g.op(f"{p}/dense", ops.Linear(d_v, d, bias=True), feats, role=R.VISION_PROJECTOR, label="dense")
    slots = g.input("latent_query_slots", (B * N_img, nq), label="latent query slots", role=R.EXTRA_IDS)
    q = g.op(f"{p}/latent_query", ops.Embedding(nq, d), slots, role=R.EXTRA_EMBEDDING, label="latent queries")
    kv = g.op(f"{p}/concat", ops.PrependRows(), h_feats, q, role=R.EMBEDDING_ADD,
              label="[features; latent queries]")                                              # (B·N, n + n_q, d)
    hq = sympy.Integer(flags["projection_heads"])
    spec = AttentionSpec(d, hq, dh=d / hq, module=f"{p}/x_attn", causal=False,
                         names={"q": f"{p}/x_attn/q_proj", "k": f"{p}/x_attn/k_proj", "v": f"{p}/x_attn/v_proj",
                                "o": f"{p}/x_attn/out_proj"},
                         projections=Projections(bias=True, out_bias=True))
    o = attention(g, q, spec, memory=kv)                                                         # (B·N, n_q, d)
    g.require("integer", S_img / P_patch, "the image side S_img must be a multiple of the patch side P_patch",
              id="patches_divide_image")
    g.require("le", N_img * nq - T, "T must count the N_img images' latent-query tokens (N_img·n_q positions)",
              id="image_tokens_within_sequence")
    return g.op("merge_image_tokens", ops.MergeImageTokens(), x, o, role=R.IMAGE_MERGE, label="merge image features")


def build(flags, bound, name="kosmos-2", labels=None):
    return with_encoder(flags, bound, name, labels, partial(_vision, flags=flags), PREFIXES)

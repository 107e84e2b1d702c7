"""BLIP-2 (Li et al. 2023, "BLIP-2: Bootstrapping Language-Image Pre-training with Frozen Image
Encoders and Large Language Models"; transformers' ``Blip2ForConditionalGeneration``) with an OPT
language model, declared with transformers' module names.

The vision model (``Blip2VisionModel``): a patch convolution with a bias, a class token and a
learned position table, L_v pre-norm layers (one fused Q/K/V map with biases, a GELU MLP), a
LayerNorm over every position (and once more over the pooled class token, unused here). The
Q-Former (``Blip2QFormerModel``) reads n_q learned query tokens: a LayerNorm, then layers of
post-norm self-attention over the queries, cross-attention onto the image features (keys and
values from width d_v) in every ``cross_every``-th layer from the first, and the query FFN
(``intermediate_query``, ``output_query``); its width, heads, layers and FFN width are integer
flags. ``language_projection`` maps the n_q outputs to d; they take the places of the n_q image
tokens of each image in the OPT decoder's input (``masked_scatter``): T counts N_img·n_q.

InstructBLIP (``InstructBlipForConditionalGeneration``, Dai et al. 2023) and its video variant:
the Q-Former also embeds the instruction's tokens (word and position tables, its LayerNorm taking
the place of the Q-Former's) and runs them through an FFN of their own (``intermediate``,
``output``) beside the queries; those are held (counted, not run) and images are refused
(N_img must be 0): the text decoder alone is costed.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, C_img, L_v, N_img, P_patch, S_img, T, d, d_ff_v, d_v, h_v
from ...graph import roles as R
from .attention import AttentionSpec, Projections, attention
from .encoder_layers import activation
from .ffn import FFNSpec, ffn
from .vlm import with_encoder

PREFIXES = ("vision_model/", "qformer/", "query_tokens", "language_projection", "merge_image_tokens")
PATCHES = (S_img / P_patch) ** 2


def vision_model(g, flags, batch=B * N_img):
    """BLIP's and BLIP-2's vision model over *batch* images: the features (batch, n, d_v)."""
    act = activation(flags["vision_activation"])
    n = PATCHES + 1
    px = g.input("pixel_values", (batch, C_img, S_img, S_img), dtype="act", label="pixels", role=R.PIXELS)
    x = g.op("vision_model/embeddings/patch_embedding", ops.Conv2d(C_img, d_v, P_patch, bias=True), px,
             role=R.PATCH_EMBEDDING, label="patches (conv P×P, stride P)")                   # (B·N, d_v, S/P, S/P)
    x = g.op("vision_model/embeddings/flatten", ops.FlattenPatches(), x, role=R.PATCH_FLATTEN, label="patch sequence")
    x = g.op("vision_model/embeddings/class_embedding", ops.ClassToken(d_v), x, role=R.CLASS_TOKEN,
             label="[CLS] + patches")                                                         # (B·N, n, d_v)
    x = g.op("vision_model/embeddings/position_embedding", ops.AddPositions(n, d_v), x, role=R.POSITION_EMBEDDING,
             label="+ positions")
    spec = AttentionSpec(d_v, h_v, dh=d_v / h_v, module="self_attn", causal=False,
                         names={"qkv": "self_attn/qkv", "o": "self_attn/projection"},
                         projections=Projections(fused=True, bias=True, out_bias=True))
    mlp = FFNSpec(d_v, d_ff_v, act, bias=True, names={"up": "mlp/fc1", "act": "mlp/activation_fn", "down": "mlp/fc2"})
    with g.repeat("vision_model/encoder/layers", L_v, label="vision layer", carry=x, role=R.STACK, length=n):
        a = g.op("layer_norm1", ops.LayerNorm(d_v), x, role=R.ATTENTION_NORM, label="LayerNorm_1")
        x = g.op("attention_add", ops.Add(), x, attention(g, a, spec), role=R.ATTENTION_RESIDUAL, label="X + attn_out")
        f = g.op("layer_norm2", ops.LayerNorm(d_v), x, role=R.FFN_NORM, label="LayerNorm_2")
        x = g.op("ffn_add", ops.Add(), x, ffn(g, f, mlp), role=R.FFN_RESIDUAL, label="X + ffn_out")
    x = g.op("vision_model/post_layernorm", ops.LayerNorm(d_v), x, role=R.VISION_NORM, label="post-LN")
    c = g.op("vision_model/first_token", ops.FirstToken(), x, role=R.POOLED_TOKEN, label="X[:, 0]")
    g.op("vision_model/post_layernorm_pooled", ops.LayerNorm(d_v), c, tie={"weight": g.param("vision_model/post_layernorm", "weight"),
         "bias": g.param("vision_model/post_layernorm", "bias")}, role=R.VISION_NORM, label="post-LN (pooled, unused)")
    return x


def _post_norm_attention(g, x, dq, hq, module, drop, memory=None):
    spec = AttentionSpec(dq, hq, dh=dq / hq, module=f"{module}/attention", causal=False, dropout=drop,
                         names={"q": f"{module}/attention/query", "k": f"{module}/attention/key",
                                "v": f"{module}/attention/value", "o": f"{module}/output/dense"},
                         projections=Projections(bias=True, out_bias=True))
    o = attention(g, x, spec, memory=memory)
    cross = memory is not None
    x = g.op(f"{module}/output/add", ops.Add(), x, o, role=R.CROSS_RESIDUAL if cross else R.ATTENTION_RESIDUAL,
             label="Q + cross_out" if cross else "Q + attn_out")
    return g.op(f"{module}/output/LayerNorm", ops.LayerNorm(dq), x, role=R.CROSS_NORM if cross else R.ATTENTION_NORM,
                label="LayerNorm_cross" if cross else "LayerNorm_attn")


def qformer(g, flags, img):
    """The Q-Former over the image features *img* (B·N_img, n, d_v): (B·N_img, n_q, d_q)."""
    I = sympy.Integer
    dq, hq, ffq, nq = I(flags["qformer_d"]), I(flags["qformer_h"]), I(flags["qformer_d_ff"]), I(flags["queries"])
    every, layers = flags["cross_every"], flags["qformer_layers"]
    drop = bool(flags["dropout"])
    act = activation(flags["qformer_activation"])
    q = g.input("query_positions", (B * N_img, nq), label="query slots", role=R.EXTRA_IDS)
    x = g.op("query_tokens", ops.Embedding(nq, dq), q, role=R.EXTRA_EMBEDDING, label="query tokens")  # (B·N, n_q, d_q)
    text = bool(flags["qformer_text"])
    x = g.op("qformer/embeddings/layernorm" if text else "qformer/layernorm", ops.LayerNorm(dq), x,
             role=R.EMBEDDING_NORM, label="LayerNorm_emb")
    if text:  # InstructBLIP: the instruction's embeddings, held (the instruction text is not modelled)
        for path, num in (("word_embeddings", flags["qformer_vocab"]), ("position_embeddings", flags["qformer_positions"])):
            g.op(f"qformer/embeddings/{path}", ops.Held(ops.Embedding(I(num), dq), (B * N_img, nq)),
                 role=R.HELD_EMBEDDING, label=f"{path} (not run)")
    mlp = FFNSpec(dq, ffq, act, bias=True, dropout=drop,
                  names={"up": "intermediate_query/dense", "act": "intermediate_query/intermediate_act_fn",
                         "down": "output_query/dense", "dropout": "output_query/dense_dropout"})
    with g.repeat("qformer/encoder/layer", I(layers // every), label=f"Q-Former layers ({every} a group)", carry=x,
                  role=R.STACK, length=nq):
        for i in range(every):
            p = f"{i}"
            x = _post_norm_attention(g, x, dq, hq, f"{p}/attention", drop)
            if i == 0:
                spec = AttentionSpec(dq, hq, dh=dq / hq, module=f"{p}/crossattention/attention", causal=False,
                                     dropout=drop, d_memory=d_v,
                                     names={"q": f"{p}/crossattention/attention/query",
                                            "k": f"{p}/crossattention/attention/key",
                                            "v": f"{p}/crossattention/attention/value",
                                            "o": f"{p}/crossattention/output/dense"},
                                     projections=Projections(bias=True, out_bias=True))
                o = attention(g, x, spec, memory=img)
                x = g.op(f"{p}/crossattention/output/add", ops.Add(), x, o, role=R.CROSS_RESIDUAL, label="Q + cross_out")
                x = g.op(f"{p}/crossattention/output/LayerNorm", ops.LayerNorm(dq), x, role=R.CROSS_NORM,
                         label="LayerNorm_cross")
            if text:  # the instruction tokens' FFN (intermediate, output), held
                for path, op, w in (("intermediate/dense", ops.Linear(dq, ffq), dq), ("output/dense", ops.Linear(ffq, dq), ffq),
                                    ("output/LayerNorm", ops.LayerNorm(dq), dq)):
                    g.op(f"{p}/{path}", ops.Held(op, (B * N_img, nq, w)), role=R.HELD_EMBEDDING,
                         label=f"{path} (instruction tokens, not run)")
            f = ffn(g, x, replace(mlp, names={k: f"{p}/{v}" for k, v in mlp.names.items()}))
            x = g.op(f"{p}/output_query/add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="Q + ffn_out")
            x = g.op(f"{p}/output_query/LayerNorm", ops.LayerNorm(dq), x, role=R.FFN_NORM, label="LayerNorm_ffn")
    return x


def _vision(g, x, flags):
    nq = sympy.Integer(flags["queries"])
    feats = qformer(g, flags, vision_model(g, flags))
    p = g.op("language_projection", ops.Linear(sympy.Integer(flags["qformer_d"]), d, bias=True), feats,
             role=R.VISION_PROJECTOR, label="language projection")                           # (B·N, n_q, d)
    g.require("integer", S_img / P_patch, "the image side S_img must be a multiple of the patch side P_patch",
              id="patches_divide_image")
    g.require("le", N_img * nq - T, "T must count the N_img images' query tokens (N_img·n_q positions)",
              id="image_tokens_within_sequence")
    if flags["qformer_text"]:
        g.require("le", N_img, "images are not modelled for InstructBLIP (its Q-Former reads the instruction's "
                  "tokens beside the queries): N_img must be 0", id="images_not_modelled")
    return g.op("merge_image_tokens", ops.MergeImageTokens(), x, p, role=R.IMAGE_MERGE, label="merge image features")


def build(flags, bound, name="blip-2", labels=None):
    return with_encoder(flags, bound, name, labels, partial(_vision, flags=flags), PREFIXES)

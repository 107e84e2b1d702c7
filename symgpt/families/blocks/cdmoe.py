"""Doge's cross-domain mixture of experts (transformers' ``DogeCDMoE``): a gated MLP every token
runs, plus E single-neuron experts chosen by product keys -- ``router_gate`` (d -> 2·⌊√E⌋) scores
two halves of keys, the top ⌊√E⌋ of each half pair up into ⌊√E⌋² candidates and the top k of those
run: expert i is a down vector and an up vector of d (rows of ``down_embed`` and ``up_embed``,
E × d each), act(x·down_i) weighted by the softmax of the k scores, times up_i. The experts are a
group of E with k active, each a Linear(d, 1) and a Linear(1, d): k·2·d multiply-adds a token."""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import E, d, k
from ...graph import roles as R
from .encoder_layers import activation
from .ffn import FFNSpec, ffn


def cdmoe(g, flags, s, x):
    """DogeCDMoE of *x* (B, T, d) -> (B, T, d) under ``ffn/``, with the decoder's *flags*
    (``activation``, ``mlp_bias``) and sizes *s* (``decoder_flags.BuildSizes``: the MLP's d_ff)."""
    prefix, d_model, ff, experts, active = "ffn/", d, s.ff, E, k
    act, bias = activation(flags["activation"]), bool(flags["mlp_bias"])
    dense = ffn(g, x, FFNSpec(d_model, ff, act, prefix=prefix, bias=bias, gated=True))       # (B, T, d)
    keys = 2 * sympy.floor(sympy.sqrt(experts))
    r = g.op(prefix + "router_gate", ops.Linear(d_model, keys, bias=False, tag="router"), x, role=R.ROUTER,
             label="product-key scores")                                              # (B, T, 2⌊√E⌋)
    w = g.op(prefix + "topk", ops.TopK(active, normalize=False), r, role=R.TOP_K, label="top-k scores")  # (B, T, k)
    w = g.op(prefix + "router_softmax", ops.Softmax(), w, role=R.ROUTER_SOFTMAX, label="top-k weights")
    with g.repeat(prefix + "experts", experts, active=active, label="expert (one neuron)", role=R.EXPERTS):
        e = g.op("down_embed", ops.Linear(d_model, sympy.Integer(1), bias=False), x, role=R.FFN_UP,
                 label="x · down_i")                                                  # (B, T, 1)
        e = g.op("act", act, e, role=R.FFN_ACT, label=f"{act.title}(x · down_i)")
        e = g.op("up_embed", ops.Linear(sympy.Integer(1), d_model, bias=False), e, role=R.FFN_DOWN,
                 label="· up_i")                                                      # (B, T, d)
    e = g.op(prefix + "combine", ops.MoECombine(), e, w, role=R.COMBINE, label="Σ weights · experts")  # (B, T, d)
    return g.op(prefix + "experts_add", ops.Add(), dense, e, role=R.SHARED_ADD, label="mlp + experts")  # (B, T, d)

"""The Gated DeltaNet mixer (Yang, Kautz & Hatamizadeh 2024; transformers' ``Qwen3NextGatedDeltaNet``),
built where the decoder's attention stands in the layers its ``mixer`` flag names (``stacks.py``:
``linear_layers``).

in_proj_qkvz d -> 2·H_k·d_k + 2·H·d_v (q, k, v and the output gate z) and in_proj_ba d -> 2·H
(β's and the decay's inputs), no biases; a depthwise causal conv1d (no bias) of kernel K over
q, k and v together and SiLU; the gated delta rule (``ops.GatedDeltaRule``: dt_bias, A_log);
a gated RMSNorm of each value head (one weight of d_v shared by the heads) times silu(z); out_proj
H·d_v -> d, no bias. The sizes are the family's integer flags ``gdn_k_heads`` (H_k),
``gdn_v_heads`` (H), ``gdn_k_dim``, ``gdn_v_dim``, ``gdn_conv`` (K) and ``gdn_chunk`` (C).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...graph import roles as R


def _split(g, name, x, start, size, label):
    return g.op(name, ops.Slice(sympy.Integer(start), sympy.Integer(size)), x, role=R.SSM_SPLIT, label=label)


def gated_delta(g, flags, s, x):
    """The Gated DeltaNet mixer of one layer on *x* (B, T, d) under ``attention/``; returns (B, T, d)."""
    from ...core.symbols import d
    hk, hv, dk, dv = (int(flags[n]) for n in ("gdn_k_heads", "gdn_v_heads", "gdn_k_dim", "gdn_v_dim"))
    conv, chunk = int(flags["gdn_conv"]), int(flags["gdn_chunk"])
    key, value = hk * dk, hv * dv
    I = sympy.Integer
    p = g.op("attention/in_proj_qkvz", ops.Linear(d, I(2 * key + 2 * value), bias=False), x, role=R.SSM_IN,
             label="in_proj_qkvz")
    ba = g.op("attention/in_proj_ba", ops.Linear(d, I(2 * hv), bias=False), x, role=R.SSM_IN, label="in_proj_ba")
    qkv = _split(g, "attention/qkv", p, 0, 2 * key + value, "q, k, v")
    z = _split(g, "attention/z", p, 2 * key + value, value, "gate z")
    b = _split(g, "attention/b", ba, 0, hv, "b")
    a = _split(g, "attention/a", ba, hv, hv, "a")
    qkv = g.op("attention/conv1d", ops.CausalConv1d(I(2 * key + value), I(conv), bias=False), qkv,
               role=R.SSM_CONV, label="causal conv1d")
    qkv = g.op("attention/conv_act", ops.SiLU(), qkv, role=R.SSM_CONV_ACT, label="silu(conv)")
    q = _split(g, "attention/q", qkv, 0, key, "q")
    k = _split(g, "attention/k", qkv, key, key, "k")
    v = _split(g, "attention/v", qkv, 2 * key, value, "v")
    y = g.op("attention/delta_rule", ops.GatedDeltaRule(I(hk), I(hv), I(dk), I(dv), I(chunk)), q, k, v, a, b,
             role=R.SSM_SCAN, label="gated delta rule")                                    # (B, T, H·d_v)
    y = g.op("attention/heads", ops.SplitHeads(I(hv), I(dv)), y, role=R.SSM_SPLIT, label="split heads")
    y = g.op("attention/norm", ops.RMSNorm(I(dv)), y, role=R.SSM_OUT_NORM, label="RMSNorm (per head)")
    y = g.op("attention/merge", ops.MergeHeads(), y, role=R.SSM_SPLIT, label="merge heads")
    gate = g.op("attention/gate_act", ops.SiLU(), z, role=R.SSM_GATE_ACT, label="silu(z)")
    y = g.op("attention/gate", ops.Mul(), y, gate, role=R.SSM_GATE, label="y · silu(z)")
    return g.op("attention/out_proj", ops.Linear(I(value), d, bias=False), y, role=R.SSM_OUT,
                label="out_proj")                                                          # (B, T, d)

"""The Kimi Delta Attention mixer (transformers' ``KimiLinearDeltaAttention`` and
``BailingHybridDeltaAttention``), built where the decoder's attention stands in the layers its
``mixer`` flag names (``stacks.py``: ``linear_layers``).

q_proj, k_proj and v_proj d -> H·d_k each (no biases), concatenated; a depthwise causal conv1d (no
bias) of kernel K over them and the model's activation (SiLU); the forget gate's projection
(Kimi Linear: f_a_proj d -> d_k then f_b_proj d_k -> H·d_k; Ling 3: one f_proj d -> H·d_k) and
b_proj d -> H (β); Kimi delta attention (``ops.KimiDeltaRule``: A_log, dt_bias); a gated RMSNorm of
each head (one weight of d_k shared by the heads) times sigmoid of the output gate's projection
(Kimi Linear: g_a_proj d -> d_k then g_b_proj d_k -> H·d_k; Ling 3: one g_proj d -> H·d_k); o_proj
H·d_k -> d, no bias. The sizes are the family's integer flags ``kda_heads`` (H), ``kda_head_dim``
(d_k = d_v), ``kda_conv`` (K) and ``kda_chunk`` (C); ``kda_low_rank`` picks the two-step gates.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import d
from ...graph import roles as R
from .encoder_layers import activation


def _gate_proj(g, flags, x, name, width, dk, label):
    if flags["kda_low_rank"]:
        u = g.op(f"attention/{name}_a_proj", ops.Linear(d, dk, bias=False), x, role=R.SSM_IN, label=f"{label} (down)")
        return g.op(f"attention/{name}_b_proj", ops.Linear(dk, width, bias=False), u, role=R.SSM_IN,
                    label=f"{label} (up)")
    return g.op(f"attention/{name}_proj", ops.Linear(d, width, bias=False), x, role=R.SSM_IN, label=label)


def kda(g, flags, s, x):
    """The Kimi Delta Attention mixer of one layer on *x* (B, T, d) under ``attention/``; returns (B, T, d)."""
    I = sympy.Integer
    heads, dk = I(flags["kda_heads"]), I(flags["kda_head_dim"])
    width = heads * dk
    q = g.op("attention/q_proj", ops.Linear(d, width, bias=False), x, role=R.SSM_IN, label="q_proj")
    k = g.op("attention/k_proj", ops.Linear(d, width, bias=False), x, role=R.SSM_IN, label="k_proj")
    v = g.op("attention/v_proj", ops.Linear(d, width, bias=False), x, role=R.SSM_IN, label="v_proj")
    qkv = g.op("attention/qkv", ops.Concat(), q, k, v, role=R.SSM_SPLIT, label="[q, k, v]")
    qkv = g.op("attention/conv1d", ops.CausalConv1d(3 * width, I(flags["kda_conv"]), bias=False), qkv,
               role=R.SSM_CONV, label="causal conv1d")
    qkv = g.op("attention/conv_act", activation(flags["activation"]), qkv, role=R.SSM_CONV_ACT, label="act(conv)")
    q = g.op("attention/q", ops.Slice(I(0), width), qkv, role=R.SSM_SPLIT, label="q")
    k = g.op("attention/k", ops.Slice(width, width), qkv, role=R.SSM_SPLIT, label="k")
    v = g.op("attention/v", ops.Slice(2 * width, width), qkv, role=R.SSM_SPLIT, label="v")
    f = _gate_proj(g, flags, x, "f", width, dk, "forget gate")
    b = g.op("attention/b_proj", ops.Linear(d, heads, bias=False), x, role=R.SSM_IN, label="b_proj")
    y = g.op("attention/delta_rule", ops.KimiDeltaRule(heads, dk, dk, I(flags["kda_chunk"])), q, k, v, f, b,
             role=R.SSM_SCAN, label="Kimi delta attention")                                 # (B, T, H·d_k)
    y = g.op("attention/heads", ops.SplitHeads(heads, dk), y, role=R.SSM_SPLIT, label="split heads")
    y = g.op("attention/norm", ops.RMSNorm(dk), y, role=R.SSM_OUT_NORM, label="RMSNorm (per head)")
    y = g.op("attention/merge", ops.MergeHeads(), y, role=R.SSM_SPLIT, label="merge heads")
    z = _gate_proj(g, flags, x, "g", width, dk, "output gate")
    z = g.op("attention/gate_act", ops.Sigmoid(), z, role=R.SSM_GATE_ACT, label="sigmoid(gate)")
    y = g.op("attention/gate", ops.Mul(), y, z, role=R.SSM_GATE, label="y · sigmoid(gate)")
    return g.op("attention/o_proj", ops.Linear(width, d, bias=False), y, role=R.SSM_OUT, label="o_proj")

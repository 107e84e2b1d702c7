"""The lightning-attention mixer (transformers' ``MiniMaxLightningAttention``), built where the
decoder's attention stands in the layers its ``mixer`` flag names (``stacks.py``: ``linear_layers``).

qkv_proj d -> 3·H·d_h (no bias) and its activation (the model's ``hidden_act``, SiLU by default),
split per head into q, k and v (the same counts as three slices); lightning attention
(``ops.LightningAttention``: blocks of ``lightning_block``); an RMSNorm over all H·d_h channels;
times sigmoid(output_gate(x)), output_gate d -> H·d_h (no bias); out_proj H·d_h -> d (no bias).
H and d_h are the attention layers' heads and head width.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import d, h
from ...graph import roles as R
from .encoder_layers import activation


def _split(g, name, x, start, size, label):
    return g.op(name, ops.Slice(start, size), x, role=R.SSM_SPLIT, label=label)


def lightning(g, flags, s, x):
    """The lightning-attention mixer of one layer on *x* (B, T, d) under ``attention/``; returns (B, T, d)."""
    dh = s.dh
    width = h * dh
    p = g.op("attention/qkv_proj", ops.Linear(d, 3 * width, bias=False), x, role=R.SSM_IN, label="qkv_proj")
    p = g.op("attention/qkv_act", activation(flags["activation"]), p, role=R.SSM_CONV_ACT, label="act(qkv)")
    q = _split(g, "attention/q", p, sympy.Integer(0), width, "q")
    k = _split(g, "attention/k", p, width, width, "k")
    v = _split(g, "attention/v", p, 2 * width, width, "v")
    y = g.op("attention/lightning", ops.LightningAttention(h, dh, sympy.Integer(flags["lightning_block"])), q, k, v,
             role=R.SSM_SCAN, label="lightning attention")                               # (B, T, H·d_h)
    y = g.op("attention/norm", ops.RMSNorm(width), y, role=R.SSM_OUT_NORM, label="RMSNorm")
    z = g.op("attention/output_gate", ops.Linear(d, width, bias=False), x, role=R.SSM_IN, label="output_gate")
    z = g.op("attention/gate_act", ops.Sigmoid(), z, role=R.SSM_GATE_ACT, label="sigmoid(gate)")
    y = g.op("attention/gate", ops.Mul(), z, y, role=R.SSM_GATE, label="sigmoid(gate) · y")
    return g.op("attention/out_proj", ops.Linear(width, d, bias=False), y, role=R.SSM_OUT,
                label="out_proj")                                                          # (B, T, d)

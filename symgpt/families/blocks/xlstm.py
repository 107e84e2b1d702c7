"""xLSTM declared on the op catalog with transformers' module names (``xLSTMForCausalLM``).

A token embedding, L blocks ``x + mLSTM(RMSNorm(x))`` then ``x + FFN(RMSNorm(x))``, a final RMSNorm
(``out_norm``), the LM head and soft-capped logits. The mLSTM layer (``xLSTMLayer``, weight_mode
single): q, k d -> d_qk·H, v and the output gate's pre-activation d -> d_v·H, the input and forget
gates' pre-activations d -> H (with biases), soft-capped; the mLSTM cell; a per-head LayerNorm
(``xLSTMMultiHeadLayerNorm``); sigmoid(output gate) times it; out_proj d_v·H -> d. The
feed-forward (``xLSTMFeedForward``): silu(gate) · up, down. d_qk·H = d·qk_pct/100, d_v·H =
d·v_pct/100.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import B, L, Q_chunk, T, V, d, d_ff, h
from ...graph import roles as R
from ...graph.arch import Builder


def _norm(g, flags, name, x, role, label):
    """xLSTMRMSNorm: a scale, and a shift with use_bias."""
    x = g.op(name, ops.RMSNorm(d), x, role=role, label=label)
    if flags["bias"]:
        x = g.op(f"{name}_bias", ops.ChannelBias(d), x, role=R.NORM_BIAS, label=f"{label} + bias")
    return x


def _mlstm(g, flags, x, qk, v):
    bias = bool(flags["bias"])
    q = g.op("mlstm_layer/q", ops.Linear(d, qk, bias=bias), x, role=R.RECURRENT_QUERY, label="q")
    k = g.op("mlstm_layer/k", ops.Linear(d, qk, bias=bias), x, role=R.RECURRENT_KEY, label="k")
    val = g.op("mlstm_layer/v", ops.Linear(d, v, bias=bias), x, role=R.RECURRENT_VALUE, label="v")
    o = g.op("mlstm_layer/ogate_preact", ops.Linear(d, v, bias=bias), x, role=R.RECEPTANCE, label="output gate")
    gates = []
    for name in ("igate", "fgate"):
        p = g.op(f"mlstm_layer/{name}_preact", ops.Linear(d, h, bias=True), x, role=R.RECURRENT_GATE,
                 label=f"{name[0]} gate")
        if flags["gate_softcap"]:
            p = g.op(f"mlstm_layer/{name}_softcap", ops.SoftCap(sympy.Integer(flags["gate_softcap"])), p,
                     role=R.RECURRENT_GATE_SOFTCAP, label=f"softcap({name[0]})")
        gates.append(p)
    y = g.op("mlstm_layer/cell", ops.MLSTM(h, qk, v, Q_chunk), q, k, val, *gates, role=R.MLSTM_CELL,
             label="mLSTM cell")                                                               # (B, T, v)
    # per head (statistics over d_v each); its scale and shift are v wide
    y = g.op("mlstm_layer/multihead_norm", ops.LayerNorm(v, bias=bool(flags["bias"])), y,
             role=R.SSM_OUT_NORM, label="per-head norm")
    o = g.op("mlstm_layer/ogate_act", ops.Sigmoid(), o, role=R.RECEPTANCE_ACT, label="σ(o)")
    y = g.op("mlstm_layer/gate", ops.Mul(), o, y, role=R.RECEPTANCE_GATE, label="σ(o) · h")
    return g.op("mlstm_layer/out_proj", ops.Linear(v, d, bias=bias), y, role=R.SSM_OUT, label="out_proj")


def _ffn(g, flags, x):
    bias = bool(flags["bias"])
    gate = g.op("ffn/proj_up_gate", ops.Linear(d, d_ff, bias=bias), x, role=R.FFN_GATE, label="gate")
    gate = g.op("ffn/act", ops.SiLU(), gate, role=R.FFN_ACT, label="silu")
    up = g.op("ffn/proj_up", ops.Linear(d, d_ff, bias=bias), x, role=R.FFN_UP, label="up")
    y = g.op("ffn/mul", ops.Mul(), gate, up, role=R.FFN_MUL, label="silu(gate) · up")
    return g.op("ffn/proj_down", ops.Linear(d_ff, d, bias=bias), y, role=R.FFN_DOWN, label="down")


def build(flags, bound, name="xlstm"):
    g = Builder(name, declared_roles=True)
    qk, v = d * sympy.Rational(flags["qk_pct"], 100), d * sympy.Rational(flags["v_pct"], 100)
    g.require("integer", qk / h, "d·qk_pct/100 must be divisible by h", id="heads_divide_qk")
    g.require("integer", v / h, "d·v_pct/100 must be divisible by h", id="heads_divide_v")
    ids = g.input("input_ids", (B, T), label="input_ids", role=R.TOKENS)
    x = g.op("backbone/embeddings", ops.Embedding(V, d), ids, label="tok_emb", role=R.TOKEN_EMBEDDING)
    with g.repeat("backbone/blocks", L, label="xLSTM block", carry=x, role=R.STACK):
        a = _norm(g, flags, "norm_mlstm", x, R.MIXER_NORM, "norm")
        x = g.op("mlstm_residual", ops.Add(), x, _mlstm(g, flags, a, qk, v), role=R.MIXER_RESIDUAL,
                 label="X + mLSTM")
        a = _norm(g, flags, "norm_ffn", x, R.FFN_NORM, "norm_ffn")
        x = g.op("ffn_residual", ops.Add(), x, _ffn(g, flags, a), role=R.FFN_RESIDUAL, label="X + ffn")
    x = g.op("backbone/out_norm", ops.RMSNorm(d), x, role=R.FINAL_NORM, label="out_norm")
    tie = {"weight": g.param("backbone/embeddings")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), x, tie=tie, label="logits", role=R.HEAD)
    if flags["logit_softcap"]:
        logits = g.op("lm_head_softcap", ops.SoftCap(sympy.Integer(flags["logit_softcap"])), logits,
                      label="logits soft-capped", role=R.LOGIT_SOFTCAP)
    loss = g.op("loss", ops.CrossEntropy(), logits, label="loss", role=R.LOSS) if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))

"""Building blocks the encoder and encoder--decoder families share: multi-head attention (self or
cross, causal or bidirectional) and the feed-forward network, each declared on the op catalog
under the node names its caller's source uses, with roles.

A caller names the projections as its source does (BERT's ``attention/self/query``, T5's
``layer/0/SelfAttention/q``, BART's ``self_attn/q_proj``); the steps with no module of their own
(heads split, scores, softmax, ...) are named under ``module``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ... import ops
from ...graph import roles as R
from ...core.symbols import V, d


@dataclass(frozen=True)
class _AttnRoles:
    q: str
    k: str
    v: str
    q_heads: str
    k_heads: str
    v_heads: str
    scores: str
    scale: str
    softmax: str
    values: str
    merge: str
    out: str


SELF = _AttnRoles(R.QUERY, R.KEY, R.VALUE, R.QUERY_HEADS, R.KEY_HEADS, R.VALUE_HEADS, R.SCORES, R.SCALE,
                  R.SOFTMAX, R.VALUES, R.MERGE, R.OUT)
CROSS = _AttnRoles(R.CROSS_QUERY, R.CROSS_KEY, R.CROSS_VALUE, R.CROSS_QUERY_HEADS, R.CROSS_KEY_HEADS,
                   R.CROSS_VALUE_HEADS, R.CROSS_SCORES, R.CROSS_SCALE, R.CROSS_SOFTMAX, R.CROSS_VALUES,
                   R.CROSS_MERGE, R.CROSS_OUT)


def attention(g, x, *, d_model, heads, dh, module: str, names: dict, bias: bool = True,
              causal: bool = False, scaled: bool = True, position_bias: str | None = None,
              dropout: bool = False, memory: str | None = None, out_bias: bool | None = None) -> str:
    """Multi-head attention of *x* (B, T_q, d) over itself, or over *memory* (B, T_k, d) when given
    (cross-attention: queries from the decoder, keys and values from the encoder's output).

    ``names`` maps ``q``, ``k``, ``v``, ``o`` to the projections' node names; ``causal`` masks
    future keys (a decoder's self-attention) and marks the matmuls a causal kernel could halve;
    ``scaled`` divides the scores by √d_head (T5 does not); ``position_bias`` is a (1, h, T_q, T_k)
    tensor added to the scores (T5's relative bias)."""
    rr = CROSS if memory is not None else SELF
    kv_in = memory if memory is not None else x
    width = heads * dh
    q = g.op(names["q"], ops.Linear(d_model, width, bias=bias), x, role=rr.q, label="Q")          # (B, T_q, h·dh)
    k = g.op(names["k"], ops.Linear(d_model, width, bias=bias), kv_in, role=rr.k, label="K")      # (B, T_k, h·dh)
    v = g.op(names["v"], ops.Linear(d_model, width, bias=bias), kv_in, role=rr.v, label="V")      # (B, T_k, h·dh)
    qh = g.op(f"{module}/q_heads", ops.SplitHeads(heads, dh), q, role=rr.q_heads, label="Q heads")  # (B, h, T_q, dh)
    kh = g.op(f"{module}/k_heads", ops.SplitHeads(heads, dh), k, role=rr.k_heads, label="K heads")  # (B, h, T_k, dh)
    vh = g.op(f"{module}/v_heads", ops.SplitHeads(heads, dh), v, role=rr.v_heads, label="V heads")  # (B, h, T_k, dh)
    s = g.op(f"{module}/scores", ops.Matmul("attention_scores", transpose_b=True, causal=causal), qh, kh,
             role=rr.scores, label="S = Q Kᵀ")                                                    # (B, h, T_q, T_k)
    if scaled:
        s = g.op(f"{module}/scale", ops.Scale(1 / sympy.sqrt(dh)), s, role=rr.scale, label="S / √d_h")
    if position_bias is not None:
        s = g.op(f"{module}/position_bias", ops.Add(), s, position_bias, role=R.POSITION_BIAS,
                 label="S + bias")                                                                 # (B, h, T_q, T_k)
    if causal:
        s = g.op(f"{module}/mask", ops.CausalMask(), s, role=R.MASK, label="S + mask")
    p = g.op(f"{module}/softmax", ops.Softmax(), s, role=rr.softmax, label="A = softmax(S)")    # (B, h, T_q, T_k)
    if dropout:
        p = g.op(f"{module}/dropout", ops.Dropout(), p, role=R.DROPOUT)
    z = g.op(f"{module}/values", ops.Matmul("attention_values", causal=causal), p, vh, role=rr.values,
             label="Z = A V")                                                                      # (B, h, T_q, dh)
    z = g.op(f"{module}/merge", ops.MergeHeads(), z, role=rr.merge, label="Z merged")           # (B, T_q, h·dh)
    o = g.op(names["o"], ops.Linear(width, d_model, bias=bias if out_bias is None else out_bias), z,
             role=rr.out, label="attn_out")                                                        # (B, T_q, d)
    if dropout:
        o = g.op(f"{module}/dropout_out", ops.Dropout(), o, role=R.DROPOUT)
    return o


def activation(name: str) -> ops.Op:
    """An activation op by the families' flag value (``gelu_new``: transformers' composite tanh-GELU)."""
    return {"silu": ops.SiLU(), "gelu": ops.GELU(approximate="none"),
            "gelu_tanh": ops.GELU(approximate="tanh"), "relu": ops.ReLU(),
            "gelu_new": ops.GELU(approximate="tanh", composite=True)}[name]


def ffn(g, x, *, d_model, ff, names: dict, act: str, bias: bool = True, gated: bool = False,
        dropout: bool = False, act_dropout: bool = False) -> str:
    """up -> act -> down (``names``: ``up``, ``act``, ``down``), or with ``gated`` act(gate) ⊙ up
    -> down (``names`` adds ``gate`` and ``mul``); ``dropout`` after down, ``act_dropout`` also
    before it (T5's and BART's FFNs; BERT's and ViT's have none there)."""
    a = activation(act)
    if gated:
        gate = g.op(names["gate"], ops.Linear(d_model, ff, bias=bias), x, role=R.FFN_GATE, label="G")  # (B, T, d_ff)
        up = g.op(names["up"], ops.Linear(d_model, ff, bias=bias), x, role=R.FFN_UP, label="U")        # (B, T, d_ff)
        gate = g.op(names["act"], a, gate, role=R.FFN_ACT, label=f"{a.title}(G)")
        u = g.op(names["mul"], ops.Mul(), gate, up, role=R.FFN_MUL, label=f"{a.title}(G) ⊙ U")       # (B, T, d_ff)
    else:
        u = g.op(names["up"], ops.Linear(d_model, ff, bias=bias), x, role=R.FFN_UP, label="H")        # (B, T, d_ff)
        u = g.op(names["act"], a, u, role=R.FFN_ACT, label=f"{a.title}(H)")
    if act_dropout:
        u = g.op(names["act"] + "_dropout", ops.Dropout(), u, role=R.DROPOUT)
    o = g.op(names["down"], ops.Linear(ff, d_model, bias=bias), u, role=R.FFN_DOWN, label="ffn_out")   # (B, T, d)
    if dropout:
        o = g.op(names["down"] + "_dropout", ops.Dropout(), o, role=R.DROPOUT)
    return o


def lm_head(g, flags, y):
    """An encoder--decoder's LM head over the decoder's output (tied to the ``shared`` token table
    when ``flags["tied"]``), the loss when ``flags["loss"]``, and the built graph."""
    tie = {"weight": g.param("shared")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), y, tie=tie, role=R.HEAD,
                  label="logits")                                                                  # (B, T_dec, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, role=R.LOSS, label="loss") if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))

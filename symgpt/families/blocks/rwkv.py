"""RWKV-4 declared on the op catalog with transformers' module names (``RwkvForCausalLM``).

A token embedding, a LayerNorm of the embeddings (``blocks.0.pre_ln``, layer 0's alone), L blocks
``x + time_mix(LN(x))`` then ``x + channel_mix(LN(x))``, a final LayerNorm and the LM head. The
time-mix (``RwkvSelfAttention``): three token-shift mixes of its input, key, value and receptance
projections d -> A (no bias), the WKV recurrence of key and value, sigmoid(receptance) times it,
output A -> d. The channel-mix (``RwkvFeedForward``): two token-shift mixes, key d -> d_ff, relu²,
value d_ff -> d, sigmoid(receptance d -> d) times it.
"""

from __future__ import annotations

from ... import ops
from ...graph import roles as R
from ...graph.arch import Builder
from ...core.symbols import B, L, T, V, d, d_ff, d_inner


def _mix(g, name, x, param):
    return g.op(name, ops.TokenShiftMix(d, param=param), x, role=R.TOKEN_SHIFT, label=f"shift·{param[9:]}")


def time_mix(g, a):
    k = _mix(g, "attention/mix_key", a, "time_mix_key")
    v = _mix(g, "attention/mix_value", a, "time_mix_value")
    r = _mix(g, "attention/mix_receptance", a, "time_mix_receptance")
    k = g.op("attention/key", ops.Linear(d, d_inner, bias=False), k, role=R.RECURRENT_KEY, label="key")
    v = g.op("attention/value", ops.Linear(d, d_inner, bias=False), v, role=R.RECURRENT_VALUE, label="value")
    r = g.op("attention/receptance", ops.Linear(d, d_inner, bias=False), r, role=R.RECEPTANCE, label="receptance")
    r = g.op("attention/receptance_act", ops.Sigmoid(), r, role=R.RECEPTANCE_ACT, label="σ(r)")
    y = g.op("attention/wkv", ops.WKV(d_inner), k, v, role=R.WKV, label="WKV")
    y = g.op("attention/gate", ops.Mul(), r, y, role=R.RECEPTANCE_GATE, label="σ(r) · wkv")
    return g.op("attention/output", ops.Linear(d_inner, d, bias=False), y, role=R.SSM_OUT, label="output")


def channel_mix(g, a):
    k = _mix(g, "feed_forward/mix_key", a, "time_mix_key")
    r = _mix(g, "feed_forward/mix_receptance", a, "time_mix_receptance")
    k = g.op("feed_forward/key", ops.Linear(d, d_ff, bias=False), k, role=R.FFN_UP, label="key")
    k = g.op("feed_forward/act", ops.ReLU2(), k, role=R.FFN_ACT, label="relu²")
    v = g.op("feed_forward/value", ops.Linear(d_ff, d, bias=False), k, role=R.FFN_DOWN, label="value")
    r = g.op("feed_forward/receptance", ops.Linear(d, d, bias=False), r, role=R.FFN_RECEPTANCE,
             label="receptance")
    r = g.op("feed_forward/receptance_act", ops.Sigmoid(), r, role=R.FFN_RECEPTANCE_ACT, label="σ(r)")
    return g.op("feed_forward/gate", ops.Mul(), r, v, role=R.FFN_RECEPTANCE_GATE, label="σ(r) · value")


def build(flags, bound, name="rwkv"):
    g = Builder(name, declared_roles=True)
    ids = g.input("input_ids", (B, T), label="input_ids", role=R.TOKENS)
    x = g.op("rwkv/embeddings", ops.Embedding(V, d), ids, label="tok_emb", role=R.TOKEN_EMBEDDING)  # (B, T, d)
    x = g.op("rwkv/blocks/0/pre_ln", ops.LayerNorm(d), x, role=R.EMBEDDING_NORM, label="pre_ln")
    with g.repeat("rwkv/blocks", L, label="RWKV block", carry=x, role=R.STACK):
        a = g.op("ln1", ops.LayerNorm(d), x, role=R.MIXER_NORM, label="ln1")
        x = g.op("attention/residual", ops.Add(), x, time_mix(g, a), role=R.MIXER_RESIDUAL, label="X + time-mix")
        a = g.op("ln2", ops.LayerNorm(d), x, role=R.FFN_NORM, label="ln2")
        x = g.op("feed_forward/residual", ops.Add(), x, channel_mix(g, a), role=R.FFN_RESIDUAL,
                 label="X + channel-mix")                                                       # (B, T, d)
    x = g.op("rwkv/ln_out", ops.LayerNorm(d), x, role=R.FINAL_NORM, label="ln_out")
    tie = {"weight": g.param("rwkv/embeddings")} if flags["tied"] else None
    logits = g.op("head", ops.Linear(d, V, bias=False, tag="lm_head"), x, tie=tie, label="logits", role=R.HEAD)
    loss = g.op("loss", ops.CrossEntropy(), logits, label="loss", role=R.LOSS) if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))

"""CPM-Ant (OpenBMB; transformers' CpmAntForCausalLM) as one graph: ``prompt_length`` prompt ids
prepended to the tokens, token embeddings (a table of V + prompt_types·prompt_length rows) plus
segment embeddings (``segment_types`` rows), one relative position bias shared by every layer
(a (segment_types² + buckets, h) table: segment-pair buckets and position buckets), pre-norm
layers (RMSNorm with a weight, multi-head attention without biases whose scaled scores get the
bias, a GELU-gated FFN without biases) over T + prompt_length positions, a final RMSNorm, the
prompt positions dropped, and an untied LM head of V."""

from __future__ import annotations

import sympy

from ... import ops
from ...graph import roles as R
from ...graph.arch import Builder
from ...core.symbols import B, L, T, V, d, d_ff, d_head, h
from .attention import AttentionSpec, attention
from .encoder_layers import activation
from .ffn import FFNSpec, ffn


def build(flags, bound, name="cpmant"):
    P = sympy.Integer(flags["prompt_length"])
    rows = V + sympy.Integer(flags["prompt_types"] * flags["prompt_length"])
    segments = sympy.Integer(flags["segment_types"])
    buckets = sympy.Integer(flags["segment_types"] ** 2 + flags["buckets"])
    g = Builder(name, declared_roles=True)
    ids = g.input("input_ids", (B, T), label="input ids", role=R.TOKENS)                # (B, T)
    ids = g.op("prompt", ops.PrependTokens(P), ids, label="prompt ids + ids", role=R.PROMPT_TOKENS)  # (B, P + T)
    x = g.op("input_embedding", ops.Embedding(rows, d), ids, label="tok_emb", role=R.TOKEN_EMBEDDING)
    seg = g.op("segment_embedding", ops.Embedding(segments, d), ids, label="segment_emb",
               role=R.TOKEN_TYPE_EMBEDDING)                                             # (B, P + T, d)
    x = g.op("embedding/add", ops.Add(), x, seg, label="X0", role=R.EMBEDDING_ADD)       # (B, P + T, d)
    bias = g.op("position_bias", ops.RelativePositionBias(buckets, h, bidirectional=False), ids,
                label="position bias", role=R.RELATIVE_BIAS)                            # (1, h, P + T, P + T)
    attn = AttentionSpec(d, h, dh=d_head, module="self_att/self_attention", dropout=bool(flags["dropout"]),
                         names={"q": "self_att/self_attention/project_q", "k": "self_att/self_attention/project_k",
                                "v": "self_att/self_attention/project_v",
                                "o": "self_att/self_attention/attention_out"})
    mlp = FFNSpec(d, d_ff, activation(flags["activation"]), gated=True, dropout=bool(flags["dropout"]),
                  names={"gate": "ffn/ffn/w_in/w_0", "up": "ffn/ffn/w_in/w_1", "act": "ffn/ffn/w_in/act",
                         "mul": "ffn/ffn/w_in/mul", "down": "ffn/ffn/w_out", "dropout": "ffn/dropout"})
    with g.repeat("blocks", L, label="Transformer block", carry=x, role=R.STACK, length=T + P):
        a = g.op("self_att/layernorm_before_attention", ops.RMSNorm(d), x, label="norm_attn",
                 role=R.ATTENTION_NORM)
        o = attention(g, a, attn, position_bias=bias)                                    # (B, P + T, d)
        x = g.op("self_att/add", ops.Add(), x, o, label="X + attn_out", role=R.ATTENTION_RESIDUAL)
        f = g.op("ffn/layernorm_before_ffn", ops.RMSNorm(d), x, label="norm_ffn", role=R.FFN_NORM)
        f = ffn(g, f, mlp)
        x = g.op("ffn/add", ops.Add(), x, f, label="X + ffn_out", role=R.FFN_RESIDUAL)  # (B, P + T, d)
    x = g.op("output_layernorm", ops.RMSNorm(d), x, label="final norm", role=R.FINAL_NORM)
    x = g.op("drop_prompt", ops.DropTokens(P), x, label="token positions", role=R.DROP_PROMPT)  # (B, T, d)
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), x, label="logits", role=R.HEAD)
    loss = g.op("loss", ops.CrossEntropy(), logits, label="loss", role=R.LOSS) if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))

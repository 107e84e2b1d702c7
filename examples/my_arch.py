"""Declaring your own architecture on symgpt's ops: a family in a few dozen lines.

This one is not in symgpt: pre-norm RMSNorm blocks, learned positions, grouped-query attention
(h_kv key/value heads), a squared-ReLU MLP (ReLU, then the activation times itself), no biases,
an untied head. Once registered, ``symgpt.load("my_arch", ...)`` gives it every count, query,
LaTeX table and diagram that the built-in families have.

    python examples/my_arch.py
"""

import symgpt
from symgpt import ops
from symgpt.families import Family, register_family
from symgpt.graph.arch import Builder
from symgpt.core.symbols import B, L, T, T_max, V, d, d_ff, h, h_kv


def build(flags, bound):
    dh = d / h                                                               # head dimension
    g = Builder("my_arch")
    g.require("integer", d / h, "d must be divisible by h")
    g.require("integer", h / h_kv, "h must be a multiple of h_kv")
    g.require("le", T - T_max, "T must not exceed T_max")

    ids = g.input("input_ids", (B, T))                                       # (B, T)
    tok = g.op("embedding/token", ops.Embedding(V, d), ids)                  # (B, T, d)
    pos = g.op("embedding/position", ops.PositionEmbedding(T_max, d), ids)   # (T, d)
    x = g.op("embedding/add", ops.Add(), tok, pos)                           # (B, T, d)
    with g.repeat("blocks", L, label="block", carry=x):
        a = g.op("norms/attention", ops.RMSNorm(d), x)                       # (B, T, d)
        q = g.op("attention/q", ops.Linear(d, h * dh, bias=False), a)        # (B, T, d)
        k = g.op("attention/k", ops.Linear(d, h_kv * dh, bias=False), a)     # (B, T, h_kv·dh)
        v = g.op("attention/v", ops.Linear(d, h_kv * dh, bias=False), a)     # (B, T, h_kv·dh)
        q = g.op("attention/q_heads", ops.SplitHeads(h, dh), q)              # (B, h, T, dh)
        k = g.op("attention/k_heads", ops.SplitHeads(h_kv, dh), k)           # (B, h_kv, T, dh)
        v = g.op("attention/v_heads", ops.SplitHeads(h_kv, dh), v)           # (B, h_kv, T, dh)
        k = g.op("attention/k_repeat", ops.RepeatKV(h / h_kv), k)            # (B, h, T, dh)
        v = g.op("attention/v_repeat", ops.RepeatKV(h / h_kv), v)            # (B, h, T, dh)
        s = g.op("attention/scores", ops.Matmul("attention_scores", transpose_b=True, causal=True),
                 q, k)                                                       # (B, h, T, T)
        s = g.op("attention/mask", ops.CausalMask(), s)                      # (B, h, T, T)
        p = g.op("attention/softmax", ops.Softmax(), s)                      # (B, h, T, T)
        z = g.op("attention/values", ops.Matmul("attention_values", causal=True), p, v)  # (B, h, T, dh)
        z = g.op("attention/merge", ops.MergeHeads(), z)                     # (B, T, d)
        o = g.op("attention/proj", ops.Linear(d, d, bias=False), z)          # (B, T, d)
        x = g.op("attention/residual", ops.Add(), x, o)                      # (B, T, d)
        f = g.op("norms/ffn", ops.RMSNorm(d), x)                             # (B, T, d)
        u = g.op("ffn/up", ops.Linear(d, d_ff, bias=False), f)               # (B, T, d_ff)
        r = g.op("ffn/act", ops.ReLU(), u)                                   # (B, T, d_ff)
        r = g.op("ffn/square", ops.Mul(), r, u)  # relu(u)·u = relu(u)² wherever it is nonzero
        o = g.op("ffn/down", ops.Linear(d_ff, d, bias=False), r)             # (B, T, d)
        x = g.op("ffn/residual", ops.Add(), x, o)                            # (B, T, d)
    x = g.op("final_norm", ops.RMSNorm(d), x)                                # (B, T, d)
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), x)  # (B, T, V)
    loss = g.op("loss", ops.CrossEntropy(), logits) if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))


MY_ARCH = register_family(Family(
    name="my_arch",
    description="RMSNorm, learned positions, GQA, squared-ReLU MLP, no biases, untied head",
    flags={"loss": True},
    sizes=("L", "d", "h", "h_kv", "d_ff", "V", "T_max"),
    build=build,
))


if __name__ == "__main__":
    m = symgpt.load("my_arch", L=8, d=512, h=8, h_kv=2, d_ff=2048, V=32000, T_max=1024)
    print(m.params.expr, "=", m.params.value)                # 4·L·d² ... = exact count
    f = m.with_(B=8, T=1024).quantity("flops.forward")
    print(f.expr, "=", f.value)

"""GPT-2 (and GPT-3, same architecture) declared on the op catalog.

Pre-LN blocks; learned token and position embeddings; fused QKV projection; GELU FFN of width
4d unless ``d_ff`` is bound; final LayerNorm; LM head tied to the token embedding by default.
"""

from __future__ import annotations

import sympy

from .. import ops
from ..graph import Builder
from ..symbols import B, L, T, T_max, V, d, d_ff, h
from .base import Family, register_family


def padded(vocab, multiple):
    """The vocabulary rounded up to a multiple (nanoGPT pads 50257 -> 50304 with 64)."""
    return vocab if not multiple else multiple * sympy.ceiling(vocab / multiple)


def build(flags, bound):
    bias = bool(flags["bias"])
    qkv_bias = bias and bool(flags["qkv_bias"])
    ffn = d_ff if "d_ff" in bound else 4 * d
    vocab = padded(V, flags["vocab_multiple"])
    dh = d / h

    g = Builder("gpt2")
    g.require("integer", d / h, "d must be divisible by h")
    g.require("le", T - T_max, "T must not exceed T_max, the length of the learned position table")

    ids = g.input("input_ids", (B, T), label="input ids")                      # (B, T)
    tok = g.op("embedding/token", ops.Embedding(vocab, d), ids, label="tok_emb")  # (B, T, d)
    pos = g.op("embedding/position", ops.PositionEmbedding(T_max, d), ids, label="pos_emb")  # (T, d)
    x = g.op("embedding/add", ops.Add(), tok, pos, label="X0")                 # (B, T, d)
    if flags["dropout"]:
        x = g.op("embedding/dropout", ops.Dropout(), x)

    with g.repeat("blocks", L, label="Transformer block", carry=x):
        a = g.op("norms/attention", ops.LayerNorm(d, bias=bias), x, label="LayerNorm_1")   # (B, T, d)
        qkv = g.op("attention/qkv", ops.Linear(d, 3 * d, bias=qkv_bias), a, label="QKV")  # (B, T, 3d)
        heads = {}
        for i, n in enumerate("qkv"):
            s = g.op(f"attention/{n}", ops.Slice(i * d, d), qkv, label=n.upper())        # (B, T, d)
            heads[n] = g.op(f"attention/{n}_heads", ops.SplitHeads(h, dh), s,
                            label=f"{n.upper()} heads")                                 # (B, h, T, dh)
        s = g.op("attention/scores", ops.Matmul("attention_scores", transpose_b=True, causal=True),
                 heads["q"], heads["k"], label="S = Q Kᵀ")                               # (B, h, T, T)
        s = g.op("attention/scale", ops.Scale(1 / sympy.sqrt(dh)), s, label="S / √d_h")  # (B, h, T, T)
        s = g.op("attention/mask", ops.CausalMask(), s, label="S + mask")               # (B, h, T, T)
        p = g.op("attention/softmax", ops.Softmax(), s, label="A = softmax(S)")         # (B, h, T, T)
        if flags["dropout"]:
            p = g.op("attention/dropout", ops.Dropout(), p)
        z = g.op("attention/values", ops.Matmul("attention_values", causal=True),
                 p, heads["v"], label="Z = A V")                                        # (B, h, T, dh)
        z = g.op("attention/merge", ops.MergeHeads(), z, label="Z merged")              # (B, T, d)
        o = g.op("attention/proj", ops.Linear(d, d, bias=bias), z, label="attn_out")    # (B, T, d)
        if flags["dropout"]:
            o = g.op("attention/dropout_out", ops.Dropout(), o)
        x = g.op("attention/residual", ops.Add(), x, o, label="X + attn_out")           # (B, T, d)

        f = g.op("norms/ffn", ops.LayerNorm(d, bias=bias), x, label="LayerNorm_2")      # (B, T, d)
        u = g.op("ffn/up", ops.Linear(d, ffn, bias=bias), f, label="H")                 # (B, T, d_ff)
        u = g.op("ffn/act", ops.GELU(), u, label="GELU(H)")                             # (B, T, d_ff)
        o = g.op("ffn/down", ops.Linear(ffn, d, bias=bias), u, label="ffn_out")         # (B, T, d)
        if flags["dropout"]:
            o = g.op("ffn/dropout", ops.Dropout(), o)
        x = g.op("ffn/residual", ops.Add(), x, o, label="X + ffn_out")                  # (B, T, d)

    x = g.op("final_norm", ops.LayerNorm(d, bias=bias), x, label="LayerNorm_final")     # (B, T, d)
    tie = {"weight": g.param("embedding/token")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, vocab, bias=False, tag="lm_head"), x, tie=tie,
                  label="logits")                                                       # (B, T, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, label="loss") if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))


GPT2 = register_family(Family(
    name="gpt2",
    description="GPT-2 / GPT-3: pre-LN, learned positions, GELU FFN, LayerNorm, tied head",
    flags={"tied": True, "qkv_bias": True, "bias": True, "vocab_multiple": None,
           "dropout": False, "loss": True},
    sizes=("L", "d", "h", "V", "T_max"),
    optional=("d_ff",),
    build=build,
    overridden_by={"qkv_bias": ("bias", False)},
    flag_help={
        "tied": "LM head shares the token embedding matrix",
        "qkv_bias": "Q/K/V projections have a bias",
        "bias": "false removes every linear and LayerNorm bias (nanoGPT bias=False)",
        "vocab_multiple": "pad the vocabulary up to a multiple (nanoGPT: 64)",
        "dropout": "dropout layers present (their masks are saved for backward)",
        "loss": "the graph ends in the cross-entropy loss",
    },
))

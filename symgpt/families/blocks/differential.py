"""Differential attention as transformers' ``DiffLlamaAttention`` runs it (Ye et al. 2024,
"Differential Transformer"): Q, K, V projections, RoPE on Q and K, then two ordinary attention
calls over the same Q and K -- the first over the first half of V's heads, the second over the
second half (each half repeated back to h_kv heads, then to h as grouped-query attention
repeats) -- so the scores Q·Kᵀ are computed twice; the two outputs are combined with the learned
λ (``ops.DiffCombine``), normed per pair of heads by a parameter-free RMSNorm of 2·d_head,
scaled by 1 − λ_init, merged and projected out.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import d, h
from ...graph import roles as R

#: × (1 − λ_init): λ_init = 0.8 − 0.6·exp(−0.3·layer) differs by layer; a constant scale either way
LAMBDA_INIT = sympy.Symbol("lambda_init", positive=True)


def diff_attention(g, flags, s, x, rotary):
    """Differential attention of *x* (B, T, d) -> (B, T, d) under ``attention/``, with the decoder's
    *flags* (``qkv_bias``: every projection's bias) and sizes *s* (``decoder_flags.BuildSizes``)."""
    p = "attention/"
    d_model, heads, dh, kv_heads, bias = d, h, s.dh, s.kv, bool(flags["qkv_bias"])
    widths = {"q": heads * dh, "k": kv_heads * dh, "v": kv_heads * dh}
    roles = {"q": R.QUERY, "k": R.KEY, "v": R.VALUE}
    head_roles = {"q": R.QUERY_HEADS, "k": R.KEY_HEADS, "v": R.VALUE_HEADS}
    count = {"q": heads, "k": kv_heads, "v": kv_heads}
    hd = {}
    for n in "qkv":
        t = g.op(p + n, ops.Linear(d_model, widths[n], bias=bias), x, role=roles[n], label=n.upper())
        hd[n] = g.op(p + f"{n}_heads", ops.SplitHeads(count[n], dh), t, role=head_roles[n],
                     label=f"{n.upper()} heads")                                      # (B, heads, T, dh)
    for n, role in (("q", R.QUERY_ROTARY), ("k", R.KEY_ROTARY)):
        hd[n] = g.op(p + f"{n}_rotary", ops.Rotary(), hd[n], rotary, role=role, label=f"RoPE({n.upper()})")
    k = hd["k"]
    if kv_heads != heads:
        k = g.op(p + "k_repeat", ops.RepeatKV(heads / kv_heads), k, role=R.KEY_REPEAT, label="K repeated")
    half = kv_heads / 2
    outs = []
    for i in (1, 2):
        v = g.op(p + f"v_half{i}", ops.HeadSlice((i - 1) * half, half), hd["v"], role=R.VALUE_HALF,
                 label=f"V half {i}")                                                 # (B, h_kv/2, T, dh)
        # repeated twice back to h_kv heads, then h/h_kv times as K: 2h/h_kv in all
        v = g.op(p + f"v_repeat{i}", ops.RepeatKV(2 * heads / kv_heads), v, role=R.VALUE_REPEAT,
                 label=f"V half {i} repeated")                                        # (B, h, T, dh)
        s = g.op(p + f"scores{i}", ops.Matmul("attention_scores", transpose_b=True, causal=True), hd["q"], k,
                 role=R.SCORES, label=f"S{i} = Q Kᵀ")                                 # (B, h, T, T)
        s = g.op(p + f"scale{i}", ops.Scale(1 / sympy.sqrt(dh)), s, role=R.SCALE, label="S / √d_h")
        s = g.op(p + f"mask{i}", ops.CausalMask(), s, role=R.MASK, label="S + mask")
        a = g.op(p + f"softmax{i}", ops.Softmax(), s, role=R.SOFTMAX, label=f"A{i} = softmax(S{i})")
        outs.append(g.op(p + f"values{i}", ops.Matmul("attention_values", causal=True), a, v, role=R.VALUES,
                         label=f"Z{i} = A{i} V{i}"))                                  # (B, h, T, dh)
    z = g.op(p + "differential", ops.DiffCombine(dh), *outs, role=R.DIFF_COMBINE,
             label="Z1 − λ·Z2")                                                       # (B, h/2, T, 2dh)
    z = g.op(p + "group_norm", ops.RMSNorm(2 * dh, affine=False), z, role=R.DIFF_NORM,
             label="RMSNorm per head pair")                                           # (B, h/2, T, 2dh)
    z = g.op(p + "lambda_scale", ops.Scale(1 - LAMBDA_INIT), z, role=R.DIFF_SCALE, label="× (1 − λ_init)")
    z = g.op(p + "merge", ops.MergeHeads(), z, role=R.MERGE, label="Z merged")          # (B, T, h·dh)
    return g.op(p + "proj", ops.Linear(heads * dh, d_model, bias=bias), z, role=R.OUT,
                label="attn_out")                                                     # (B, T, d)


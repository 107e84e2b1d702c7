"""A mixture of attention heads as transformers' ``JetMoeAttention`` runs it (JetMoE, Shen et al.
2024; Zhang et al. 2022, "Mixture of Attention Heads"): a router (the softmax of its k largest
logits) picks k of E experts per token; each expert's query projection (d -> h_kv·d_head) gives
that token one slot of h_kv query heads, so a token has k·h_kv query heads; one shared key/value
projection (d -> 2·h_kv·d_head) gives h_kv key and value heads, repeated k times; RoPE on Q and
K; eager attention over the k·h_kv heads; each slot's heads go through its expert's output
projection (h_kv·d_head -> d), weighted by the router and summed, plus a learned bias (d)."""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import E, d, k
from ...graph import roles as R


def moa_attention(g, s, x, rotary):
    """JetMoE's attention of *x* (B, T, d) -> (B, T, d) under ``attention/``, with the decoder's sizes
    *s* (``decoder_flags.BuildSizes``: h_kv heads of d_head) and E experts, k per token."""
    p = "attention/"
    d_model, kv_heads, dh, experts, active = d, s.kv, s.dh, E, k
    w = kv_heads * dh
    heads = active * kv_heads
    r = g.op(p + "router", ops.Linear(d_model, experts, bias=False, tag="router"), x, role=R.MOA_ROUTER,
             label="router logits")                                                   # (B, T, E)
    gates = g.op(p + "topk", ops.TopK(active, normalize=False), r, role=R.MOA_TOP_K, label="top-k logits")
    gates = g.op(p + "router_softmax", ops.Softmax(), gates, role=R.MOA_ROUTER_SOFTMAX,
                 label="top-k weights")                                               # (B, T, k)
    with g.repeat(p + "q_experts", experts, active=active, label="query expert", role=R.EXPERTS):
        q = g.op("q", ops.Linear(d_model, w, bias=False), x, role=R.QUERY, label="Q slot")  # (B, T, h_kv·dh)
    q = g.op(p + "q_slots", ops.MoESlots(), q, gates, role=R.MOA_SLOTS, label="Q")      # (B, T, k·h_kv·dh)
    kv = g.op(p + "kv", ops.Linear(d_model, 2 * w, bias=False), x, role=R.QKV, label="K, V")  # (B, T, 2·h_kv·dh)
    hd = {"q": g.op(p + "q_heads", ops.SplitHeads(heads, dh), q, role=R.QUERY_HEADS, label="Q heads")}
    for i, (n, role, heads_role) in enumerate((("k", R.KEY, R.KEY_HEADS), ("v", R.VALUE, R.VALUE_HEADS))):
        t = g.op(p + n, ops.Slice(i * w, w), kv, role=role, label=n.upper())            # (B, T, h_kv·dh)
        hd[n] = g.op(p + f"{n}_heads", ops.SplitHeads(kv_heads, dh), t, role=heads_role,
                     label=f"{n.upper()} heads")                                      # (B, h_kv, T, dh)
    for n, role in (("q", R.QUERY_ROTARY), ("k", R.KEY_ROTARY)):
        hd[n] = g.op(p + f"{n}_rotary", ops.Rotary(), hd[n], rotary, role=role, label=f"RoPE({n.upper()})")
    for n, role in (("k", R.KEY_REPEAT), ("v", R.VALUE_REPEAT)):
        hd[n] = g.op(p + f"{n}_repeat", ops.RepeatKV(active), hd[n], role=role,
                     label=f"{n.upper()} repeated k times")                           # (B, k·h_kv, T, dh)
    s = g.op(p + "scores", ops.Matmul("attention_scores", transpose_b=True, causal=True), hd["q"], hd["k"],
             role=R.SCORES, label="S = Q Kᵀ")                                         # (B, k·h_kv, T, T)
    s = g.op(p + "scale", ops.Scale(1 / sympy.sqrt(dh)), s, role=R.SCALE, label="S / √d_h")
    s = g.op(p + "mask", ops.CausalMask(), s, role=R.MASK, label="S + mask")
    a = g.op(p + "softmax", ops.Softmax(), s, role=R.SOFTMAX, label="A = softmax(S)")
    z = g.op(p + "values", ops.Matmul("attention_values", causal=True), a, hd["v"], role=R.VALUES,
             label="Z = A V")                                                         # (B, k·h_kv, T, dh)
    z = g.op(p + "merge", ops.MergeHeads(), z, role=R.MERGE, label="Z merged")          # (B, T, k·h_kv·dh)
    # each slot's h_kv heads are its expert's input: one slot's width per expert copy
    z = g.op(p + "slot", ops.Slice(sympy.Integer(0), w), z, role=R.MOA_SLOT, label="one slot")  # (B, T, h_kv·dh)
    with g.repeat(p + "o_experts", experts, active=active, label="output expert", role=R.EXPERTS):
        o = g.op("o", ops.Linear(w, d_model, bias=False), z, role=R.OUT, label="slot out")  # (B, T, d)
    o = g.op(p + "combine", ops.MoECombine(), o, gates, role=R.MOA_COMBINE,
             label="Σ weights · slots")                                               # (B, T, d)
    return g.op(p + "bias", ops.ChannelBias(d_model), o, role=R.ATTENTION_BIAS, label="attn_out")  # (B, T, d)

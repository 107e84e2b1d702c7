"""The generic decoder's sublayers, declared on the op catalog under GPT-2's path scheme: the
norm a flag chooses, attention (fused or separate Q/K/V, grouped or multi-query heads, rotary,
ALiBi, sliding windows, soft-capping, per-head norms) and the FFN (MLP, gated, mixture of experts
with routed and shared experts).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...graph import roles
from ...core.errors import SymgptError
from ...core.symbols import E, d, h, k
from .encoder_layers import activation


def _norm(flags, dim) -> ops.Op:
    if flags["norm"] == "rmsnorm":
        return ops.RMSNorm(dim, offset=bool(flags.get("norm_offset")))
    return ops.LayerNorm(dim, bias=bool(flags["norm_bias"]))


def _attention(g, flags, s, a, table):
    dh, kv, qb = s.dh, s.kv, bool(flags["qkv_bias"])
    widths = {"q": h * dh, "k": kv * dh, "v": kv * dh}
    heads = {"q": h, "k": kv, "v": kv}
    proj, hd = {}, {}
    if flags["fused_qkv"]:  # each slice split into heads as it is taken (GPT-2's order)
        qkv = g.op("attention/qkv", ops.Linear(d, (h + 2 * kv) * dh, bias=qb), a,
                   label="QKV")                                                       # (B, T, (h+2h_kv)dh)
        start = sympy.Integer(0)
        for n in "qkv":
            index = 1 if flags["kv_index"] and n != "q" else 0  # Falcon: qkv[..., [-2], :], one entry
            proj[n] = g.op(f"attention/{n}", ops.Slice(start, widths[n], index=index), qkv,
                           label=n.upper())
            hd[n] = g.op(f"attention/{n}_heads", ops.SplitHeads(heads[n], dh), proj[n],
                         label=f"{n.upper()} heads")                                  # (B, heads, T, dh)
            start += widths[n]
    else:
        for n in "qkv":
            proj[n] = g.op(f"attention/{n}", ops.Linear(d, widths[n], bias=qb), a,
                           label=n.upper())                                           # (B, T, heads·dh)
    qk_roles = {"q": roles.QUERY_NORM, "k": roles.KEY_NORM}
    if flags["qk_norm"] == "full":  # OLMo 2: one norm over all heads of the projection
        if flags["fused_qkv"]:
            raise SymgptError("qk_norm=full with a fused QKV projection is not modelled")
        for n in "qk":
            proj[n] = g.op(f"attention/{n}_norm", _norm(flags, widths[n]), proj[n],
                           label=f"norm({n.upper()})", role=qk_roles[n])              # (B, T, heads·dh)
    if not flags["fused_qkv"]:
        hd = {n: g.op(f"attention/{n}_heads", ops.SplitHeads(heads[n], dh), proj[n],
                      label=f"{n.upper()} heads") for n in "qkv"}                     # (B, heads, T, dh)
    if flags["qk_norm"] == "head":  # Qwen3, Gemma 3: a norm of d_head on each head
        for n in "qk":
            hd[n] = g.op(f"attention/{n}_norm", _norm(flags, dh), hd[n],
                         label=f"norm({n.upper()} heads)", role=qk_roles[n])          # (B, heads, T, dh)
    if table is not None:
        for n in "qk":
            hd[n] = g.op(f"attention/{n}_rotary", ops.Rotary(), hd[n], table,
                         label=f"RoPE({n.upper()})")                                  # (B, heads, T, dh)
    if kv is not h:
        for n in "kv":
            hd[n] = g.op(f"attention/{n}_repeat", ops.RepeatKV(h / kv), hd[n],
                         label=f"{n.upper()} repeated")                               # (B, h, T, dh)
    sc = g.op("attention/scores", ops.Matmul("attention_scores", transpose_b=True, causal=True,
                                             window=s.window),
              hd["q"], hd["k"], label="S = Q Kᵀ")                                     # (B, h, T, T)
    scalar = sympy.Integer(flags["query_scalar"]) if flags["query_scalar"] else dh
    sc = g.op("attention/scale", ops.Scale(1 / sympy.sqrt(scalar)), sc, label="S / √d_h")  # (B, h, T, T)
    if flags["attn_softcap"]:
        sc = g.op("attention/softcap", ops.SoftCap(sympy.Integer(flags["attn_softcap"])), sc,
                  label="c·tanh(S/c)", role=roles.SCORE_SOFTCAP)                     # (B, h, T, T)
    if flags["positions"] == "alibi":
        sc = g.op("attention/alibi", ops.AlibiBias(), sc, label="S + ALiBi")          # (B, h, T, T)
    sc = g.op("attention/mask", ops.CausalMask(), sc, label="S + mask")               # (B, h, T, T)
    p = g.op("attention/softmax", ops.Softmax(), sc, label="A = softmax(S)")          # (B, h, T, T)
    if flags["dropout"]:
        p = g.op("attention/dropout", ops.Dropout(), p)
    z = g.op("attention/values", ops.Matmul("attention_values", causal=True, window=s.window),
             p, hd["v"], label="Z = A V")                                             # (B, h, T, dh)
    z = g.op("attention/merge", ops.MergeHeads(), z, label="Z merged")                # (B, T, h·dh)
    o = g.op("attention/proj", ops.Linear(h * dh, d, bias=bool(flags["proj_bias"])), z,
             label="attn_out")                                                        # (B, T, d)
    if flags["dropout"]:
        o = g.op("attention/dropout_out", ops.Dropout(), o)
    return o


def _ffn_body(g, flags, ff, x, prefix):
    """up (and gate) -> activation (-> gate product) -> down, under *prefix*."""
    bias = bool(flags["mlp_bias"])
    act = activation(flags["activation"])
    if flags["ffn"] == "mlp":
        u = g.op(f"{prefix}up", ops.Linear(d, ff, bias=bias), x, label="H")              # (B, T, d_ff)
        u = g.op(f"{prefix}act", act, u, label=f"{act.title}(H)")                        # (B, T, d_ff)
    else:
        if flags["fused_gate_up"]:
            gu = g.op(f"{prefix}gate_up", ops.Linear(d, 2 * ff, bias=bias), x,
                      label="gate, up")                                                  # (B, T, 2d_ff)
            gate = g.op(f"{prefix}gate", ops.Slice(sympy.Integer(0), ff), gu, label="G")  # (B, T, d_ff)
            up = g.op(f"{prefix}up", ops.Slice(ff, ff), gu, label="U")                   # (B, T, d_ff)
        else:
            gate = g.op(f"{prefix}gate", ops.Linear(d, ff, bias=bias), x, label="G")     # (B, T, d_ff)
            up = g.op(f"{prefix}up", ops.Linear(d, ff, bias=bias), x, label="U")         # (B, T, d_ff)
        gate = g.op(f"{prefix}act", act, gate, label=f"{act.title}(G)")                  # (B, T, d_ff)
        u = g.op(f"{prefix}mul", ops.Mul(), gate, up, label=f"{act.title}(G) ⊙ U")       # (B, T, d_ff)
    return g.op(f"{prefix}down", ops.Linear(ff, d, bias=bias), u, label="ffn_out")       # (B, T, d)


def _ffn(g, flags, s, x):
    if not flags["moe"]:
        o = _ffn_body(g, flags, s.ff, x, "ffn/")
    else:
        r = g.op("ffn/router", ops.Linear(d, E, bias=False, tag="router"), x,
                 label="router logits")                                               # (B, T, E)
        score = ops.Sigmoid() if flags["router"] == "sigmoid" else ops.Softmax()
        r = g.op("ffn/router_softmax", score, r, label="router probs")                # (B, T, E)
        w = g.op("ffn/topk", ops.TopK(k, normalize=bool(flags["topk_norm"]), groups=_groups(flags)), r,
                 label="top-k weights")                                               # (B, T, k)
        with g.repeat("ffn/experts", E, active=k, label="expert"):
            e = _ffn_body(g, flags, s.ff, x, "")                                      # (B, T, d) per expert
        o = g.op("ffn/combine", ops.MoECombine(), e, w, label="Σ weights · experts")  # (B, T, d)
        if flags["shared_expert"] != "none":
            o = _shared_expert(g, flags, s, x, o)                                     # (B, T, d)
    if flags["dropout"]:
        o = g.op("ffn/dropout", ops.Dropout(), o)
    return o


def _shared_expert(g, flags, s, x, routed):
    """A shared expert every token runs (a group of one, so its parts read as an FFN's), added
    to the routed experts' sum; Qwen2-MoE scales it by sigmoid(x·w) first."""
    with g.repeat("ffn/shared_expert", 1, label="shared expert"):
        sh = _ffn_body(g, flags, s.shared, x, "")                                     # (B, T, d)
    if flags["shared_expert"] == "gated":
        gate = g.op("ffn/shared_expert_gate", ops.Linear(d, sympy.Integer(1), bias=False), x,
                    label="shared gate", role=roles.SHARED_GATE)                      # (B, T, 1)
        gate = g.op("ffn/shared_expert_gate_act", ops.Sigmoid(), gate,
                    label="σ(gate)", role=roles.SHARED_GATE_ACT)                      # (B, T, 1)
        sh = g.op("ffn/shared_expert_scale", ops.Mul(), gate, sh,
                  label="σ(gate) · shared", role=roles.SHARED_SCALE)                  # (B, T, d)
    return g.op("ffn/shared_add", ops.Add(), routed, sh, label="routed + shared",
                role=roles.SHARED_ADD)                                                # (B, T, d)


def _groups(flags):
    """Group-limited routing (DeepSeek's ``n_group``/``topk_group``), when the family has it."""
    n, keep = flags.get("n_group"), flags.get("topk_group")
    if not n or not keep:
        return None
    return (n, 2 if flags["router"] == "sigmoid" else 1, keep)  # V3: the top 2 per group; V2: the max

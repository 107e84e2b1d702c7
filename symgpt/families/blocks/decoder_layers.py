"""The generic decoder's sublayers under GPT-2's path scheme, as its flags choose them: the norm
(``decoder_norm``), attention (``decoder_attention``, of the spec ``decoder_attention_spec``
makes: the builder of ``blocks/attention.py`` with fused or separate Q/K/V, grouped or
multi-query heads, rotary, ALiBi, sliding windows, soft-capping, Q/K norms) and the FFN
(``decoder_ffn``, of the spec ``decoder_ffn_spec`` makes: the builder of ``blocks/ffn.py``, an
MLP, gated, or a mixture of experts with routed and shared experts).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import E, d, h, k
from ...graph import roles as R
from .attention import AttentionSpec, Norms, OutputGate, Projections, Scores, attention
from .ffn import FFNSpec, MoE, ffn
from .encoder_layers import activation


def decoder_norm(flags, dim) -> ops.Op:
    """The decoder's norm of width *dim* as its flags choose it (RMSNorm or LayerNorm; ``norm_affine``
    false: no weight, as OLMo's parameter-free LayerNorm)."""
    affine = flags.get("norm_affine", True)
    if flags["norm"] == "rmsnorm":
        if not affine and flags.get("norm_offset"):
            raise SymgptError("norm_affine=false and norm_offset cannot be combined (no weight to offset)")
        return ops.RMSNorm(dim, offset=bool(flags.get("norm_offset")), affine=bool(affine))
    return ops.LayerNorm(dim, bias=bool(flags["norm_bias"]), affine=bool(affine))


def decoder_attention(g, flags, s, a, table):
    """The decoder's attention (GPT-2's paths under ``attention/``) as its flags choose it (``sinks``:
    a flag gpt-oss's family adds; ``diff_attention``: DiffLlama's family; ``window_kv_multiple``,
    ``sinks_window_only``, ``d_v``: flags MiMo-V2-Flash's adds)."""
    if flags.get("diff_attention"):
        from .differential import diff_attention
        return diff_attention(g, flags, s, a, table)                                  # (B, T, d)
    if flags.get("mixer") == "gated_delta":  # Qwen3-Next's linear-attention layers (stacks.py: linear_layers)
        from .gated_delta import gated_delta
        return gated_delta(g, flags, s, a)                                            # (B, T, d)
    if flags.get("mixer") == "lightning":  # MiniMax-Text-01's linear-attention layers (stacks.py: linear_layers)
        from .lightning import lightning
        return lightning(g, flags, s, a)                                              # (B, T, d)
    if flags.get("moa"):
        from .moa import moa_attention
        return moa_attention(g, s, a, table)                                          # (B, T, d)
    return attention(g, a, decoder_attention_spec(flags, s), rotary=table)          # (B, T, d)


def decoder_attention_spec(flags, s) -> AttentionSpec:
    """The attention of the generic decoder's *flags* and sizes *s* (``decoder_flags.BuildSizes``)
    under GPT-2's paths (``attention/``)."""
    kv, sinks, dv = s.kv, bool(flags.get("sinks")), flags.get("d_v")
    if flags.get("window_kv_multiple") and flags["window"]:  # MiMo-V2-Flash: more K/V heads in sliding layers
        kv = kv * sympy.Integer(flags["window_kv_multiple"])
    if flags.get("sinks_window_only") and not flags["window"]:  # MiMo-V2-Flash: sinks in sliding layers only
        sinks = False
    projections = Projections(fused=bool(flags["fused_qkv"]), kv_index=bool(flags["kv_index"]),
                              bias=bool(flags["qkv_bias"]), out_bias=bool(flags["proj_bias"]))
    norms = Norms(qk=flags["qk_norm"], norm=lambda dim: decoder_norm(_qk_norm_flags(flags), dim),
                  after_rotary=bool(flags.get("qk_norm_after_rope")),
                  sub=(lambda dim: decoder_norm(flags, dim)) if flags.get("sub_norms") else None)
    scale = ((sympy.Integer(flags["query_scalar"]) if flags["query_scalar"] else s.dh)
             if flags.get("scores_scaled", True) else None)
    scores = Scores(scale=scale, softcap=flags["attn_softcap"], alibi=flags["positions"] == "alibi",
                    dynamic_mask=bool(flags.get("dynamic_mask")), sinks=sinks,
                    sink_scale=bool(flags.get("sink_scale")))
    gate = OutputGate(_out_gate(flags), per_head=bool(flags.get("attn_gate_per_head")),
                      bias=bool(flags.get("attn_gate_bias")))
    return AttentionSpec(d, h, dh=s.dh, kv_heads=kv, dv=sympy.Integer(dv) if dv else None, window=s.window,
                         dropout=bool(flags["dropout"]), rotary_interleave=bool(flags.get("rotary_interleave")),
                         projections=projections, norms=norms, scores=scores, gate=gate)


def _out_gate(flags):
    """The attention output gate (``attn_gate``: a flag the gated-attention families add)."""
    gate = flags.get("attn_gate") or "none"
    return None if gate == "none" else gate


def _qk_norm_flags(flags):
    """The flags of the query/key norms: the model's, or parameter-free ones when the family's
    ``qk_norm_affine`` flag is false (Llama 4's L2 norm of each head)."""
    return {**flags, "norm_affine": False} if flags.get("qk_norm_affine") is False else flags


def decoder_ffn(g, flags, s, x):
    """The decoder's FFN (GPT-2's paths under ``ffn/``): dense, or a mixture of experts (``router_bias``:
    a flag gpt-oss's family adds; ``all_experts``: Llama 4's, every expert runs on every token;
    ``experts_bias``: JetMoE's bias after the experts; ``score_bias``, ERNIE 4.5-MoE's, and
    ``router_score_bias``, the gated-attention families': one learned bias per expert on the
    scores for the choice, ``ops.ScoreBias``)."""
    if flags.get("cdmoe"):  # Doge's cross-domain mixture: a gated MLP plus single-neuron experts
        from .cdmoe import cdmoe
        return cdmoe(g, flags, s, x)                                                  # (B, T, d)
    o = ffn(g, x, decoder_ffn_spec(flags, s))                                         # (B, T, d)
    if flags.get("experts_bias"):  # JetMoE: a learned bias after the experts' weighted sum
        o = g.op("ffn/experts_bias", ops.ChannelBias(d), o, role=R.EXPERTS_BIAS, label="ffn_out")  # (B, T, d)
    return o


def decoder_ffn_spec(flags, s) -> FFNSpec:
    """The FFN of the generic decoder's *flags* and sizes *s* under GPT-2's paths (``ffn/``)."""
    moe = None
    if flags["moe"]:
        moe = MoE(E, k, score=flags["router"], normalize=bool(flags["topk_norm"]), groups=_groups(flags),
                  shared=flags["shared_expert"], shared_ff=s.shared, router_bias=bool(flags.get("router_bias")),
                  score_bias=bool(flags.get("score_bias") or flags.get("router_score_bias")),
                  runs=E if flags.get("all_experts") else None)
    return FFNSpec(d, s.ff, activation(flags["activation"]), bias=bool(flags["mlp_bias"]),
                   gated=flags["ffn"] != "mlp", fused_gate_up=bool(flags["fused_gate_up"]),
                   dropout=bool(flags["dropout"]), moe=moe,
                   sub_norm=(lambda dim: decoder_norm(flags, dim))
                   if flags.get("sub_norms") or flags.get("ffn_sub_norm") else None)


def _groups(flags):
    """Group-limited routing (DeepSeek's ``n_group``/``topk_group``), when the family has it."""
    n, keep = flags.get("n_group"), flags.get("topk_group")
    if not n or not keep:
        return None
    return (n, 2 if flags["router"] == "sigmoid" else 1, keep)  # V3: the top 2 per group; V2: the max

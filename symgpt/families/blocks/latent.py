"""Multi-latent attention's sizes and its queries, keys and values (DeepSeek-AI 2024,
"DeepSeek-V2", Sec. 2.1; transformers' ``DeepseekV3Attention``), the part of the attention
builder (``blocks/attention.py``) that ``AttentionSpec.mla`` chooses; the DeepSeek family's block
is ``blocks/mla.py``."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...graph import roles


@dataclass(frozen=True)
class MLA:
    """Multi-latent attention's sizes (DeepSeek-AI 2024, "DeepSeek-V2", Sec. 2.1): ``q_rank``
    (q_lora_rank; None: one q_proj), ``kv_rank`` (kv_lora_rank), ``nope`` and ``rope`` (each
    query/key head's dimensions without and with positions), ``v`` (each value head's);
    ``complex_rope``: RoPE as a complex product (DeepSeek-V2 in transformers)."""

    q_rank: sympy.Expr | None
    kv_rank: sympy.Expr
    nope: sympy.Expr
    rope: sympy.Expr
    v: sympy.Expr
    complex_rope: bool = False
    #: A.X-K2: one q_gate_proj of [norm(C_Q), C_Q] gives each head's query and an output gate (v),
    #: sigmoid(gate) multiplying the heads' output before o_proj
    q_gate: bool = False


def latent_projections(g, a, step, spec, table):
    """Multi-latent attention's queries, keys and values (transformers' DeepseekV3Attention):
    queries through q_a_proj, its RMSNorm and q_b_proj (or one q_proj), each head split into a
    part without positions and a rotary part; keys and values from kv_a_proj_with_mqa's latent
    (RMSNorm-ed: what a cache holds) expanded by kv_b_proj, each key completed by the one rotary
    key every head shares (also cached). Returns Q, K, V heads and the merged width h·v."""
    d_model, heads, m, bias = spec.d_model, spec.heads, spec.mla, spec.projections.bias
    nope, rope, vd, c = m.nope, m.rope, m.v, m.kv_rank
    qk = nope + rope
    q_latent = gate = None
    if m.q_gate and not m.q_rank:
        raise SymgptError("a query/output gate projection needs the query latent (q_lora_rank)")
    if m.q_rank:
        r = m.q_rank
        q = g.op(step("q_down"), ops.Linear(d_model, r, bias=bias), a, label="C_Q",
                 role=roles.QUERY_DOWN)                                                   # (B, T, r_q)
        c_q = q
        q = g.op(step("q_latent_norm"), ops.RMSNorm(r), q, label="norm(C_Q)",
                 role=roles.QUERY_LATENT_NORM)                                            # (B, T, r_q)
        q_latent = q
    if m.q_gate:  # A.X-K2: q_gate_proj([norm(C_Q), C_Q]) -> each head's query and output gate
        q = g.op(f"{step.module}/q_gate_input", ops.Concat(), q_latent, c_q, label="[norm(C_Q), C_Q]",
                 role=roles.QUERY_GATE_INPUT)                                             # (B, T, 2·r_q)
        q = g.op(f"{step.module}/q_gate_proj", ops.Linear(2 * m.q_rank, heads * (qk + vd), bias=False), q,
                 label="Q, G", role=roles.QUERY_GATE)                                     # (B, T, h·(qk+v))
        q = g.op(f"{step.module}/q_gate_heads", ops.SplitHeads(heads, qk + vd), q, label="Q, G heads",
                 role=roles.QUERY_GATE_HEADS)                                             # (B, h, T, qk+v)
        gate = g.op(f"{step.module}/gate", ops.Slice(qk, vd), q, label="G",
                    role=roles.OUTPUT_GATE)                                               # (B, h, T, v)
        q = g.op(step("q_heads"), ops.Slice(sympy.Integer(0), qk), q, label="Q heads",
                 role=roles.QUERY_HEADS)                                                  # (B, h, T, nope+rope)
    else:
        if m.q_rank:
            q = g.op(step("q_up"), ops.Linear(r, heads * qk, bias=False), q, label="Q",
                     role=roles.QUERY_UP)                                                 # (B, T, h·(nope+rope))
        else:
            q = g.op(step("q_proj"), ops.Linear(d_model, heads * qk, bias=False), a, label="Q",
                     role=roles.QUERY)                                                    # (B, T, h·(nope+rope))
        q = g.op(step("q_heads"), ops.SplitHeads(heads, qk), q, label="Q heads",
                 role=roles.QUERY_HEADS)                                                  # (B, h, T, nope+rope)
    q_pass = g.op(step("q_nope"), ops.Slice(sympy.Integer(0), nope), q, label="Q_C",
                  role=roles.QUERY_NOPE)                                                  # (B, h, T, nope)
    q_rot = g.op(step("q_rope"), ops.Slice(nope, rope), q, label="Q_R", role=roles.QUERY_ROPE)
    rotary = ops.Rotary(complex=bool(m.complex_rope))
    if table is not None:  # no table: the rotary parts are not rotated (Kimi Linear's MLA has no positions)
        q_rot = g.op(step("q_rotary"), rotary, q_rot, table, label="RoPE(Q_R)",
                     role=roles.QUERY_ROTARY)                                             # (B, h, T, rope)
    kv = g.op(step("kv_down"), ops.Linear(d_model, c + rope, bias=bias), a,
              label="C_KV, K_R", role=roles.KV_DOWN)                                      # (B, T, c+rope)
    lat = g.op(step("kv_down_latent"), ops.Slice(sympy.Integer(0), c), kv, label="C_KV",
               role=roles.KV_DOWN_LATENT)                                                 # (B, T, c)
    lat = g.op(step("kv_latent"), ops.RMSNorm(c), lat, label="norm(C_KV)",
               role=roles.KV_LATENT)                                                      # (B, T, c): cached
    k_rot = g.op(step("kv_down_rope"), ops.Slice(c, rope), kv, label="K_R", role=roles.KV_DOWN_ROPE)
    k_rot = g.op(step("k_rope_head"), ops.SplitHeads(sympy.Integer(1), rope), k_rot, label="K_R head",
                 role=roles.KEY_ROPE_HEAD if table is not None else roles.KEY_ROPE)      # (B, 1, T, rope)
    if table is not None:
        k_rot = g.op(step("k_rope"), rotary, k_rot, table, label="RoPE(K_R)",
                     role=roles.KEY_ROPE)                                                 # (B, 1, T, rope): cached
    up = g.op(step("kv_up"), ops.Linear(c, heads * (nope + vd), bias=False), lat,
              label="K_C, V", role=roles.KV_UP)                                           # (B, T, h·(nope+v))
    up = g.op(step("kv_up_heads"), ops.SplitHeads(heads, nope + vd), up, label="K_C, V heads",
              role=roles.KV_UP_HEADS)                                                     # (B, h, T, nope+v)
    k_pass = g.op(step("k_nope"), ops.Slice(sympy.Integer(0), nope), up, label="K_C",
                  role=roles.KEY_NOPE)                                                    # (B, h, T, nope)
    v = g.op(step("v"), ops.Slice(nope, vd), up, label="V", role=roles.VALUE)            # (B, h, T, v)
    qf = g.op(step("q_parts"), ops.Concat(), q_pass, q_rot, label="[Q_C, Q_R]",
              role=roles.QUERY_PARTS)                                                     # (B, h, T, nope+rope)
    kf = g.op(step("k_parts"), ops.Concat(), k_pass, k_rot, label="[K_C, K_R]",
              role=roles.KEY_PARTS)                                                       # (B, h, T, nope+rope)
    return qf, kf, v, heads * vd, q_latent, gate

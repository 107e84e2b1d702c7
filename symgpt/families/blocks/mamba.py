"""Mamba and Mamba-2 language models, declared on the op catalog with transformers' module names
(``MambaForCausalLM``, ``FalconMambaForCausalLM``, ``Mamba2ForCausalLM``).

A token embedding, L pre-norm blocks ``x + mixer(RMSNorm(x))``, a final RMSNorm and the LM head
(tied to the embedding when ``tied``). The Mamba-1 mixer (``MambaMixer``): in_proj d -> 2·d_inner
split into x and the gate z; a depthwise causal conv1d of kernel d_conv on x and SiLU; x_proj
d_inner -> r_dt + 2·d_state split into Δ, B and C (Falcon-Mamba normalises each by a
parameter-free RMSNorm); dt_proj r_dt -> d_inner (its bias is Δ's bias); the selective scan;
y·silu(z); out_proj d_inner -> d. The Mamba-2 mixer (``Mamba2Mixer``): in_proj d -> z, xBC and Δ
(d_inner + (d_inner + 2·G·N) + H); the conv1d and SiLU on xBC, split into x, B and C; the SSD
scan; a grouped RMSNorm of y·silu(z); out_proj.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...graph import roles as R
from ...graph.arch import Builder
from ...core.symbols import B, G_ssm, L, Q_chunk, T, V, d, d_conv, d_inner, d_state, h_ssm, r_dt


def _split(g, name, x, start, size, label):
    return g.op(name, ops.Slice(start, size), x, role=R.SSM_SPLIT, label=label)


def _mamba1_mixer(g, x, flags):
    bias = bool(flags["proj_bias"])
    xz = g.op("mixer/in_proj", ops.Linear(d, 2 * d_inner, bias=bias), x, role=R.SSM_IN, label="in_proj")
    u = _split(g, "mixer/x", xz, sympy.Integer(0), d_inner, "x")
    z = _split(g, "mixer/z", xz, d_inner, d_inner, "gate z")
    u = g.op("mixer/conv1d", ops.CausalConv1d(d_inner, d_conv, bias=bool(flags["conv_bias"])), u,
             role=R.SSM_CONV, label="causal conv1d")
    u = g.op("mixer/act", ops.SiLU(), u, role=R.SSM_CONV_ACT, label="silu(conv)")
    p = g.op("mixer/x_proj", ops.Linear(d_inner, r_dt + 2 * d_state, bias=False), u, role=R.SSM_X, label="x_proj")
    dt = _split(g, "mixer/dt_in", p, sympy.Integer(0), r_dt, "Δ (rank r)")
    b = _split(g, "mixer/B", p, r_dt, d_state, "B")
    c = _split(g, "mixer/C", p, r_dt + d_state, d_state, "C")
    if flags["bcdt_norm"]:  # Falcon-Mamba: parameter-free RMSNorms of Δ, B and C (Jamba: with weights)
        affine = bool(flags.get("bcdt_affine"))
        dt = g.op("mixer/dt_layernorm", ops.RMSNorm(r_dt, affine=affine), dt, role=R.SSM_NORM, label="norm(Δ)")
        b = g.op("mixer/b_layernorm", ops.RMSNorm(d_state, affine=affine), b, role=R.SSM_NORM, label="norm(B)")
        c = g.op("mixer/c_layernorm", ops.RMSNorm(d_state, affine=affine), c, role=R.SSM_NORM, label="norm(C)")
    dt = g.op("mixer/dt_proj", ops.Linear(r_dt, d_inner, bias=True), dt, role=R.SSM_DT, label="dt_proj")
    y = g.op("mixer/scan", ops.SelectiveScan(d_inner, d_state), u, dt, b, c, role=R.SSM_SCAN,
             label="selective scan")
    return y, z


def _mamba2_mixer(g, x, flags):
    bias = bool(flags["proj_bias"])
    gn = G_ssm * d_state
    conv_dim = d_inner + 2 * gn
    p = g.op("mixer/in_proj", ops.Linear(d, d_inner + conv_dim + h_ssm, bias=bias), x, role=R.SSM_IN,
             label="in_proj")
    z = _split(g, "mixer/z", p, sympy.Integer(0), d_inner, "gate z")
    xbc = _split(g, "mixer/xBC", p, d_inner, conv_dim, "x, B, C")
    dt = _split(g, "mixer/dt", p, d_inner + conv_dim, h_ssm, "Δ")
    xbc = g.op("mixer/conv1d", ops.CausalConv1d(conv_dim, d_conv, bias=bool(flags["conv_bias"])), xbc,
               role=R.SSM_CONV, label="causal conv1d")
    xbc = g.op("mixer/act", ops.SiLU(), xbc, role=R.SSM_CONV_ACT, label="silu(conv)")
    u = _split(g, "mixer/x", xbc, sympy.Integer(0), d_inner, "x")
    b = _split(g, "mixer/B", xbc, d_inner, gn, "B")
    c = _split(g, "mixer/C", xbc, d_inner + gn, gn, "C")
    y = g.op("mixer/scan", ops.SSDScan(h_ssm, d_inner / h_ssm, d_state, G_ssm, Q_chunk), u, dt, b, c,
             role=R.SSM_SCAN, label="SSD scan")
    return y, z


def mixer(g, a, flags):
    """The whole mixer of *a* (B, T, d) -> (B, T, d) under ``mixer/``: Mamba-1's (``version`` 1) or
    Mamba-2's, the gate y·silu(z), Mamba-2's grouped RMSNorm, out_proj."""
    two = flags["version"] == 2
    y, z = (_mamba2_mixer if two else _mamba1_mixer)(g, a, flags)
    gate = g.op("mixer/gate_act", ops.SiLU(), z, role=R.SSM_GATE_ACT, label="silu(z)")
    y = g.op("mixer/gate", ops.Mul(), y, gate, role=R.SSM_GATE, label="y · silu(z)")
    if two and flags.get("ssm_norm", True):  # Falcon-H1 may leave it out (mamba_rms_norm)
        y = g.op("mixer/norm", ops.RMSNorm(d_inner, groups=G_ssm), y, role=R.SSM_OUT_NORM,
                 label="grouped RMSNorm")
    out_bias = flags.get("out_proj_bias", flags["proj_bias"])  # Falcon-H1: its own (projectors_bias)
    return g.op("mixer/out_proj", ops.Linear(d_inner, d, bias=bool(out_bias)), y, role=R.SSM_OUT,
                label="out_proj")


def build(flags, bound, name="mamba"):
    g = Builder(name, declared_roles=True)
    two = flags["version"] == 2
    if two:
        g.require("integer", d_inner / h_ssm, "d_inner must be divisible by h_ssm (head_dim)", id="heads_divide_inner")
        g.require("integer", h_ssm / G_ssm, "h_ssm must be divisible by G_ssm", id="groups_divide_heads")
    ids = g.input("input_ids", (B, T), label="input_ids", role=R.TOKENS)
    x = g.op("backbone/embeddings", ops.Embedding(V, d), ids, label="tok_emb", role=R.TOKEN_EMBEDDING)  # (B, T, d)
    with g.repeat("backbone/layers", L, label="Mamba block", carry=x, role=R.STACK):
        a = g.op("norm", ops.RMSNorm(d), x, role=R.MIXER_NORM, label="RMSNorm")
        o = mixer(g, a, flags)
        x = g.op("residual", ops.Add(), x, o, role=R.MIXER_RESIDUAL, label="X + mixer")        # (B, T, d)
    x = g.op("backbone/norm_f", ops.RMSNorm(d), x, role=R.FINAL_NORM, label="final norm")
    tie = {"weight": g.param("backbone/embeddings")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), x, tie=tie, label="logits",
                  role=R.HEAD)                                                                  # (B, T, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, label="loss", role=R.LOSS) if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))

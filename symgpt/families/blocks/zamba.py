"""Zamba and Zamba2: Mamba layers with one (or a few) transformer blocks whose weights are shared by
several layers (transformers' ZambaForCausalLM, Zamba2ForCausalLM; Glorioso et al. 2024, "Zamba: A
Compact 7B SSM Hybrid Model", Fig. 2; Zyphra 2024, "Zamba2", arXiv:2411.15242).

Every layer is a Mamba layer ``x + mixer(RMSNorm(x + t))``: t = 0 in a plain Mamba layer; in a
hybrid layer t = linear(shared(x, emb)), where ``shared`` is the shared transformer block over
[x; emb] (the layer input concatenated with the token embeddings, width 2d): RMSNorm(2d),
attention (Q/K/V of 2d -> h·d_head, o_proj back to d; scores scaled by (d_head/2)^-1/2), RMSNorm(d)
and a gated MLP, with no residual inside; ``linear`` is each layer's own d -> d map.

Weight sharing is declared with the graph's ties (``Builder.shares``): the first hybrid layer using
a shared block owns its weights (a stack of one layer), every later use is a stack whose shared-block
ops tie their parameters to the owner's, so the weights count once and the FLOPs, activations, KV
cache and Mamba state at every use. Zamba2 cycles through ``mem_blocks`` shared blocks (hybrid
use i runs block i mod mem_blocks) and gives each use its own LoRA adapters: on Q, K and V
(``adapters``) and always on the MLP's fused gate/up projection. Layer order changes no count:
the plain Mamba layers are one stack, the hybrid layers one or two stacks per shared block.
"""

from __future__ import annotations

from contextlib import nullcontext

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import B, L_hyb, L_ssm, T, V, d, d_ff, d_head, h, h_kv
from ...graph import roles as R
from ...graph.arch import Builder
from .attention import AttentionSpec, Projections, Scores, attention
from .encoder_layers import activation
from .ffn import FFNSpec, ffn
from .mamba import mixer


def uses(flags) -> list[int]:
    """How many hybrid layers run each shared block (use i runs block i mod mem_blocks)."""
    n, m = flags["hybrid_layers"] or 0, flags["mem_blocks"]
    return [len(range(b, n, m)) for b in range(m)]


def stacks(flags) -> list[tuple[str, sympy.Expr, int, str | None]]:
    """(stack name, layers, shared block, owner stack or None) of the hybrid layers, in order:
    per shared block, the first use (owns the block's weights) and the later uses (tie to it).
    With one shared block the later uses are counted in ``L_hyb`` (bound to hybrid_layers); with m
    blocks, block b runs every m-th use from b (a fixed interleave), its count an integer."""
    out = []
    m = flags["mem_blocks"]
    for b, n in enumerate(uses(flags)):
        if not n:
            continue
        sfx = "" if m == 1 else f"_block{b}"
        out.append((f"hybrid_first{sfx}", sympy.Integer(1), b, None))
        if n > 1:
            runs = L_hyb if m == 1 else sympy.Integer(n)
            out.append((f"hybrid_rest{sfx}", runs - 1, b, f"hybrid_first{sfx}"))
    return out


def _lora(g, x, width_in, width_out, r, name):
    """A per-use low-rank adapter of *x*: Linear(width_in, r) -> Linear(r, width_out), no biases."""
    with g.shares(None):  # each use owns its adapter, also inside a later use of the block
        a = g.op(f"{name}_adapter/down", ops.Linear(width_in, r, bias=False), x, role=R.LORA_DOWN,
                 label="adapter A")                                                               # (B, T, r)
        return g.op(f"{name}_adapter/up", ops.Linear(r, width_out, bias=False), a, role=R.LORA_UP,
                    label="adapter B")                                                            # (B, T, width_out)


def _shared_block(g, flags, x, emb, table, dh, kv):
    """The shared transformer block of [x; emb] -> (B, T, d), under ``shared/``."""
    two = flags["version"] == 2
    r = sympy.Integer(flags["adapter_rank"]) if two else None
    if not two and flags.get("adapters"):
        raise SymgptError("per-use attention adapters are Zamba2's (version 2)")
    c = g.op("shared/concat", ops.Concat(), x, emb, role=R.SHARED_INPUT_CONCAT, label="[X; emb]")  # (B, T, 2d)
    a = g.op("shared/input_layernorm", ops.RMSNorm(2 * d), c, role=R.ATTENTION_NORM, label="RMSNorm")
    adapter = None
    if two and flags.get("adapters"):
        def adapter(g, xin, n, proj):
            # the adapter's output is 2d wide in transformers; h·d_head = h_kv·d_head = 2d (checked)
            lo = _lora(g, xin, 2 * d, g.graph.nodes[proj]["shape"][-1], r, f"shared/attention/{n}")
            with g.shares(None):
                return g.op(f"shared/attention/{n}_adapter/add", ops.Add(), proj, lo, role=R.LORA_ADD,
                            label=f"{n.upper()} + adapter")                                   # (B, T, 2d)
    o = attention(g, a, AttentionSpec(d, h, dh=dh, kv_heads=kv, d_in=2 * d, module="shared/attention",
                                      projections=Projections(adapter=adapter),
                                      scores=Scores(scale=dh / 2, label="S / √(d_h/2)")), rotary=table)
    f = g.op("shared/pre_ff_layernorm", ops.RMSNorm(d), o, role=R.FFN_NORM, label="RMSNorm")
    ff_adapter = None
    if two:
        def ff_adapter(g, xin, gu):
            lo = _lora(g, xin, d, 2 * d_ff, r, "shared/mlp/gate_up")
            with g.shares(None):
                return g.op("shared/mlp/gate_up_adapter/add", ops.Add(), gu, lo, role=R.LORA_ADD,
                            label="gate, up + adapter")                                       # (B, T, 2d_ff)
    bias = bool(flags["mlp_bias"])
    return ffn(g, f, FFNSpec(d, d_ff, activation(flags["activation"]), prefix="shared/mlp/", bias=bias, gated=True,
                             fused_gate_up=two, adapter=ff_adapter))                           # (B, T, d)


def _mamba_layer(g, flags, x, t=None):
    """x + mixer(RMSNorm(x + t)) (t: the shared block's mapped output in a hybrid layer)."""
    a = x
    if t is not None:
        a = g.op("shared_add", ops.Add(), x, t, role=R.SHARED_OUT_ADD, label="X + linear(shared)")  # (B, T, d)
    a = g.op("mamba_norm", ops.RMSNorm(d), a, role=R.MIXER_NORM, label="RMSNorm")
    o = mixer(g, a, flags)
    return g.op("mamba_residual", ops.Add(), x, o, role=R.MIXER_RESIDUAL, label="X + Mamba")          # (B, T, d)


def build(flags, bound, name="zamba"):
    g = Builder(name, declared_roles=True)
    two = flags["version"] == 2
    if two:
        from ...core.symbols import G_ssm, d_inner, h_ssm
        g.require("integer", d_inner / h_ssm, "d_inner must be divisible by h_ssm (head_dim)", id="heads_divide_inner")
        g.require("integer", h_ssm / G_ssm, "h_ssm must be divisible by G_ssm", id="groups_divide_heads")
    if not flags["mamba_layers"] and not flags["hybrid_layers"]:
        raise SymgptError("a Zamba model needs at least one layer (mamba_layers and hybrid_layers are unset)")
    if not isinstance(flags["mem_blocks"], int) or flags["mem_blocks"] < 1:
        raise SymgptError("mem_blocks must be a positive number of shared blocks")
    if two and (not isinstance(flags.get("adapter_rank"), int) or flags["adapter_rank"] < 1):
        raise SymgptError("adapter_rank must be a positive integer")
    hybrid = bool(flags["hybrid_layers"])
    kv = h_kv if "h_kv" in bound else h
    dh = d_head if "d_head" in bound else 2 * d / h
    if hybrid and kv is h_kv:
        g.require("integer", h / h_kv, "h must be a multiple of h_kv", id="kv_heads_divide_heads")
    if hybrid and dh is not d_head:
        g.require("integer", 2 * d / h, "2d must be divisible by h", id="heads_divide_width")
    if hybrid and two and flags.get("adapters"):
        # the adapters map 2d -> 2d and are added to Q, K and V (transformers' Zamba2Attention)
        g.require("le", h * dh - 2 * d, "Zamba2's attention adapters need h·d_head = 2d", id="adapter_width")
        g.require("le", 2 * d - h * dh, "Zamba2's attention adapters need h·d_head = 2d", id="adapter_width")
        g.require("le", kv * dh - 2 * d, "Zamba2's attention adapters need h_kv·d_head = 2d", id="adapter_width")
        g.require("le", 2 * d - kv * dh, "Zamba2's attention adapters need h_kv·d_head = 2d", id="adapter_width")
    ids = g.input("input_ids", (B, T), label="input_ids", role=R.TOKENS)
    x = g.op("embed_tokens", ops.Embedding(V, d), ids, label="tok_emb", role=R.TOKEN_EMBEDDING)  # (B, T, d)
    emb = x
    table = None
    if hybrid and flags["rotary"]:
        table = g.op("rotary", ops.RotaryTable(dh), "input_ids", label="cos, sin", role=R.ROTARY_TABLE)
    mamba = "Mamba-2" if two else "Mamba"
    if flags["mamba_layers"]:
        with g.repeat("mamba_layers", L_ssm, label=f"{mamba} layer", carry=x,
                      role=R.STACK):
            x = _mamba_layer(g, flags, x)
    owners: dict[int, str] = {}  # shared block -> the path of the stack owning its weights
    for stack, count, block, owner in stacks(flags):
        label = (f"hybrid layer (shared block {block}" + (", its weights' owner)" if owner is None else
                                                          f", weights of {owner})"))
        with g.repeat(stack, count, label=label, carry=x, role=R.STACK) as path:
            owners.setdefault(block, path)
            with g.shares(owners[block]) if owner is not None else nullcontext():
                t = _shared_block(g, flags, x, emb, table, dh, kv)
            t = g.op("linear", ops.Linear(d, d, bias=False), t, role=R.SHARED_OUT_LINEAR, label="linear")  # (B, T, d)
            x = _mamba_layer(g, flags, x, t)
    x = g.op("final_layernorm", ops.RMSNorm(d), x, role=R.FINAL_NORM, label="final norm")
    tie = {"weight": g.param("embed_tokens")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), x, tie=tie, label="logits",
                  role=R.HEAD)                                                                  # (B, T, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, label="loss", role=R.LOSS) if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))

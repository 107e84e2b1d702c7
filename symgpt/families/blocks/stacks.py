"""Layers that differ, as a sequence of stacks: each a top-level repeated group (``roles.STACK``)
with its own count, costed × that count in closed form.

A decoder whose layers are all alike is one stack ``blocks`` of L. DeepSeek's first dense layers
(``dense_layers = n``, with ``moe``) are a stack ``dense_blocks`` of n before ``blocks`` of L - n;
Gemma's full-attention layers among sliding-window ones (``full_every = p``, with ``window``) a
stack ``full_blocks`` of floor(L/p) after ``blocks`` of L - floor(L/p). n is a config integer;
floor(L/p) stays symbolic in L.
"""

from __future__ import annotations

import math

import sympy

from ...graph import roles
from ...core.errors import SymgptError
from ...core.symbols import L


def stacks(flags) -> list[tuple[str, sympy.Expr, dict, str]]:
    """The repeated groups of layers, in forward order: (name, count, flag changes, label).

    Every layer alike: one stack ``blocks`` of L. Layers that differ are a sequence of stacks,
    each costed × its own count in closed form: ``dense_layers = n`` (with ``moe``) puts n
    dense-FFN layers (``dense_blocks``) before L - n MoE layers (``blocks``), as DeepSeek's
    first_k_dense_replace does; ``full_every = p`` (with ``window``) makes floor(L/p) layers
    full-attention (``full_blocks``, after L - floor(L/p) sliding-window ``blocks``). Gemma
    interleaves them (every p-th layer is full): the order of the stacks changes no count. Both
    together (EXAONE-MoE) make up to four stacks: the dense layers, sliding and full, then the MoE
    layers, sliding and full, the full layers being every p-th counted from the first layer.
    ``last_proj_bias`` makes the last layer a stack ``last_blocks`` of one whose attention output
    projection has a bias (GPT-NeoX-Japanese), after L - 1 ``blocks``."""
    if flags.get("moe_every") or flags.get("nope_every"):
        if flags["dense_layers"] or flags["full_every"] or flags.get("last_proj_bias"):
            raise SymgptError("moe_every / nope_every cannot be combined with dense_layers, full_every or "
                              "last_proj_bias")
        return _periodic(flags)
    n_dense, p = flags["dense_layers"] or 0, flags["full_every"]
    if isinstance(n_dense, bool) or not isinstance(n_dense, int) or n_dense < 0:
        raise SymgptError(f"dense_layers must be a whole number, got {n_dense!r}")
    if p is not None and (isinstance(p, bool) or not isinstance(p, int) or p < 2):
        raise SymgptError(f"full_every must be an integer of at least 2, got {p!r}")
    if n_dense and not flags["moe"]:
        raise SymgptError("dense_layers needs moe=true (dense layers before the experts)")
    if p and not flags["window"]:
        raise SymgptError("full_every needs window=true (full-attention layers among sliding ones)")
    if n_dense and p:
        # every p-th layer full counted from the first (layer i is full when (i + 1) % p == 0): floor(n/p)
        # of the n dense layers are full-attention, floor(L/p) - floor(n/p) of the MoE layers
        full, dense_full = sympy.floor(L / p), n_dense // p
        out = [("dense_blocks", sympy.Integer(n_dense - dense_full), {"moe": False}, "dense sliding-window layer")]
        if dense_full:
            out.append(("dense_full_blocks", sympy.Integer(dense_full), {"moe": False, "window": False},
                        "dense full-attention layer"))
        return out + [("blocks", L - n_dense - full + dense_full, {}, "MoE sliding-window layer"),
                      ("full_blocks", full - dense_full, {"window": False}, "MoE full-attention layer")]
    if flags.get("last_proj_bias"):
        if n_dense or p or flags["proj_bias"]:
            raise SymgptError("last_proj_bias cannot be combined with dense_layers, full_every or proj_bias")
        return [("blocks", L - 1, {}, "Transformer block"),
                ("last_blocks", sympy.Integer(1), {"proj_bias": True}, "last layer (output-projection bias)")]
    if n_dense:
        return [("dense_blocks", sympy.Integer(n_dense), {"moe": False}, "dense layer"),
                ("blocks", L - n_dense, {}, "MoE layer")]
    if p:
        full = sympy.floor(L / p)
        return [("blocks", L - full, {}, "sliding-window layer"),
                ("full_blocks", full, {"window": False}, "full-attention layer")]
    return [("blocks", L, {}, "Transformer block")]


def _periodic(flags) -> list[tuple[str, sympy.Expr, dict, str]]:
    """Llama 4's layer mix (family flags ``moe_every = s``, ``nope_every = p``): layer i (from 0)
    has experts when s divides i + 1 (``interleave_moe_layer_step``; every layer when s = 1) and
    no positions -- no rotary, no query/key norm -- when p divides i + 1
    (``no_rope_layer_interval``). Up to four stacks, the layers of each kind: floor(L/s) with
    experts, floor(L/p) without positions, floor(L/lcm(s, p)) both; a kind no layer has is left out."""
    s, p = flags.get("moe_every"), flags.get("nope_every")
    for name, v in (("moe_every", s), ("nope_every", p)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise SymgptError(f"{name} must be a positive integer, got {v!r}")
    if s and not flags["moe"]:
        raise SymgptError("moe_every needs moe=true")
    if flags["moe"] and not s:
        s = 1
    lcm = s * p // math.gcd(s, p) if s and p else None
    moe = (L if s == 1 else sympy.floor(L / s)) if s else sympy.Integer(0)
    nope = sympy.floor(L / p) if p else sympy.Integer(0)
    both = (nope if lcm == p else moe if lcm == s else sympy.floor(L / lcm)) if lcm else sympy.Integer(0)
    main = "MoE layer" if s else "Transformer block"
    nope_flags = {"nope_layer": True, "qk_norm": "none", "qk_norm_after_rope": False}
    kinds = [("blocks", moe - both if s else L - nope, {"moe": bool(s)}, main),
             ("dense_blocks", L - moe - nope + both if s else sympy.Integer(0), {"moe": False}, "dense layer"),
             ("nope_blocks", both if s else nope, {"moe": bool(s), **nope_flags},
              ("MoE" if s else "Transformer") + " layer without positions"),
             ("nope_dense_blocks", nope - both if s else sympy.Integer(0), {"moe": False, **nope_flags},
              "dense layer without positions")]
    return [k for k in kinds if sympy.simplify(k[1]) != 0]


def layers(g, flags, s, x, block):
    """Declare each stack of :func:`stacks` around *block(g, flags, sizes, x)*; returns its output."""
    for name, count, changes, label in stacks(flags):
        f = {**flags, **changes}
        with g.repeat(name, count, label=label, carry=x, role=roles.STACK):
            x = block(g, f, s.layer(f), x)
    return x

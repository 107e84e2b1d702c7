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
from ...core.symbols import L, L_lin


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
    projection has a bias (GPT-NeoX-Japanese), after L - 1 ``blocks``. Both ``dense_layers = n``
    and ``full_every = p``: four stacks, the dense and the MoE layers each split into sliding and
    full ones, ``dense_full = m`` (a flag of the families that have both; otherwise floor(n/p), the
    full layers being every p-th counted from the first, as EXAONE-MoE's) of the n dense layers
    full-attention (a stack of no layer is left out). ``full_layers = n`` (a flag of the families
    whose full-attention layers follow no period: Flint, Granite-SWA) says how many of the L layers
    are full-attention, in place of floor(L/p)."""
    if flags.get("linear_layers"):
        return _linear(flags)
    if flags.get("moe_every") or flags.get("nope_every"):
        if flags["dense_layers"] or flags["full_every"] or flags.get("last_proj_bias"):
            raise SymgptError("moe_every / nope_every cannot be combined with dense_layers, full_every or "
                              "last_proj_bias")
        return _periodic(flags)
    n_dense, p = flags["dense_layers"] or 0, flags["full_every"]
    n_full = flags.get("full_layers")
    if n_full is not None:
        if isinstance(n_full, bool) or not isinstance(n_full, int) or n_full < 1:
            raise SymgptError(f"full_layers must be a whole number of at least 1, got {n_full!r}")
        if p or not flags["window"]:
            raise SymgptError("full_layers needs window=true and no full_every")
    if isinstance(n_dense, bool) or not isinstance(n_dense, int) or n_dense < 0:
        raise SymgptError(f"dense_layers must be a whole number, got {n_dense!r}")
    if p is not None and (isinstance(p, bool) or not isinstance(p, int) or p < 2):
        raise SymgptError(f"full_every must be an integer of at least 2, got {p!r}")
    if n_dense and not flags["moe"]:
        raise SymgptError("dense_layers needs moe=true (dense layers before the experts)")
    if p and not flags["window"]:
        raise SymgptError("full_every needs window=true (full-attention layers among sliding ones)")
    if flags.get("dense_full") and not (n_dense and (p or n_full)):
        raise SymgptError("dense_full needs dense_layers and full_every or full_layers")
    if flags.get("last_proj_bias"):
        if n_dense or p or n_full or flags["proj_bias"]:
            raise SymgptError("last_proj_bias cannot be combined with dense_layers, full_every or proj_bias")
        return [("blocks", L - 1, {}, "Transformer block"),
                ("last_blocks", sympy.Integer(1), {"proj_bias": True}, "last layer (output-projection bias)")]
    if n_dense and (p or n_full):  # both: dense and MoE layers, each sliding or full (AFMoE, Flint)
        m = flags.get("dense_full")  # the full-attention layers among the dense ones
        if m is None:  # every p-th layer full counted from the first: floor(n/p) of the n dense ones
            m = n_dense // p if p else 0
        if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m <= n_dense:
            raise SymgptError(f"dense_full must be a whole number of at most dense_layers, got {m!r}")
        full = sympy.floor(L / p) if p else sympy.Integer(n_full)
        out = [("dense_blocks", sympy.Integer(n_dense - m), {"moe": False}, "dense sliding-window layer"),
               ("dense_full_blocks", sympy.Integer(m), {"moe": False, "window": False},
                "dense full-attention layer"),
               ("blocks", L - n_dense - full + m, {}, "MoE sliding-window layer"),
               ("full_blocks", full - m, {"window": False}, "MoE full-attention layer")]
        return [st for st in out if st[1] != 0]
    if n_dense:
        return [("dense_blocks", sympy.Integer(n_dense), {"moe": False}, "dense layer"),
                ("blocks", L - n_dense, {}, "MoE layer")]
    if n_full:
        return [("blocks", L - n_full, {}, "sliding-window layer"),
                ("full_blocks", sympy.Integer(n_full), {"window": False}, "full-attention layer")]
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


def _linear(flags) -> list[tuple[str, sympy.Expr, dict, str]]:
    """Linear-attention layers among attention ones (family flag ``linear_layers = n``, Qwen3-Next's
    ``layer_types``): a stack ``linear_blocks`` of n layers (the symbol ``L_lin``, bound to n) whose
    mixer is the family's ``linear_mixer`` before a stack ``blocks`` of L - n attention layers; the order of the layers changes no count.
    With ``dense_layers`` (experts off in some layers) it is refused: no family declares both."""
    n = flags["linear_layers"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise SymgptError(f"linear_layers must be a whole number of at least 1, got {n!r}")
    m = flags.get("full_layers")
    if flags["dense_layers"] and flags.get("dense_linear") is not None:
        return _linear_dense(flags, n)
    if flags["dense_layers"] or flags["full_every"] or flags.get("moe_every") or flags.get("nope_every") \
            or flags.get("last_proj_bias"):
        raise SymgptError("linear_layers cannot be combined with dense_layers, full_every, moe_every, nope_every "
                          "or last_proj_bias")
    if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1 or not flags["window"]):
        raise SymgptError(f"full_layers must be a whole number of at least 1, with window=true, got {m!r}")
    changes = {"mixer": flags["linear_mixer"]}
    n = L_lin  # the linear-attention layers' count, bound to linear_layers (FLAG_SYMBOLS)
    if flags.get("linear_pre_norm"):  # OLMo-Hybrid: pre-norm linear layers among post-branch-norm attention ones
        changes.update(pre_norm=True, branch_norms=False)
    out = [("linear_blocks", n, changes, "linear-attention layer"),
           ("blocks", L - n, {}, "attention layer")]
    if m:  # Lara-Mini: sliding-window and full-attention layers among the linear ones
        out[1:] = [("blocks", L - n - m, {}, "sliding-window attention layer"),
                   ("full_blocks", sympy.Integer(m), {"window": False}, "full-attention layer")]
    return out


def _linear_dense(flags, n: int) -> list[tuple[str, sympy.Expr, dict, str]]:
    """Linear-attention layers among attention ones, the first ``dense_layers`` layers with a dense
    FFN (Kimi Linear, Ling 3: ``layer_types`` and ``mlp_layer_types``): ``dense_linear`` of those
    dense layers are linear-attention layers. Up to four stacks, each kind's layers; a kind no
    layer has is left out."""
    n_dense, m = flags["dense_layers"], flags["dense_linear"]
    if isinstance(n_dense, bool) or not isinstance(n_dense, int) or n_dense < 1:
        raise SymgptError(f"dense_layers must be a whole number, got {n_dense!r}")
    if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m <= min(n, n_dense):
        raise SymgptError(f"dense_linear must be a whole number of at most dense_layers and linear_layers, got {m!r}")
    if not flags["moe"] or flags["full_every"] or flags.get("full_layers") or flags.get("moe_every") \
            or flags.get("nope_every") or flags.get("last_proj_bias"):
        raise SymgptError("dense_linear needs moe=true and no full_every, full_layers, moe_every, nope_every or "
                          "last_proj_bias")
    mixer = {"mixer": flags["linear_mixer"]}
    # the linear-attention layers' count is the symbol L_lin, bound to linear_layers = n (FLAG_SYMBOLS)
    out = [("dense_linear_blocks", sympy.Integer(m), {**mixer, "moe": False}, "dense linear-attention layer"),
           ("dense_blocks", sympy.Integer(n_dense - m), {"moe": False}, "dense attention layer"),
           ("linear_blocks", L_lin - m if n != m else sympy.Integer(0), mixer, "linear-attention layer"),
           ("blocks", L - L_lin - n_dense + m, {}, "attention layer")]
    return [st for st in out if st[1] != 0]


def layers(g, flags, s, x, block):
    """Declare each stack of :func:`stacks` around *block(g, flags, sizes, x)*; returns its output."""
    if flags.get("full_layers"):
        g.require("le", flags["full_layers"] + (flags["dense_layers"] or 0) - (flags.get("dense_full") or 0) - L,
                  "L must count the full-attention and the dense sliding-window layers",
                  id="full_layers_within_layers")
    if flags.get("linear_layers"):
        g.require("le", L_lin + (flags.get("full_layers") or 0)
                  + ((flags["dense_layers"] or 0) - flags["dense_linear"] if flags.get("dense_linear") is not None
                     else 0) - L,
                  "L must count the linear-attention (and full-attention) layers", id="linear_layers_within_layers")
    for name, count, changes, label in stacks(flags):
        f = {**flags, **changes}
        with g.repeat(name, count, label=label, carry=x, role=roles.STACK):
            x = block(g, f, s.layer(f), x)
    return x

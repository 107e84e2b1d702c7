"""The figures Megatron-LM prints at start-up, "Theoretical memory footprints: weight and
optimizer=… MB, activation=… MB, total=… MB" (``megatron/training/theoretical_memory_usage.py``),
term for term, as a closed form over symgpt's symbols -- so a user can hold symgpt against a
training log. Not a derivation from the graph: Megatron's estimate, shown beside the exact count
(``symgpt check`` lists where it departs).

Its terms, read from the source and from Korthikanti et al. 2022 (Table 2), which it cites:

* parameters in the layers: 2·L·d²·((1 + h_kv/h)·(h·d_head/d) + (d_ff/d)·E·g + 2/d + 1/(L·d)),
  g = 3/2 for a gated (SwiGLU) FFN, E = 1 without experts: every matmul weight, two norm scales
  per layer and the final norm; no biases, no position table;
* the embedding d·V', V' the vocabulary padded to a multiple of 128·tp;
* the most loaded shard: (layers/pp + embedding)/tp, plus another embedding/tp for an untied head
  when pp = 1; at 18 bytes per parameter (bf16 weight, fp32 gradient, fp32 master, Adam's two fp32
  moments) or 6 + 12/dp with the distributed optimizer;
* activations (printed only with sequence parallelism and selective recomputation), of the first
  stage: T·B·d·(18 + 4·d_ff/d) per layer × L, plus 8·T·B·pp (the token ids) and T·B·d·pp (the
  embedding's dropout mask); × (1 + (pp − 1)/(pp·vp)) interleaved, else × min(1, m/pp); plus
  4·T·B·d·(1 + V'/d) for the head and loss when pp = 1; all over tp.

MB means 2²⁰ bytes, printed with two decimals, as Megatron-LM prints it.
"""

from __future__ import annotations

import sympy

from ..graph import roles
from .quantity import Quantity
from ..core.symbols import B, T, V, d, d_ff, h, h_kv, d_head
from .layout import Layout

MB = 2**20


def _arch_facts(model):
    arch = model.arch
    gated = bool(arch.find(roles.FFN_GATE) or arch.find(roles.FFN_GATE_UP))
    head = arch.first(roles.HEAD)
    untied = head is not None and not any(
        arch.graph.nodes[p]["owner"] != head for p in arch.graph.nodes[head]["params"].values())
    experts = arch.groups_with(roles.EXPERTS)
    return {
        "L": arch.stacks()[0].repeat,
        "ffn": d_ff if _uses(arch, d_ff) else 4 * d,
        "kv": h_kv if _uses(arch, h_kv) else h,
        "q": h * d_head if _uses(arch, d_head) else d,
        "E": experts[0].repeat if experts else sympy.Integer(1),
        "g": sympy.Rational(3, 2) if gated else sympy.Integer(1),
        "untied": untied,
    }


def _uses(arch, sym) -> bool:
    """Whether any op's output shape is written in *sym* (d_ff, h_kv, d_head)."""
    return any(isinstance(s, sympy.Basic) and sym in s.free_symbols for _, a in arch.ops() for s in a["shape"])


def padded_vocab(tp) -> sympy.Expr:
    """Megatron-LM pads the vocabulary to a multiple of 128·tp (--make-vocab-size-divisible-by)."""
    unit = 128 * tp
    return sympy.ceiling(V / unit) * unit


def theoretical(model, lay: Layout, distributed_optimizer: bool, activations: bool) -> Quantity:
    """Megatron-LM's two printed figures for *model* under *lay* (bytes; the printer shows MB)."""
    f = _arch_facts(model)
    L, tp, pp, vp, dp, m = f["L"], lay.tp, lay.pp, lay.vp, lay.dp, lay.microbatches
    layers = 2 * L * d**2 * ((1 + f["kv"] / h) * (f["q"] / d) + (f["ffn"] / d) * f["E"] * f["g"]
                             + sympy.Integer(2) / d + 1 / (L * d))
    vocab = padded_vocab(tp)
    emb = d * vocab
    shard = (layers / pp + emb) / tp
    if f["untied"] and pp == 1:
        shard += emb / tp
    per_param = 6 + sympy.Integer(12) / dp if distributed_optimizer else sympy.Integer(18)
    parts = [("weight and optimizer", sympy.expand(shard * per_param))]
    if activations:
        act = T * B * d * (18 + 4 * f["ffn"] / d) * L + 8 * T * B * pp + T * B * d * pp
        if vp != 1:
            act *= 1 + (pp - 1) / (pp * vp)
        elif pp != 1:
            act *= sympy.Min(1, sympy.Rational(m, pp))
        if pp == 1:
            act += T * B * d * 4 * (1 + vocab / d)
        parts.append(("activation", sympy.expand(act / tp)))
    notes = ("Megatron-LM's theoretical memory footprint (megatron/training/theoretical_memory_usage.py; "
             "Korthikanti et al. 2022 Table 2): most loaded shard, first pipeline stage; MB = 2^20 bytes",
             "its activation term assumes sequence parallelism and selective recomputation; without "
             "them Megatron-LM prints the weight and optimizer figure only")
    return Quantity("memory.megatron", tuple(parts), model.bindings, "bytes", "megatron-theoretical", notes)


def megatron(model, **options) -> Quantity:
    """``memory.megatron``: the figures under the memory options' layout (tp, pp, vp, dp,
    microbatches; ``distributed_optimizer`` or ZeRO >= 1; the activation figure when ``sp`` and
    selective recomputation are on, as Megatron-LM prints it)."""
    from .memory import setup

    s = setup(model, **options)
    return theoretical(s.model, s.lay, s.zero >= 1, s.sp and s.conv.recompute == "selective")

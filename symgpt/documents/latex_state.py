"""Context of the ``state`` section, for a model with recurrent layers (state-space scans, linear
attention, RWKV, RG-LRU, mLSTM, short convolutions): what each recurrent layer keeps between
decode steps and what its scan costs, then the memory a generating sequence holds against the
context length T -- the model's KV cache (its attention layers alone) and its fixed-size state,
beside the KV cache of the decoder-only Transformer preset nearest in parameter count.

Every number is the engine's: ``inference.state``, ``inference.kv_cache``, ``inference.prefill.flops``
and ``inference.decode.flops`` (``derive.inference``, ``derive.recurrent``), at the report's sizes;
the table evaluates the same expressions at one sequence (B = 1) and each T of ``LENGTHS``, with a
16-bit KV cache (the fp32 parts of a state at 4 bytes, as the derivation prices them).
"""

from __future__ import annotations

from functools import lru_cache

import sympy

from ..core.errors import SymgptError
from ..core.symbols import B, as_expr
from ..render.latex import Tex, tex_expr, tex_shape
from ..render.latex_escape import tex_escape, tex_texttt
from ..render.latex_numbers import tex_bytes, tex_int
from .latex_sections import header

#: the context lengths of the table: 1k, 4k, 32k, 128k and 1M tokens (powers of two)
LENGTHS = (2 ** 10, 2 ** 12, 2 ** 15, 2 ** 17, 2 ** 20)
#: decoder-only Transformer presets with full attention and a plain KV cache, smallest first:
#: the comparison is the one nearest the model in parameters
REFERENCES = ("gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl", "qwen3-0.6b", "llama-3.2-1b-instruct",
              "qwen3-1.7b", "llama-3.2-3b", "qwen3-4b", "llama-3.1-8b", "qwen3-14b", "qwen3-32b",
              "llama-3.1-70b-instruct")
_DTYPE = {None: "KV-cache width", "fp32": "fp32"}


def applies(model) -> bool:
    """Whether the section belongs in *model*'s report: a model with recurrent layers."""
    from ..derive.recurrent import recurrent_ops

    return bool(recurrent_ops(model.arch))


@lru_cache(maxsize=None)
def _reference_params() -> tuple[tuple[str, int], ...]:
    from ..model.model import load

    return tuple((name, int(load(name).params.value)) for name in REFERENCES)


def reference(params) -> str | None:
    """The preset of REFERENCES nearest *params* (the larger-to-smaller ratio least; the smaller
    preset on a tie); None for a parameter count that is not a number."""
    if params is None or not sympy.Integer(params).is_Integer or params <= 0:
        return None
    p = sympy.Integer(params)

    def ratio(q):
        return max(p / q, q / p)

    return min(_reference_params(), key=lambda nq: (ratio(nq[1]), nq[1]))[0]


def per_sequence(q, model, t) -> sympy.Expr:
    """The value of quantity *q* (an ``inference.*`` expression in B and T) at B = 1 and T = *t*,
    the model's other sizes bound."""
    from ..derive.step import generated

    T = generated(model.arch)
    bind = {k: v for k, v in dict(q.bindings).items() if k not in (B, T)}
    v = as_expr(q.expr).xreplace({**bind, B: sympy.Integer(1), T: sympy.Integer(t)})
    v = sympy.simplify(v) if not v.is_Number else v
    if not v.is_Integer:
        raise SymgptError(f"{model.name}: a state or KV-cache size is not a whole number of bytes: {v}")
    return v


def state(model, notation, **options) -> dict:
    """The section's context; a model without recurrent layers gets one sentence."""
    from ..derive.recurrent import recurrent_ops, state_owners

    ctx = {**header(model, notation), "skip": None}
    arch = model.arch
    if not recurrent_ops(arch):
        ctx["skip"] = Tex(f"{tex_texttt(model.name)} has no recurrent layer: between decode steps it keeps its "
                          "KV cache alone, which grows with the context (see the memory section).")
        return ctx
    try:
        st = model.quantity("inference.state")
        kv = model.quantity("inference.kv_cache")
        prefill = dict(model.quantity("inference.prefill.flops").breakdown)
        decode = dict(model.quantity("inference.decode.flops").breakdown)
    except SymgptError as e:
        ctx["skip"] = Tex(f"The recurrent state of {tex_texttt(model.name)} is not derived: {tex_escape(str(e))}.")
        return ctx
    owners = state_owners(arch)
    elementwise = {phase: _elementwise(arch, phase) for phase in ("prefill", "decode")}
    rows = []
    for n in recurrent_ops(arch):
        a = arch.graph.nodes[n]
        ins = tuple(arch.shape(i) for i in a["inputs"])
        held = [f"{tex_texttt(name)} ${tex_shape(shape, notation)}$ ({_DTYPE[dt]})"
                for name, shape, dt in a["op"].carried(ins)]
        rows.append({"path": Tex(tex_texttt(n)), "title": a["op"].title,
                     "held": Tex("; ".join(held)) if n in owners else Tex("the same input's state, read"),
                     "layers": Tex(f"${tex_int(arch.multiplicity(n))}$" if as_expr(arch.multiplicity(n)).is_Integer
                                   else f"${tex_expr(arch.multiplicity(n), notation)}$"),
                     "prefill": tex_expr(prefill.get(n, sympy.Integer(0)), notation),
                     "decode": tex_expr(decode.get(n, sympy.Integer(0)), notation),
                     "prefill_ew": tex_expr(elementwise["prefill"].get(n, sympy.Integer(0)), notation),
                     "decode_ew": tex_expr(elementwise["decode"].get(n, sympy.Integer(0)), notation)})
    ctx["rows"] = rows
    ctx["state_formula"] = tex_expr(st.expr, notation)
    ctx["state_value"] = Tex(tex_int(st.value)) if st.value is not None else None
    ctx["state_size"] = Tex(tex_bytes(st.value)) if st.value is not None else None
    ctx["kv_formula"] = tex_expr(kv.expr, notation)
    ctx["T"] = Tex(notation.symbol("T"))
    ctx["B"] = Tex(notation.symbol("B"))
    ctx["table"] = _table(model, st, kv)
    return ctx


def _elementwise(arch, phase) -> dict:
    """node -> the elementwise operations of each recurrent op over all its layers in a *phase*
    step (its ``forward`` rule in a prefill, its ``decode`` rule in a decode step)."""
    from ..derive.recurrent import is_recurrent
    from ..derive.step import step

    out = {}
    for o in step(arch, phase).ops:
        if is_recurrent(o.op):
            work = o.op.decode(o.inputs, o.written) if phase == "decode" else o.op.forward(o.inputs, o.written)
            n = sympy.Add(*[w.count for w in work if w.kind == "elementwise"])
            out[o.node] = sympy.expand(n * arch.multiplicity(o.node))
    return out


def _table(model, st, kv) -> dict | None:
    """The rows of the KV-cache-against-state table; None where the sizes are not all numbers."""
    try:
        cells = [(t, per_sequence(kv, model, t), per_sequence(st, model, t)) for t in LENGTHS]
    except SymgptError:
        return None
    ref_name = reference(model.params.value)
    ref_kv, ref_params = None, None
    if ref_name is not None:
        from ..model.model import load

        ref = load(ref_name)
        ref_kv = [per_sequence(ref.quantity("inference.kv_cache"), ref, t) for t, _, _ in cells]
        ref_params = ref.params.value
    rows = []
    for i, (t, k, s) in enumerate(cells):
        row = {"t": t, "T": Tex(f"${tex_int(t)}$"), "kv": k, "state": s, "total": k + s,
               "cells": [Tex(f"${tex_bytes(v)}$") for v in (k, s, k + s)]}
        if ref_kv is not None:
            row["ref"] = ref_kv[i]
            row["cells"].append(Tex(f"${tex_bytes(ref_kv[i])}$"))
        rows.append(row)
    out = {"rows": rows, "reference": ref_name, "ref_tt": Tex(tex_texttt(ref_name)) if ref_name else None,
           "params": Tex(f"${tex_int(model.params.value)}$") if model.params.value is not None else None,
           "ref_params": Tex(f"${tex_int(ref_params)}$") if ref_name else None}
    return out

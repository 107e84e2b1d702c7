"""Terminal output of FLOPs, memory and time: formula above the number, aligned tables."""

from __future__ import annotations

import sympy

from .report_text import model_header
from .text import expr_text, number, sci, table
from .units import bytes_text, scaled


def part_value(q, e):
    """The value of *e*, a part of *q*'s breakdown, at *q*'s bindings (None where symbolic)."""
    from ..derive.quantity import evaluate

    return evaluate(e, q.bindings)


def _head(q, unit_text=None) -> list[str]:
    v = q.value
    shown = (unit_text(v) if unit_text else f"{number(v)}  (≈ {sci(v)})") if v is not None else "(symbolic)"
    return [f"{q.name} ({q.unit}), convention: {q.convention}", f"  {expr_text(q.expr)}", f"  = {shown}"]


def flops_text(m, qs, hint: str = "") -> str:
    fwd, bwd, train = qs
    lines = [model_header(m), ""]
    for q in qs:
        lines += _head(q) + [""]
    paths = train.paths()
    total = train.value
    rows = []
    for p in paths:
        cells = []
        for q in qs:
            e = q[p] if p in q.paths() else sympy.Integer(0)
            v = part_value(q, e)
            cells.append(number(v) if v is not None else expr_text(e))
        v = part_value(train, train[p])
        share = f"{100 * float(v) / float(total):.2f} %" if (v is not None and total) else ""
        rows.append([p, expr_text(train[p]), *cells, share])
    rows.append(["total", expr_text(train.expr),
                 *[number(q.value) if q.value is not None else expr_text(q.expr) for q in qs],
                 "100.00 %" if total else ""])
    lines.append(table(["op", "train formula", "forward", "backward", "train", "share"], rows, "llrrrr"))
    lines += [f"note: {n}" for n in train.notes] + [f"note: {n}" for n in m.notes]
    if hint:
        lines.append(hint)
    return "\n".join(lines)


def memory_text(m, qs, estimate=None, hint: str = "") -> str:
    lines = [model_header(m), ""]
    rows = [[q.name, expr_text(q.expr), number(q.value), bytes_text(q.value).split(" = ", 1)[-1]
             if q.value is not None else "-"] for q in qs]
    lines.append(table(["quantity", "formula (bytes)", "bytes", "GB (10⁹) / GiB (2³⁰)"], rows, "llrr"))
    acts = next(q for q in qs if q.name == "memory.activations")
    lines += ["", f"activations saved for backward, by the op that saves them (convention {acts.convention})"]
    rows = []
    for p, e in acts.breakdown:
        v = part_value(acts, e)
        rows.append([p, expr_text(e), number(v), scaled(v)])
    rows.append(["total", expr_text(acts.expr), number(acts.value), scaled(acts.value)])
    lines.append(table(["op", "formula", "bytes", "decimal"], rows, "llrr"))
    if estimate is not None:
        lines += ["", "the textbook estimate, three named terms, beside the exact count above:"]
        rows = [[p, expr_text(e), number(part_value(estimate, e)), scaled(part_value(estimate, e))] for p, e in estimate.breakdown]
        rows.append(["sum", expr_text(estimate.expr), number(estimate.value), scaled(estimate.value)])
        lines.append(table(["term", "formula", "bytes", "decimal"], rows, "llrr"))
    for q in qs:
        if q.name == "memory.total":
            lines += [f"note: {n}" for n in q.notes]
    lines += [f"note: {n}" for n in m.notes]
    if hint:
        lines.append(hint)
    return "\n".join(lines)


def seconds_text(v) -> str:
    """*v* seconds as people read them: ms below a second, hours or days past them, ``(symbolic)``
    for None."""
    if v is None:
        return "(symbolic)"
    if abs(v) >= 10**15:  # past what a float shows well (or holds: 1e400 is inf)
        return f"{sci(v)} s"
    f = float(v)
    if f >= 86400:
        return f"{sci(v)} s = {f / 86400:,.4g} days"
    if f >= 3600:
        return f"{sci(v)} s = {f / 3600:,.4g} h"
    if f < 1:
        return f"{f * 1000:,.4g} ms"
    return f"{f:,.4g} s"


def time_text(m, qs, peak, mfu, hint: str = "") -> str:
    lines = [model_header(m), "", f"peak {sci(peak)} FLOP/s, MFU {100 * float(mfu):.4g} %", ""]
    fmt = {"s": seconds_text, "tokens/s": lambda v: f"{float(v):,.6g} tokens/s" if v is not None else "(symbolic)",
           "": lambda v: f"{100 * float(v):.4g} % (exact {number(v)})" if v is not None else "(symbolic)",
           "nats": lambda v: f"{float(v):.4f} nats (ln V)" if v is not None else "(symbolic)"}
    for q in qs:
        formula = q.notes[0].split(" = ", 1)[-1] if q.name.startswith("time.") \
            and q.name != "time.throughput" else expr_text(q.expr)
        if q.name == "time.throughput":  # B·T, or B·(T_enc + T_dec), as the quantity says
            formula = q.notes[0].split(" = ", 1)[-1].replace("step time", "time.step")
        lines += [f"{q.name} ({q.unit or '%'})" + (f", convention: {q.convention}" if q.convention else ""),
                  f"  {formula}", f"  = {fmt.get(q.unit, number)(q.value)}", ""]
    lines += [f"note: {n}" for n in qs[0].notes[2:]]
    if hint:
        lines.append(hint)
    return "\n".join(lines)

"""Human output of a quantity: the formula above the number, then an aligned breakdown."""

from __future__ import annotations

from ..symbols import as_expr

from .text import expr_text, number, table


def model_header(m) -> str:
    sizes = "  ".join(f"{k}={number(v)}" for k, v in m.sizes.items())
    changed = [f"{k}={str(v).lower()}" for k, v in m.flags.items() if v != m.family.flags[k]]
    flags = ("  flags: " + ", ".join(changed)) if changed else ""
    return f"{m.name}  [{m.family.name}]  {sizes}{flags}"


def quantity_text(m, q, depth: int = 0) -> str:
    lines = [model_header(m), ""]
    title = f"{q.name} ({q.unit})" + (f", convention: {q.convention}" if q.convention else "")
    lines.append(title)
    lines.append(f"  {expr_text(q.expr)}")
    lines.append(f"  = {number(q.value)}" if q.value is not None else "  (unbound: set the free symbols with --set)")
    lines.append("")
    entries = q.grouped(depth) if depth else list(q.breakdown)
    total = q.value
    rows = []
    for path, e in entries:
        v = m.value(e) if q.bindings else None
        v = as_expr(0) if e == 0 else v
        share = f"{100 * float(v) / float(total):.2f} %" if (v is not None and total) else ""
        rows.append([path, expr_text(e), number(v), share])
    rows.append(["total", expr_text(q.expr), number(total), "100.00 %" if total else ""])
    lines.append(table(["part", "formula", "value", "share"], rows, "llrr"))
    for n in q.notes:
        lines.append(f"note: {n}")
    for n in m.notes:
        lines.append(f"note: {n}")
    return "\n".join(lines)

"""Human output of a quantity: the formula above the number, then an aligned breakdown.
``header_text`` and ``quantity_block`` format plain values (ints, Fractions, strings), so a
cached answer prints without SymPy; ``model_header`` and ``quantity_text`` feed them a model."""

from __future__ import annotations

from .text import expr_text, number, table


def header_text(name: str, family: str, sizes, flags, defaults) -> str:
    """``gpt2-small  [gpt2]  L=12  h=12 ...`` and the flags that differ from the family's."""
    shown = "  ".join(f"{k}={number(v)}" for k, v in sizes.items())
    changed = [f"{k}={str(v).lower()}" for k, v in flags.items() if v != defaults[k]]
    return f"{name}  [{family}]  {shown}" + (("  flags: " + ", ".join(changed)) if changed else "")


def model_header(m) -> str:
    return header_text(m.name, m.family.name, m.sizes, m.flags, m.family.flags)


def quantity_text(m, q, depth: int = 0) -> str:
    from ..core.symbols import as_expr

    entries = q.grouped(depth) if depth else list(q.breakdown)
    rows = []
    for path, e in entries:
        v = m.value(e) if q.bindings else None
        rows.append((path, expr_text(e), as_expr(0) if e == 0 else v))
    return quantity_block(model_header(m), q.name, q.unit, q.convention, expr_text(q.expr), q.value,
                          rows, [*q.notes, *m.notes])


def quantity_block(header: str, name: str, unit: str, convention, formula: str, total, rows,
                   notes) -> str:
    """The printed quantity: *rows* are (part, its formula's text, its value or None)."""
    lines = [header, ""]
    lines.append(f"{name} ({unit})" + (f", convention: {convention}" if convention else ""))
    lines.append(f"  {formula}")
    lines.append(f"  = {number(total)}" if total is not None else "  (unbound: set the free symbols with --set)")
    lines.append("")
    cells = []
    for path, text, v in rows:
        share = f"{100 * float(v) / float(total):.2f} %" if (v is not None and total) else ""
        cells.append([path, text, number(v), share])
    cells.append(["total", formula, number(total), "100.00 %" if total else ""])
    lines.append(table(["part", "formula", "value", "share"], cells, "llrr"))
    lines += [f"note: {n}" for n in notes]
    return "\n".join(lines)

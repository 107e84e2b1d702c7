"""Plain-text printing for terminals: numbers with thousands separators, readable formulas,
aligned tables. Printers format; they never derive."""

from __future__ import annotations

from ..numtext import expr_text, number, sci  # noqa: F401  (printers import them from here too)


def group_marks(arch, group: str | None) -> str:
    """How a node is repeated, outermost group first: ``×L``; an expert ``×L, ×E (k active)``;
    ``""`` outside every group."""
    import sympy

    marks = []
    for g in reversed(arch.group_chain(group)):
        mark = "×" + expr_text(g.repeat)
        if sympy.expand(g.active - g.repeat) != 0:
            mark += f" ({expr_text(g.active)} active)"
        marks.append(mark)
    return ", ".join(marks)


def table(headers: list[str], rows: list[list[str]], align: str | None = None) -> str:
    """An aligned text table; *align* has one letter per column (``l`` or ``r``)."""
    align = align or "l" + "r" * (len(headers) - 1)
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]

    def fmt(cells):
        return "  ".join(
            str(c).ljust(w) if a == "l" else str(c).rjust(w) for c, w, a in zip(cells, widths, align)
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([fmt(headers), rule, *[fmt(r) for r in rows]])

"""Plain-text printing for terminals: numbers with thousands separators, readable formulas,
aligned tables. Printers format; they never derive."""

from __future__ import annotations

from ..core.numtext import expr_text, number, sci  # noqa: F401  (printers import them from here too)


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


def width() -> int:
    """The terminal's width in columns (``COLUMNS`` first; 100 when there is no terminal)."""
    import shutil

    return max(40, shutil.get_terminal_size((100, 24)).columns)


def table(headers: list[str], rows: list[list[str]], align: str | None = None, columns: int | None = None) -> str:
    """An aligned text table; *align* has one letter per column (``l`` or ``r``). It fits in
    *columns* (the terminal's width by default): the widest text columns wrap inside their cells."""
    import textwrap

    align = align or "l" + "r" * (len(headers) - 1)
    cells = [[str(c) for c in r] for r in [headers, *rows]]
    widths = [max(len(c) for c in col) for col in zip(*cells)]
    excess = sum(widths) + 2 * (len(widths) - 1) - (columns or width())
    # a column wraps at spaces, never inside a word (a path, a number)
    least = [max((len(w) for c in col for w in c.split()), default=1) for col in zip(*cells)]
    while excess > 0:
        text_cols = [i for i in range(len(widths)) if widths[i] > max(least[i], 8)]
        if not text_cols:
            break
        i = max(text_cols, key=lambda j: widths[j] - least[j])
        widths[i] -= 1
        excess -= 1

    if excess > 0 or sum(len(c) > w for r in cells[1:] for c, w in zip(r, widths)) > len(cells):
        return records(cells[0], cells[1:], columns)

    def fmt(row):
        wrapped = [textwrap.wrap(c, w, break_on_hyphens=False, break_long_words=False) or [""] if len(c) > w else [c]
                   for c, w in zip(row, widths)]
        lines = []
        for k in range(max(len(x) for x in wrapped)):
            parts = [x[k] if k < len(x) else "" for x in wrapped]
            lines.append("  ".join(c.ljust(w) if a == "l" else c.rjust(w)
                                   for c, w, a in zip(parts, widths, align)).rstrip())
        return "\n".join(lines)

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([fmt(cells[0]), rule, *[fmt(r) for r in cells[1:]]])


def fit(text: str, columns: int | None = None) -> str:
    """Terminal text whose long lines wrap at spaces to the terminal's width, continuation lines
    indented under their first (tables from :func:`table` already fit)."""
    import textwrap

    cols = columns or width()
    out = []
    for line in text.split("\n"):
        if len(line) <= cols:
            out.append(line)
            continue
        lead = " " * (len(line) - len(line.lstrip(" ")))
        out += textwrap.wrap(line, cols, initial_indent="", subsequent_indent=lead + "    ",
                             break_on_hyphens=False, break_long_words=False,  # an exact number stays whole
                             drop_whitespace=True) or [line]
    return "\n".join(out)


def records(headers: list[str], rows: list[list[str]], columns: int | None = None) -> str:
    """A table too wide for the terminal, one record per row: its first cell, then ``header:
    value`` lines, wrapped to the width."""
    out = []
    for r in rows:
        out.append(r[0])
        out += [f"  {h}: {c}" for h, c in zip(headers[1:], r[1:]) if c]
        out.append("")
    return fit("\n".join(out[:-1]), columns)

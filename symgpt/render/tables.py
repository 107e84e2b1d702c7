"""Tables of models × columns (the scaling table), printed as LaTeX, Markdown or
CSV, and shown as rendered math in Jupyter (``_repr_latex_``).

A column is a canonical symbol (``L``, ``d``, ``d_ff``, ``T_max``: the model's size) or a
quantity name (``params``, ``flops.train``, ``memory.total``: its exact value). Values come
from the derivations (``symgpt.documents.tables.scaling_table`` fills a ``Table``); this module
only formats them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import SymgptError
from ..core.symbols import CANONICAL
from .latex import Tex, preamble, render
from .latex_escape import csv_cell, csv_row, tex_escape
from .latex_numbers import plain_number, tex_number

FORMATS = ("latex", "markdown", "csv")


@dataclass(frozen=True)
class Column:
    name: str
    kind: str           # "symbol" or "quantity"
    header_tex: str
    header_text: str
    unit: str = ""


@dataclass(frozen=True)
class Table:
    """A finished table: rows of exact values (None where a value is unbound or missing)."""

    columns: tuple[Column, ...]
    models: tuple[str, ...]
    values: tuple[tuple[object, ...], ...]
    style: str = "short"
    caption: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def _styled(self, col: Column) -> str:
        return "exact" if col.kind == "symbol" else self.style

    def context(self, placement: str = "htbp", label: str = "tab:symgpt-scaling") -> dict:
        """What ``templates/scaling.tex`` lays out (every cell already LaTeX or plain text)."""
        rows = []
        for name, vals in zip(self.models, self.values):
            cells = [Tex(f"${tex_number(v, self._styled(c))}$") if v is not None else Tex("--")
                     for c, v in zip(self.columns, vals)]
            rows.append({"model": name, "cells": cells})
        return {"columns": [Tex(c.header_tex) for c in self.columns], "rows": rows,
                "caption": self.caption, "notes": list(self.notes), "placement": Tex(placement),
                "label": Tex(label), "align": Tex("l" + "r" * len(self.columns))}

    def latex(self, standalone: bool = False, placement: str = "htbp", label: str = "tab:symgpt-scaling") -> str:
        body = render("scaling.tex", **self.context(placement, label))
        if not standalone:
            return body
        return render("table_document.tex", body=Tex(body), preamble=Tex(preamble()))

    def markdown(self) -> str:
        from .markdown import md_escape, md_table

        headers = ["model"] + [md_escape(c.header_text) for c in self.columns]
        rows = [[md_escape(n)] + [plain_number(v, self._styled(c)) if v is not None else "–"
                                  for c, v in zip(self.columns, vals)]
                for n, vals in zip(self.models, self.values)]
        out = md_table(headers, rows, "l" + "r" * len(self.columns)) + "\n"
        if self.caption:
            out = md_escape(self.caption) + "\n\n" + out
        return out

    def csv(self) -> str:
        """Exact values (integers as digits, fractions as ``p/q``); text cells quoted and
        guarded against spreadsheet formulas."""
        out = csv_row([csv_cell("model")] + [csv_cell(c.header_text) for c in self.columns])
        for n, vals in zip(self.models, self.values):
            cells = [csv_cell(n)]
            for v in vals:
                if v is None:
                    cells.append("")
                elif v.is_Integer:
                    cells.append(str(int(v)))
                else:
                    cells.append(csv_cell(str(v)))
            out += csv_row(cells)
        return out

    def render(self, fmt: str = "latex", standalone: bool = False) -> str:
        if fmt == "latex":
            return self.latex(standalone=standalone)
        if fmt == "markdown":
            return self.markdown()
        if fmt == "csv":
            return self.csv()
        raise SymgptError(f"unknown table format {fmt!r}; formats: {', '.join(FORMATS)}")

    def _repr_latex_(self) -> str:
        """The table as a math ``array`` (MathJax renders arrays, not ``tabular``)."""
        head = [r"\text{model}"] + [_math_header(c) for c in self.columns]
        lines = [" & ".join(head) + r" \\ \hline"]
        for n, vals in zip(self.models, self.values):
            cells = [r"\text{" + tex_escape(n) + "}"]
            cells += [tex_number(v, self._styled(c)) if v is not None else r"\text{--}"
                      for c, v in zip(self.columns, vals)]
            lines.append(" & ".join(cells) + r" \\")
        spec = "l" + "r" * len(self.columns)
        return "$$\\begin{array}{" + spec + "}\n" + "\n".join(lines) + "\n\\end{array}$$"

    def _repr_markdown_(self) -> str:
        return self.markdown()


def _math_header(c: Column) -> str:
    h = c.header_tex
    if h.startswith("$") and h.endswith("$"):
        return h[1:-1]
    return r"\text{" + tex_escape(c.header_text) + "}"


def column(name: str, notation, quantities) -> Column:
    """A column by name: a canonical symbol, or one of *quantities* (the names a table may
    show: ``params``, ``flops.train``, ...)."""
    if not isinstance(name, str) or not name.strip():
        raise SymgptError("empty column name")
    name = name.strip()
    if name in CANONICAL:
        return Column(name, "symbol", f"${notation.symbol(name)}$", name)
    known = list(quantities)
    if name not in known:
        raise SymgptError(f"unknown column {name!r}; columns are symbols ({', '.join(CANONICAL)}) "
                          f"or quantities ({', '.join(known)})")
    if name == "params":
        return Column(name, "quantity", f"${notation.quantity('params')}$", "params", "parameters")
    return Column(name, "quantity", r"\texttt{" + tex_escape(name) + "}", name)


__all__ = ["Table", "Column", "column", "FORMATS"]

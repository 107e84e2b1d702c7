"""Tables of models × columns (seed 000 §6: the scaling table), printed as LaTeX, Markdown or
CSV, and shown as rendered math in Jupyter (``_repr_latex_``).

A column is a canonical symbol (``L``, ``d``, ``d_ff``, ``T_max``: the model's size) or a
quantity name (``params``, ``flops.train``, ``memory.total``: its exact value). Values come
from the derivations; this module only formats them.

>>> t = scaling_table(["gpt2-small", "gpt2-medium"], ["L", "d", "params"])
>>> print(t.markdown())
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SymgptError
from ..symbols import CANONICAL
from .latex import Tex, render
from .latex_escape import csv_cell, csv_row, tex_escape
from .latex_numbers import plain_number, tex_number

FORMATS = ("latex", "markdown", "csv")
DEFAULT_COLUMNS = ("L", "h", "d", "d_ff", "T_max", "params")
#: models every report's scaling table ends with (seed 000 §6 lists them after GPT-2 and GPT-3)
SCALING_REFERENCE = ("llama-7b", "llama-70b")


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
        from .latex_doc import preamble

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


def column(name: str, notation) -> Column:
    """A column by name: a canonical symbol, or a quantity (``params``, ``flops.train``, ...)."""
    if not isinstance(name, str) or not name.strip():
        raise SymgptError("empty column name")
    name = name.strip()
    if name in CANONICAL:
        return Column(name, "symbol", f"${notation.symbol(name)}$", name)
    from ..model import quantity_names

    known = ["params", *quantity_names()]
    if name not in known:
        raise SymgptError(f"unknown column {name!r}; columns are symbols ({', '.join(CANONICAL)}) "
                          f"or quantities ({', '.join(known)})")
    if name == "params":
        return Column(name, "quantity", f"${notation.quantity('params')}$", "params", "parameters")
    return Column(name, "quantity", r"\texttt{" + tex_escape(name) + "}", name)


def size_value(model, name: str):
    """The value of canonical size *name* for *model*: bound, or implied by the graph (``d_ff``
    of a model whose FFN is 4d, ``d_head`` = d/h); None when neither."""
    if name in model.sizes:
        return model.sizes[name]
    if name == "d_head":
        from ..symbols import d, h

        v = model.value(d / h)
        return v if v is not None and v.is_Integer else None
    if name == "d_ff":
        from .. import roles as R

        arch = model.arch
        for n in sorted(arch.find(R.FFN_UP) + arch.find(R.FFN_GATE), key=arch.order.index):
            op = arch.graph.nodes[n]["op"]
            if op.kind == "linear":  # the width of the FFN's first linear layer
                return model.value(op.n_out)
    return None


def quantity_options(name: str, options: dict) -> dict:
    """The options that apply to quantity *name* (``convention``/``per`` to FLOPs, ...)."""
    family = name.split(".")[0]
    allowed = {"flops": ("convention", "per", "recompute"),
               "memory": ("precision", "optimizer", "recompute", "convention"),
               "time": ("convention",)}.get(family, ())
    return {k: v for k, v in options.items() if k in allowed and v is not None}


def scaling_table(models, columns=DEFAULT_COLUMNS, notation=None, style: str = "short",
                  options: dict | None = None, caption: str = "") -> Table:
    """Seed 000 §6: one row per model, one column per size or quantity."""
    from ..model import load
    from ..notation import notation as get_notation
    from ..report import report_model

    nota = get_notation(notation)
    if isinstance(columns, str):
        columns = [c for c in columns.split(",")]
    cols = tuple(column(c, nota) for c in columns)
    if not cols:
        raise SymgptError("no columns")
    if style not in ("exact", "short", "sci"):
        raise SymgptError(f"unknown number style {style!r}; styles: exact, short, sci")
    names, values = [], []
    for m in models:
        m = load(m) if isinstance(m, str) else m
        needs_run = any(c.kind == "quantity" and c.name != "params" for c in cols)
        mm = report_model(m) if needs_run else m
        row = []
        for c in cols:
            if c.kind == "symbol":
                row.append(size_value(mm, c.name))
            elif c.name == "params":
                row.append(mm.params.value)
            else:
                row.append(mm.quantity(c.name, **quantity_options(c.name, options or {})).value)
        names.append(m.name)
        values.append(tuple(row))
    notes = ()
    if any(c.kind == "quantity" and c.name != "params" for c in cols):
        notes = ("FLOPs, memory and time at each model's B and T (B = 8 and T = T_max unless set).",)
    return Table(cols, tuple(names), tuple(values), style, caption, notes)


def family_scaling(model, notation, columns=DEFAULT_COLUMNS) -> dict:
    """The scaling table of every preset of *model*'s family (seed 000 §6), as a context for
    ``templates/scaling.tex``."""
    from ..presets import PRESETS

    names = [p.name for p in PRESETS.values() if p.family == model.family.name]
    names += [n for n in SCALING_REFERENCE if n in PRESETS and n not in names]
    if model.name not in names:
        names.insert(0, model)
    t = scaling_table(names, columns, notation, "short",
                      caption=f"The presets of the {model.family.name} family and reference models: sizes and "
                              "exact parameter counts (rounded to four significant digits).")
    from .latex_doc import label_key

    return t.context(label=f"tab:symgpt-{label_key(model.name)}-scaling")


__all__ = ["Table", "family_scaling", "Column", "scaling_table", "column", "size_value", "FORMATS"]

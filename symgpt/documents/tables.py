"""Scaling tables of models: load the models, evaluate each column, and hand a
``symgpt.render.tables.Table`` to the printers.

>>> t = scaling_table(["gpt2-small", "gpt2-medium"], ["L", "d", "params"])
>>> print(t.markdown())
"""

from __future__ import annotations

from ..core.errors import SymgptError
from ..render.latex_numbers import STYLES
from ..render.tables import FORMATS, Column, Table, column

DEFAULT_COLUMNS = ("L", "h", "d", "d_ff", "T_max", "params")
#: models every report's scaling table ends with
SCALING_REFERENCE = ("llama-7b", "llama-70b")


def size_value(model, name: str):
    """The value of canonical size *name* for *model*: bound, or implied by the graph (``d_ff``
    of a model whose FFN is 4d, ``d_head`` = d/h); None when neither."""
    if name in model.sizes:
        return model.sizes[name]
    if name == "d_head":
        from ..core.symbols import d, h

        v = model.value(d / h)
        return v if v is not None and v.is_Integer else None
    if name == "d_ff":
        from ..graph import roles as R

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
    """One row per model, one column per size or quantity."""
    from ..model.model import load, quantity_names
    from ..core.notation import notation as get_notation
    from .workload import report_model

    nota = get_notation(notation)
    if isinstance(columns, str):
        columns = [c for c in columns.split(",")]
    known = ("params", *quantity_names())
    cols = tuple(column(c, nota, known) for c in columns)
    if not cols:
        raise SymgptError("no columns")
    if style not in STYLES:
        raise SymgptError(f"unknown number style {style!r}; styles: {', '.join(STYLES)}")
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
    """The scaling table of every preset of *model*'s family, as a context for
    ``templates/scaling.tex``."""
    from ..families import presets

    known = presets()
    names = [p.name for p in known.values() if p.family == model.family.name]
    names += [n for n in SCALING_REFERENCE if n in known and n not in names]
    if model.name not in names:
        names.insert(0, model)
    t = scaling_table(names, columns, notation, "short",
                      caption=f"The presets of the {model.family.name} family and reference models: sizes and "
                              "exact parameter counts (rounded to four significant digits).")
    from ..render.latex_escape import label_key

    return t.context(label=f"tab:symgpt-{label_key(model.name)}-scaling")


__all__ = ["Table", "family_scaling", "Column", "scaling_table", "column", "size_value", "FORMATS",
           "DEFAULT_COLUMNS", "SCALING_REFERENCE"]

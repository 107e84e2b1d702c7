"""symgpt shapes MODEL: every tensor's shape from input ids to logits."""

from __future__ import annotations

from .common import add_json, add_model, emit, load_model

HELP = "the shape of every tensor of the forward pass, symbolic and concrete"


def add_arguments(p):
    add_model(p)
    add_json(p)


def run(args) -> int:
    from ..derive.shapes import trace
    from ..render.jsonout import dumps, json_value, model_json
    from ..render.report_text import model_header
    from ..render.text import expr_text, group_marks, table

    m = load_model(args)
    concrete = m.shapes()
    symbolic = trace(m.arch)
    if args.json:
        tensors = [{"name": c.name, "label": c.label, "op": c.op,
                    "shape": [json_value(x) if x.is_number else str(x) for x in c.shape],
                    "symbolic": [str(x) for x in s.shape], "repeated": c.group}
                   for c, s in zip(concrete, symbolic)]
        emit(dumps({**model_json(m), "tensors": tensors}))
        return 0
    rows = []
    for c, s in zip(concrete, symbolic):
        marks = group_marks(m.arch, c.group)
        rows.append([c.name + (f" {marks}" if marks else ""), c.label,
                     "(" + ", ".join(expr_text(x) for x in s.shape) + ")",
                     "(" + ", ".join(expr_text(x) for x in c.shape) + ")"])
    emit(model_header(m) + "\n\n" + table(["tensor", "label", "symbolic", "concrete"], rows, "llll"), fit=True)
    return 0

"""Report part: the parameter breakdown and the shape trace, as JSON and Markdown."""

from __future__ import annotations

from ...core.io import write_atomic
from ...render.jsonout import dumps, json_value, model_json, quantity_json
from ...render.markdown import params_md, shapes_md


def write(model, folder, **options) -> list[str]:
    from ...derive.shapes import trace

    q = model.params
    write_atomic(folder / "params.json", dumps({**model_json(model), "params": quantity_json(q)}))
    write_atomic(folder / "params.md", params_md(model, q))
    concrete, symbolic = model.shapes(), trace(model.arch)
    tensors = [{"name": c.name, "label": c.label, "op": c.op,
                "shape": [json_value(x) if x.is_number else str(x) for x in c.shape],
                "symbolic": [str(x) for x in s.shape], "repeated": c.group}
               for c, s in zip(concrete, symbolic)]
    write_atomic(folder / "shapes.json", dumps({**model_json(model), "tensors": tensors}))
    write_atomic(folder / "shapes.md", shapes_md(model, concrete, symbolic))
    return ["params.json", "params.md", "shapes.json", "shapes.md"]

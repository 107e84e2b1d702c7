"""Report part: the computation graph, as DOT text and as SVG (through Graphviz's dot)."""

from __future__ import annotations

from ...core.io import write_atomic


def write(model, folder, **options) -> list[str]:
    from ...model.model import quantity_names
    from ..diagrams import diagram

    color_by = options.get("graph_color_by") or ("flops" if "flops.forward" in quantity_names() else "params")
    d = diagram(model, color_by=color_by, convention=options.get("convention"))
    write_atomic(folder / "graph.dot", d.dot)
    write_atomic(folder / "graph.svg", d.svg())
    return ["graph.dot", "graph.svg"]

"""The diagram of a model: the measures it is coloured by, derived here, printed as DOT text
(``symgpt.render.dot``) and laid out by Graphviz (``symgpt.external.graphviz``) on demand.

>>> import symgpt
>>> from symgpt.documents.diagrams import diagram
>>> d = diagram(symgpt.load("gpt2-small"), T=3, B=1)
>>> d.dot.startswith("digraph symgpt {")
True
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import sympy

from ..core.errors import SymgptError
from ..render.dot import check_options, dot_source, format_for
from ..render.dotparts import Measure

#: the quantity each colouring reads, and how a per-copy value is obtained from a total
_SOURCES = {"params": ("params", "multiplicity"), "flops": ("flops.forward", "activity"),
            "memory": ("memory.activations", "activity")}


@dataclass(frozen=True)
class Diagram:
    """A rendered-on-demand diagram: its DOT text and a title. Shows itself in notebooks."""

    dot: str
    title: str = ""

    def svg(self) -> str:
        from ..external.graphviz import render_svg

        return render_svg(self.dot)

    def render(self, fmt: str = "svg") -> bytes:
        """The diagram in *fmt* (``svg``, ``png``, ``pdf`` via Graphviz; ``dot`` without it)."""
        from ..external.graphviz import render

        if fmt == "dot":
            return self.dot.encode("utf-8")
        return render(self.dot, fmt)

    def save(self, path, fmt: str | None = None) -> Path:
        """Write the diagram atomically; the format defaults to the file's suffix."""
        from ..core.io import write_atomic

        path = Path(path)
        fmt = fmt or format_for(path)
        return write_atomic(path, self.render(fmt))

    def _repr_svg_(self) -> str:
        return self.svg()

    def __str__(self) -> str:
        return self.dot

    def __repr__(self) -> str:
        return f"<Diagram {self.title}: {self.dot.count(chr(10))} lines of DOT>"


def diagram(model, color_by: str = "params", unroll: bool = False, convention: str | None = None,
            step=None, fit: str | None = None, **values) -> Diagram:
    """The diagram of *model*; keyword sizes (``B=8, T=1024``) are bound first.

    *color_by* is ``params``, ``flops``, ``memory`` or ``none``; *unroll* draws every copy of
    the repeated block (its count must be bound, at most 64); *convention* names the FLOP and
    memory counting convention (``symgpt.core.conventions``; the default one when None). *step*
    draws an inference step instead of the forward pass (``symgpt.derive.roofline.step_view``:
    its phase, shapes and FLOPs, and with ``color_by="bound"`` what bounds each op); *fit*
    (``slide`` or ``page``) draws the compact form sized for a 16:9 slide or an A4 page
    (``symgpt.render.dotfit``).
    """
    if values:
        model = model.with_(**values)
    return Diagram(dot_text(model, color_by=color_by, unroll=unroll, convention=convention, step=step, fit=fit),
                   model.name)


def dot_text(model, color_by: str = "params", unroll: bool = False, convention: str | None = None,
             step=None, fit: str | None = None) -> str:
    """The DOT source of *model*'s diagram (deterministic for the same inputs): its measures
    derived (``measures``), then printed (``symgpt.render.dot.dot_source``)."""
    check_options(color_by, fit, step)
    return dot_source(model, measures(model, color_by, convention, step), color_by=color_by, unroll=unroll,
                      step=step, fit=fit)


def measures(model, color_by: str = "params", convention: str | None = None, step=None) -> dict:
    """What the diagram annotates and colours by: params and forward FLOPs (the FLOPs of *step*
    when one is drawn), and activation memory when coloured by it."""
    out = {"params": _measure(model, "params", True)}
    if step is None:
        out["flops"] = _measure(model, "flops", color_by == "flops", convention)
    else:
        q = step.flops
        out["flops"] = Measure("flops", q, "activity", sympy.expand(q.expr.xreplace(model.bindings)))
    if color_by == "memory":
        out["memory"] = _measure(model, "memory", True, convention)
    return out


def _measure(model, key: str, required: bool, convention=None) -> Measure | None:
    from ..model.model import quantity_names

    name, per = _SOURCES[key]
    if name != "params" and name not in quantity_names():
        if required:
            raise SymgptError(f"cannot colour by {key}: the quantity {name} is not available in this "
                              "installation (colour by params instead)")
        return None
    options = {} if name == "params" else {"convention": convention} if convention else {}
    if key == "flops":
        options["per"] = "batch"  # the whole step: B sequences of T tokens, as the edges show
    try:
        q = model.quantity(name, **options)
    except SymgptError:
        if required:
            raise
        return None  # a model whose forward is not modelled (parameters only) is drawn without FLOPs
    return Measure(key, q, per, sympy.expand(q.expr.xreplace(model.bindings)))

"""The computation graph as Graphviz DOT, drawn from the op graph (``model.arch``).

One node per op (views such as splits and head reshapes drawn small), edges labelled with the
tensor shapes (concrete where sizes are bound), a repeated group drawn once as a cluster
labelled with its repeat count (or once per copy with ``unroll=True``), tied weights drawn as
one matrix feeding two ops, every op annotated with its parameters and FLOPs, and nodes
coloured by their share of parameters, FLOPs or activation memory.

>>> import symgpt
>>> from symgpt.render.dot import diagram
>>> d = diagram(symgpt.load("gpt2-small"), T=3, B=1)
>>> d.dot.startswith("digraph symgpt {")
True

The DOT text is built here, deterministically (forward order, no ids from memory, no dates);
``Diagram.svg()`` / ``render()`` run Graphviz (``symgpt.render.svg``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import sympy

from ..core.errors import SymgptError
from .dotlabels import FONT
from .dotparts import Ctx, Measure, cluster_label, edge_stmt, labelled_crossing, node_stmt, title_label
from .dotview import build_view

COLOR_BY = ("params", "flops", "memory", "none", "bound")
#: the quantity each colouring reads, and how a per-copy value is obtained from a total
_SOURCES = {"params": ("params", "multiplicity"), "flops": ("flops.forward", "activity"),
            "memory": ("memory.activations", "activity")}
FORMATS = ("svg", "png", "pdf", "dot")
#: the smallest text of a fitted drawing before it is scaled into its box
MIN_FIT_PT = 12


@dataclass(frozen=True)
class Diagram:
    """A rendered-on-demand diagram: its DOT text and a title. Shows itself in notebooks."""

    dot: str
    title: str = ""

    def svg(self) -> str:
        from .svg import render_svg

        return render_svg(self.dot)

    def render(self, fmt: str = "svg") -> bytes:
        """The diagram in *fmt* (``svg``, ``png``, ``pdf`` via Graphviz; ``dot`` without it)."""
        from .svg import render

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


def format_for(path: Path) -> str:
    """The format a file name asks for (``.svg``, ``.png``, ``.pdf``, ``.dot``/``.gv``)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    suffix = "dot" if suffix == "gv" else suffix
    if suffix not in FORMATS:
        raise SymgptError(f"cannot tell the format of {Path(path).name!r}: name it .svg, .png, .pdf "
                          "or .dot, or give --format")
    return suffix


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


# --- measures: a quantity's values per node --------------------------------------------------
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
    q = model.quantity(name, **options)
    return Measure(key, q, per, sympy.expand(q.expr.xreplace(model.bindings)))


# --- the DOT text ----------------------------------------------------------------------------
def dot_text(model, color_by: str = "params", unroll: bool = False, convention: str | None = None,
             step=None, fit: str | None = None) -> str:
    """The DOT source of *model*'s diagram (deterministic for the same inputs); *step*: an
    inference step to draw (``symgpt.derive.roofline.step_view``); *fit*: a compact form."""
    from .dotfit import FITS, fold

    if color_by not in COLOR_BY:
        raise SymgptError(f"--color-by takes {', '.join(COLOR_BY)}, got {color_by!r}")
    if fit is not None and fit not in FITS:
        raise SymgptError(f"--fit takes {', '.join(FITS)}, got {fit!r}")
    if color_by == "bound" and (step is None or step.bounds is None):
        raise SymgptError("--color-by bound needs an inference step with its roofline "
                          "(symgpt.derive.roofline.step_view(model, phase, bound=True, ...))")
    phase = step.phase if step is not None else None
    if color_by == "memory" and phase is not None:
        raise SymgptError("--color-by memory (activations saved for backward) is a training measure; "
                          "with --phase colour by flops or bound")
    arch, b = model.arch, model.bindings
    view = build_view(arch, b, unroll)
    if fit is not None:
        view = fold(view, arch, shared=fit != "slide")
    measures = {"params": _measure(model, "params", True),
                "flops": _measure(model, "flops", color_by == "flops", convention)}
    bounds = shapes = None
    if step is not None:
        q = step.flops
        measures["flops"] = Measure("flops", q, "activity", sympy.expand(q.expr.xreplace(b)))
        shapes, bounds = dict(step.shapes), step.bounds
    if color_by == "memory":
        measures["memory"] = _measure(model, "memory", True, convention)
    colour = measures.get(color_by)
    ratios = [sympy.cancel(e.xreplace(b) / colour.total) for _, e in colour.q.breakdown] \
        if (colour is not None and colour.total != 0) else []
    shares_known = bool(ratios) and all(r.is_number for r in ratios)
    unbound = sorted({str(x) for r in ratios for x in r.free_symbols})
    ctx = Ctx(model, view, measures, colour if shares_known else None, bounds, phase, shapes, compact=fit)
    rankdir, size, sep = "TB", "", ("0.25", "0.3")
    if fit is not None:
        rankdir, w, hgt, _ = FITS[fit]
        size, sep = f' size="{w:g},{hgt:g}",', ("0.2", "0.2")
    lines = ["digraph symgpt {",
             f'  graph [rankdir={rankdir}, newrank=true, fontname="{FONT}", nodesep={sep[0]}, ranksep={sep[1]}, '
             f'pad=0.3, labelloc=t, labeljust=c, bgcolor="white",{size}',
             f"    label={title_label(ctx, color_by, shares_known, unbound)}];",
             f'  node [fontname="{FONT}", fontsize=13, shape=box, style="rounded,filled", '
             'fillcolor="#ffffff", color="#444444", penwidth=1.2, margin="0.14,0.05"];',
             f'  edge [fontname="{FONT}", fontsize=10, color="#666666", fontcolor="#333333", '
             "arrowsize=0.7];"]
    children: dict[str | None, list] = {}
    for c in view.clusters:
        children.setdefault(c.parent, []).append(("cluster", c))
    for n in view.nodes:
        children.setdefault(n.cluster, []).append(("node", n))
    row_of, cluster_of = {}, {n.id: n.cluster for n in view.nodes}
    crossing = {}  # unfitted: a data edge across a cluster border gets its shape on a text node
    if fit is None:
        for e in view.edges:
            if e.kind == "data" and cluster_of.get(e.src) != cluster_of.get(e.dst):
                node, crossing[id(e)] = labelled_crossing(ctx, e)
                shared = _common_cluster(view, cluster_of.get(e.src), cluster_of.get(e.dst))
                children.setdefault(shared, []).append(("raw", (e.src, node)))
    _emit(ctx, children, None, lines, "  ")
    if fit == "slide":
        from .dotfit import rows

        row_of = {i: k for k, r in enumerate(rows(view)) for i in r}
    for e in view.edges:
        if id(e) in crossing:
            lines += ["  " + x for x in crossing[id(e)]]
            continue
        stmt = edge_stmt(ctx, e)
        if fit is not None:
            # fitted: shapes as external labels, placed after layout (no rank of their own);
            # none along a slide's row, where they would crowd the arrows
            flat = e.kind == "data" and (row_of.get(e.src, -1) == row_of.get(e.dst, -2)
                                         or cluster_of.get(e.src) != cluster_of.get(e.dst))
            stmt = f'"{e.src}" -> "{e.dst}";' if flat else stmt.replace(" [label=<", " [xlabel=<", 1)
        lines.append("  " + stmt)
    if fit == "slide":
        for r in rows(view):
            lines.append("  { rank=same; " + " ".join(f'"{i}";' for i in r) + " }")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    if fit is not None:
        # a fitted drawing is scaled down into its box: no text starts below 12 pt
        text = re.sub(r'(POINT-SIZE="|fontsize=)(\d+)', lambda m: f"{m.group(1)}{max(int(m.group(2)), MIN_FIT_PT)}", text)
    return text


def _emit(ctx: Ctx, children, parent, lines: list[str], indent: str) -> None:
    # nodes and clusters in the order their first member appears in forward order
    items = children.get(parent, [])
    order = {n.id: i for i, n in enumerate(ctx.view.nodes)}

    def first(item):
        kind, x = item
        if kind == "node":
            return order[x.id]
        if kind == "raw":  # an edge's text node, just after the edge's source
            return order[x[0]] + 0.5
        return min(first(i) for i in children.get(x.id, [])) if children.get(x.id) else len(order)

    for kind, x in sorted(items, key=first):
        if kind == "node":
            lines.append(indent + node_stmt(ctx, x))
            continue
        if kind == "raw":
            lines.append(indent + x[1])
            continue
        lines.append(f'{indent}subgraph "{x.id}" {{')
        lines.append(f'{indent}  graph [label={cluster_label(ctx, x)}, style="rounded,dashed", '
                     'color="#6b7b8c", penwidth=1.4, bgcolor="#f4f7fb", labelloc=b, labeljust=l, fontsize=13];')
        _emit(ctx, children, x.id, lines, indent + "  ")
        lines.append(indent + "}")


def _common_cluster(view, a: str | None, b: str | None) -> str | None:
    """The innermost cluster holding both clusters *a* and *b* (None: the drawing itself)."""
    parent = {c.id: c.parent for c in view.clusters}

    def chain(c):
        out = []
        while c is not None:
            out.append(c)
            c = parent.get(c)
        return out

    inside_a = chain(a)
    return next((c for c in chain(b) if c in inside_a), None)

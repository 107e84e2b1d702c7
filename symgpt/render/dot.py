"""The computation graph as Graphviz DOT, drawn from the op graph (``model.arch``).

One node per op (views such as splits and head reshapes drawn small), edges labelled with the
tensor shapes (concrete where sizes are bound), a repeated group drawn once as a cluster
labelled with its repeat count (or once per copy with ``unroll=True``), tied weights drawn as
one matrix feeding two ops, every op annotated with its parameters and FLOPs, and nodes
coloured by their share of parameters, FLOPs or activation memory.

A printer: ``dot_source`` is given the measures it annotates and colours by (``Measure``:
params, flops, memory, derived by ``symgpt.documents.diagrams``, which also lays the text out
with Graphviz). The DOT text is built here, deterministically (forward order, no ids from
memory, no dates).
"""

from __future__ import annotations

import re
from pathlib import Path

import sympy

from ..core.errors import SymgptError
from ..graph import roles as R
from .dotlabels import FONT
from .dotparts import Ctx, cluster_label, edge_stmt, labelled_crossing, node_stmt, title_label
from .dotview import build_view

COLOR_BY = ("params", "flops", "memory", "none", "bound")
FORMATS = ("svg", "png", "pdf", "dot")
#: the smallest text of a fitted drawing before it is scaled into its box
MIN_FIT_PT = 12


def format_for(path: Path) -> str:
    """The format a file name asks for (``.svg``, ``.png``, ``.pdf``, ``.dot``/``.gv``)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    suffix = "dot" if suffix == "gv" else suffix
    if suffix not in FORMATS:
        raise SymgptError(f"cannot tell the format of {Path(path).name!r}: name it .svg, .png, .pdf "
                          "or .dot, or give --format")
    return suffix


# --- the DOT text ----------------------------------------------------------------------------
def check_options(color_by: str = "params", fit: str | None = None, step=None) -> None:
    """One clear line for a colouring, a fit or a step the diagram cannot draw."""
    from .dotfit import FITS

    if color_by not in COLOR_BY:
        raise SymgptError(f"--color-by takes {', '.join(COLOR_BY)}, got {color_by!r}")
    if fit is not None and fit not in FITS:
        raise SymgptError(f"--fit takes {', '.join(FITS)}, got {fit!r}")
    if color_by == "bound" and (step is None or step.bounds is None):
        raise SymgptError("--color-by bound needs an inference step with its roofline "
                          "(symgpt.derive.roofline.step_view(model, phase, bound=True, ...))")
    if color_by == "memory" and step is not None:
        raise SymgptError("--color-by memory (activations saved for backward) is a training measure; "
                          "with --phase colour by flops or bound")


def dot_source(model, measures: dict, color_by: str = "params", unroll: bool = False, step=None,
               fit: str | None = None) -> str:
    """The DOT source of *model*'s diagram (deterministic for the same inputs). *measures*:
    ``{"params": Measure, "flops": Measure or None, "memory": Measure}`` (memory only when
    coloured by it), the flops those of *step* when one is drawn; *step*: an inference step
    (``symgpt.derive.roofline.step_view``: its phase, shapes and roofline bounds); *fit*: a
    compact form (``symgpt.render.dotfit``)."""
    from .dotfit import FITS, fold

    check_options(color_by, fit, step)
    phase = step.phase if step is not None else None
    arch, b = model.arch, model.bindings
    view = build_view(arch, b, unroll)
    if fit is not None:
        view = fold(view, arch, shared=fit != "slide")
    bounds = shapes = None
    if step is not None:
        shapes, bounds = dict(step.shapes), step.bounds
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
    else:  # drawn top to bottom (a slide's rows set its ranks)
        lines += [f"  {{ rank=same; {' '.join(f'{chr(34)}{i}{chr(34)};' for i in r)} }}" for r in towers(view, arch)]
    lines.append("}")
    text = "\n".join(lines) + "\n"
    if fit is not None:
        # a fitted drawing is scaled down into its box: no text starts below 12 pt
        text = re.sub(r'(POINT-SIZE="|fontsize=)(\d+)', lambda m: f"{m.group(1)}{max(int(m.group(2)), MIN_FIT_PT)}", text)
    return text


#: the inputs a model with images or audio reads beside its token ids, and the first op of each
#: path: drawn on one rank each, so that the towers stand side by side down to where they join
#: (``roles.IMAGE_MERGE``: the features placed at their token positions)
_TOWER_RANKS = ((R.TOKENS, R.PIXELS, R.AUDIO), (R.TOKEN_EMBEDDING, R.PATCH_EMBEDDING))


def towers(view, arch) -> list[list[str]]:
    """The drawn ids put on one rank each (``_TOWER_RANKS``) for a model whose features from another
    input join its token sequence; [] for any other model or where a rank would hold one node."""
    g = arch.graph
    if not any(a.get("role") == R.IMAGE_MERGE for _, a in g.nodes(data=True)):
        return []
    role = {n.id: g.nodes[n.path].get("role") for n in view.nodes if n.copy in (None, 0) and n.path in g}
    out = []
    for wanted in _TOWER_RANKS:
        ids = [i for i, r in role.items() if r in wanted]
        if len({role[i] for i in ids}) > 1:
            out.append(ids)
    return out


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

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

from dataclasses import dataclass
from pathlib import Path

import sympy

from ..errors import SymgptError
from ..quantity import is_prefix
from .dotlabels import (DARK_FROM, FONT, PALETTE, QUANTITY_TITLES, color_class, esc, legend_rows,
                        matrix_text, op_text, percent, shape_text, value_text)
from .dotview import View, build_view

COLOR_BY = ("params", "flops", "memory", "none")
#: the quantity each colouring reads, and how a per-copy value is obtained from a total
_SOURCES = {"params": ("params", "multiplicity"), "flops": ("flops.forward", "activity"),
            "memory": ("memory.activations", "activity")}
FORMATS = ("svg", "png", "pdf", "dot")


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
        from ..io import write_atomic

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
            **values) -> Diagram:
    """The diagram of *model*; keyword sizes (``B=8, T=1024``) are bound first.

    *color_by* is ``params``, ``flops``, ``memory`` or ``none``; *unroll* draws every copy of
    the repeated block (its count must be bound, at most 64); *convention* names the FLOP and
    memory counting convention (``symgpt.conventions``; the default one when None).
    """
    if values:
        model = model.with_(**values)
    return Diagram(dot_text(model, color_by=color_by, unroll=unroll, convention=convention), model.name)


# --- measures: a quantity's values per node --------------------------------------------------
@dataclass(frozen=True)
class _Measure:
    key: str
    q: object
    per: str          # multiplicity or activity
    total: object     # the exact total at the bindings, or the expression


def _measure(model, key: str, required: bool, convention=None) -> _Measure | None:
    from ..model import quantity_names

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
    return _Measure(key, q, per, sympy.expand(q.expr.xreplace(model.bindings)))


def _entries(m: _Measure) -> dict:
    return dict(m.q.breakdown)


def _share(part, total):
    """The exact share part/total when it is a number (symbols may cancel), else None."""
    if total == 0:
        return None
    r = sympy.cancel(part / total)
    return r if r.is_number else None


# --- the DOT text ----------------------------------------------------------------------------
def dot_text(model, color_by: str = "params", unroll: bool = False, convention: str | None = None) -> str:
    """The DOT source of *model*'s diagram (deterministic for the same inputs)."""
    if color_by not in COLOR_BY:
        raise SymgptError(f"--color-by takes {', '.join(COLOR_BY)}, got {color_by!r}")
    arch, b = model.arch, model.bindings
    view = build_view(arch, b, unroll)
    measures = {"params": _measure(model, "params", True),
                "flops": _measure(model, "flops", color_by == "flops", convention)}
    if color_by == "memory":
        measures["memory"] = _measure(model, "memory", True, convention)
    colour = measures.get(color_by)
    shares_known = colour is not None and _share(colour.total, colour.total) is not None and all(
        _share(e.xreplace(b), colour.total) is not None for _, e in colour.q.breakdown)
    ctx = _Ctx(model, view, measures, colour if shares_known else None)
    lines = ["digraph symgpt {",
             f'  graph [rankdir=TB, newrank=true, fontname="{FONT}", nodesep=0.25, ranksep=0.3, '
             'pad=0.3, labelloc=t, labeljust=c, bgcolor="white",',
             f"    label={_title(model, color_by, measures, shares_known)}];",
             f'  node [fontname="{FONT}", fontsize=13, shape=box, style="rounded,filled", '
             'fillcolor="#ffffff", color="#444444", penwidth=1.2, margin="0.14,0.05"];',
             f'  edge [fontname="{FONT}", fontsize=10, color="#666666", fontcolor="#333333", '
             "arrowsize=0.7];"]
    children: dict[str | None, list] = {}
    for c in view.clusters:
        children.setdefault(c.parent, []).append(("cluster", c))
    for n in view.nodes:
        children.setdefault(n.cluster, []).append(("node", n))
    _emit(ctx, children, None, lines, "  ")
    for e in view.edges:
        lines.append("  " + _edge(ctx, e))
    lines.append("}")
    return "\n".join(lines) + "\n"


@dataclass
class _Ctx:
    model: object
    view: View
    measures: dict
    colour: _Measure | None


def _emit(ctx: _Ctx, children, parent, lines: list[str], indent: str) -> None:
    # nodes and clusters in the order their first member appears in forward order
    items = children.get(parent, [])
    order = {n.id: i for i, n in enumerate(ctx.view.nodes)}

    def first(item):
        kind, x = item
        if kind == "node":
            return order[x.id]
        return min(first(i) for i in children.get(x.id, [])) if children.get(x.id) else len(order)

    for kind, x in sorted(items, key=first):
        if kind == "node":
            lines.append(indent + _node(ctx, x))
            continue
        lines.append(f'{indent}subgraph "{x.id}" {{')
        lines.append(f'{indent}  graph [label={_cluster_label(ctx, x)}, style="rounded,dashed", '
                     'color="#6b7b8c", penwidth=1.4, bgcolor="#f4f7fb", labelloc=b, labeljust=l, fontsize=13];')
        _emit(ctx, children, x.id, lines, indent + "  ")
        lines.append(indent + "}")


def _q(text: str) -> str:
    """A plain DOT string (tooltips): backslashes and quotes escaped, one line."""
    return '"' + " ".join(str(text).split()).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _title(model, color_by, measures, shares_known) -> str:
    sizes = ", ".join(f"{k} = {value_text(v)}" for k, v in model.sizes.items()) or "all sizes symbolic"
    flags = [f"{k}={str(v).lower()}" for k, v in model.flags.items() if v != model.family.flags[k]]
    rows = [f'<TR><TD COLSPAN="8"><FONT POINT-SIZE="20"><B>{esc(model.name)}</B></FONT>'
            f'<FONT POINT-SIZE="14">  forward pass ({esc(model.family.name)})</FONT></TD></TR>',
            f'<TR><TD COLSPAN="8"><FONT POINT-SIZE="12">{esc(sizes)}'
            + (esc("; flags: " + ", ".join(flags)) if flags else "") + "</FONT></TD></TR>"]
    colour = measures.get(color_by)
    rows += legend_rows(color_by, colour.total if colour else None, shares_known)
    if measures.get("flops") is not None:
        rows.append(f'<TR><TD COLSPAN="8"><FONT POINT-SIZE="10" COLOR="#555555">FLOPs: forward pass '
                    f"of one step of B sequences × T tokens, convention {esc(measures['flops'].q.convention)}"
                    "; per copy in a repeated block</FONT></TD></TR>")
    return '<<TABLE BORDER="0" CELLSPACING="2" CELLPADDING="1">' + "".join(rows) + "</TABLE>>"


def _repeat_text(expr, b) -> str:
    v = expr.xreplace(b)
    shown = value_text(expr)
    return shown if (v == expr or not v.is_number) else f"{shown} = {value_text(v)}"


def _cluster_label(ctx: _Ctx, c) -> str:
    arch, b = ctx.model.arch, ctx.model.bindings
    g = arch.groups[c.group]
    name = esc(g.label or g.name)
    if c.copies is not None:  # one copy of an unrolled group
        head = f"<B>{name} {c.copy}</B> of {c.copies}"
    else:
        head = f"<B>{name}</B>  × {esc(_repeat_text(g.repeat, b))}"
        if sympy.expand(g.active - g.repeat) != 0:
            head += f", {esc(_repeat_text(g.active, b))} active"
    rows = [head]
    chain = arch.group_chain(c.group)
    # unrolled, this cluster stands for one copy of the top group; "each" counts the rest
    drawn_of_top, inner = (chain[-1], chain[:-1]) if c.copy is not None else (None, chain)
    for key, unit in (("params", "params"), ("flops", "FLOPs"), ("memory", "bytes saved")):
        m = ctx.measures.get(key)
        if m is None:
            continue
        count = (lambda x: x.repeat) if m.per == "multiplicity" else (lambda x: x.active)
        part = sympy.Add(*[e for p, e in m.q.breakdown if is_prefix(c.group, p)])
        if drawn_of_top is not None:
            part = part / count(drawn_of_top)
        part = sympy.expand(sympy.cancel(part).xreplace(b))
        if part == 0:
            continue
        copies = sympy.Mul(*[count(x) for x in inner])
        per = sympy.expand(sympy.cancel(part / copies).xreplace(b))
        share = _share(part, m.total)
        each, in_all = (" each", " in all") if inner else ("", "")
        rows.append(f"{esc(value_text(per))} {unit}{each}" +
                    (f" · {percent(share)}{in_all}" if share is not None else ""))
    return "<" + '<BR ALIGN="LEFT"/>'.join(rows[:1] + [f'<FONT POINT-SIZE="11">{r}</FONT>'
                                                        for r in rows[1:]]) + '<BR ALIGN="LEFT"/>>'


def _per_copy(ctx: _Ctx, m: _Measure, path: str, unrolled_copy: bool):
    """(value of one copy at the bindings, share of the total) for *path* in measure *m*."""
    entries = _entries(m)
    if path not in entries:
        return None, None
    arch, b = ctx.model.arch, ctx.model.bindings
    total = entries[path]
    div = arch.multiplicity(path) if m.per == "multiplicity" else arch.activity(path)
    per = sympy.expand(sympy.cancel(total / div).xreplace(b))
    drawn = per if unrolled_copy else sympy.expand(total.xreplace(b))
    return per, _share(drawn, m.total)


def _node(ctx: _Ctx, n) -> str:
    arch, b = ctx.model.arch, ctx.model.bindings
    a = arch.graph.nodes[n.path]
    attrs = [f"tooltip={_q(n.path)}"]
    if n.kind == "input":
        label = (f"<B>{esc(a.get('label') or n.path)}</B>"
                 f'<BR/><FONT POINT-SIZE="10">{esc(shape_text(tuple(x.xreplace(b) for x in a["shape"])))}'
                 f" {esc(a.get('dtype', ''))}</FONT>")
        attrs += ['fillcolor="#e3eefa"', 'color="#2f5d8a"']
        return f'"{n.id}" [label=<{label}>, {", ".join(attrs)}];'
    if n.kind == "param":
        owner = arch.graph.nodes[a["owner"]]
        users = [arch.graph.nodes[u].get("label") or u for u in sorted(
            arch.graph.successors(n.path), key=arch.order.index)]
        label = (f"<B>shared matrix</B><BR/><FONT POINT-SIZE=\"10\">{esc(owner.get('label') or a['owner'])}"
                 f".{esc(a['local'])}  {esc(matrix_text(tuple(x.xreplace(b) for x in a['shape'])))}"
                 f'<BR/>used by {esc(" and ".join(users))}</FONT>')
        attrs += ['shape=note', 'style="filled"', 'fillcolor="#dcecf9"', 'color="#1f5f99"']
        return f'"{n.id}" [label=<{label}>, {", ".join(attrs)}];'
    title = esc(a.get("label") or n.path)
    if n.kind == "view":
        attrs += ['style="rounded,dashed,filled"', "fontsize=11", 'fillcolor="#fbfbfb"',
                  'color="#888888"', 'height=0.3', 'margin="0.08,0.02"']
        return f'"{n.id}" [label=<{title}<BR/><FONT POINT-SIZE="9" COLOR="#666666">' \
               f'{esc(op_text(a["op"], b))}</FONT>>, {", ".join(attrs)}];'
    lines = [f"<B>{title}</B>", esc(op_text(a["op"], b))]
    lines += _param_lines(ctx, n)
    cls = 0
    for key in ("params", "flops", "memory"):
        m = ctx.measures.get(key)
        if m is None or (key == "params"):
            continue
        per, share = _per_copy(ctx, m, n.path, n.copy is not None)
        if per is not None and per != 0:
            pct = f" · {percent(share)}" if (m is ctx.colour and share is not None) else ""
            unit = "" if key == "flops" else " " + esc(m.q.unit)
            lines.append(f"{'FLOPs' if key == 'flops' else 'saved'} {esc(value_text(per))}{unit}{pct}")
    if ctx.colour is not None:
        per, share = _per_copy(ctx, ctx.colour, n.path, n.copy is not None)
        cls = color_class(share) if share is not None else 0
    font = ' COLOR="white"' if cls >= DARK_FROM else ""
    body = lines[0] + "".join(f'<BR/><FONT POINT-SIZE="10"{font}>{x}</FONT>' for x in lines[1:])
    if font:
        body = f"<FONT COLOR=\"white\">{body}</FONT>"
    attrs.append(f'fillcolor="{PALETTE[cls]}"')
    if n.path == arch.output:
        attrs += ["penwidth=2.6", 'color="#222222"']
    return f'"{n.id}" [label=<{body}>, {", ".join(attrs)}];'


def _param_lines(ctx: _Ctx, n) -> list[str]:
    arch, b = ctx.model.arch, ctx.model.bindings
    a = arch.graph.nodes[n.path]
    if not a["params"]:
        return []
    parts, out = [], []
    for local, pnode in a["params"].items():
        p = arch.graph.nodes[pnode]
        shape = matrix_text(tuple(x.xreplace(b) for x in p["shape"]))
        if p["owner"] != n.path:
            owner = arch.graph.nodes[p["owner"]].get("label") or p["owner"]
            out.append(esc(f"{local} {shape}: tied to {owner}, no new params"))
        else:
            parts.append(shape)
    m = ctx.measures["params"]
    per, share = _per_copy(ctx, m, n.path, n.copy is not None)
    if parts and per is not None:
        pct = f" · {percent(share)}" if (m is ctx.colour and share is not None) else ""
        out.insert(0, f"params {esc(value_text(per))} = {esc(' + '.join(parts))}{pct}")
    return out


def _edge(ctx: _Ctx, e) -> str:
    b = ctx.model.bindings
    shape = tuple(x.xreplace(b) for x in e.shape)
    if e.kind == "data":
        return f'"{e.src}" -> "{e.dst}" [label=<{esc(shape_text(shape))}>];'
    if e.kind == "tied":
        return (f'"{e.src}" -> "{e.dst}" [label=<<FONT COLOR="#1f5f99">same '
                f'{esc(matrix_text(shape))} matrix</FONT>>, labelfloat=true, style=dashed, color="#1f5f99", '
                "penwidth=1.6, constraint=false];")
    return (f'"{e.src}" -> "{e.dst}" [label=<<FONT COLOR="#1f5f99">{esc(e.role)}</FONT>>, '
            'style=dashed, color="#1f5f99", penwidth=1.6];')

"""The pieces of a diagram's DOT text: the title with its legend, cluster labels, node and edge
statements. Each reads the op graph and the derived quantities and formats; none counts.

A node's numbers are per copy (one layer, one expert); its share and colour are of what the
drawn node stands for (rolled: all its copies; unrolled: the copies within one drawn block).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from ..core.errors import visible
from ..derive.quantity import is_prefix
from .dotlabels import (DARK_FROM, PALETTE, color_class, esc, legend_rows, matrix_text, op_text,
                        percent, shape_text, value_text)
from .dotview import View


@dataclass(frozen=True)
class Measure:
    """A quantity drawn on the diagram (params, flops or memory), with its total at the bindings."""

    key: str
    q: object
    per: str          # multiplicity or activity
    total: object     # the exact total at the bindings, or the expression


@dataclass
class Ctx:
    """What every piece reads: the model, the drawn view, the measures, the colouring one."""

    model: object
    view: View
    measures: dict
    colour: Measure | None
    bounds: dict | None = None       # colour by bound: node -> RooflinePoint of an inference step
    phase: str | None = None         # an inference step (prefill, decode): its shapes and FLOPs
    shapes: dict | None = None       # node -> its shape at that step
    compact: str | None = None   # a fitted diagram (--fit slide|page): less drawn, larger
    #: labels already made, by what they depend on: the copies of an unrolled group share them
    memo: dict = field(default_factory=dict)


def share_of(part, total):
    """The exact share part/total when it is a number (symbols may cancel), else None. *part*
    and *total* are expanded (as ``at_bindings`` and ``Measure.total`` give them)."""
    if total == 0:
        return None
    r = part / total
    if r.is_Rational:  # both bound: the number cancelling would give
        return r
    if part.is_polynomial() and total.is_polynomial():
        # expanded polynomials: a number c exactly where part's terms are c times total's
        terms, of = part.as_coefficients_dict(), total.as_coefficients_dict()
        ratios = {terms[t] / c for t, c in of.items()} if terms.keys() == of.keys() else ()
        return ratios.pop() if len(ratios) == 1 else None
    r = sympy.cancel(r)
    return r if r.is_number else None


def at_bindings(e, b):
    """``expand(cancel(e).xreplace(b))``: *e* at the bindings *b*, exact, cancelled and expanded.

    Cancelling is most of a diagram's time, and mostly needless: where every symbol of *e* is
    bound the value is a rational number, the same whatever form *e* is in; where *e* expands
    to a polynomial (a per-layer count over the layers that divide it), the expanded polynomial
    is the one form of it, which cancelling first would reach too. Only the rest is cancelled."""
    v = e.xreplace(b)
    if v.is_Rational:
        return v
    p = sympy.expand(v)
    if p.is_polynomial():
        return p
    return sympy.expand(sympy.cancel(e).xreplace(b))


def _q(text: str) -> str:
    """A plain DOT string (tooltips): backslashes and quotes escaped, one line."""
    return '"' + " ".join(visible(str(text)).split()).replace("\\", "\\\\").replace('"', '\\"') + '"'


def title_label(ctx, color_by, shares_known, unbound) -> str:
    model, measures = ctx.model, ctx.measures
    items = [f"{k} = {value_text(v)}" for k, v in model.sizes.items()]
    sizes = ", ".join(items) or "all sizes symbolic"
    if ctx.compact and len(sizes) > 56:   # two lines: a fitted drawing is narrow
        half = (len(items) + 1) // 2
        sizes = ", ".join(items[:half]) + ",\n" + ", ".join(items[half:])
    flags = [f"{k}={str(v).lower()}" for k, v in model.flags.items() if v != model.family.flags[k]]
    rows = [f'<TR><TD COLSPAN="8"><FONT POINT-SIZE="20"><B>{esc(model.name)}</B></FONT>'
            f'<FONT POINT-SIZE="14">  forward pass ({esc(model.family.name)})</FONT></TD></TR>',
            f'<TR><TD COLSPAN="8"><FONT POINT-SIZE="12">{esc(sizes)}'
            + (esc("; flags: " + ", ".join(flags)) if flags else "") + "</FONT></TD></TR>"]
    if ctx.phase is not None:
        rows[0] = rows[0].replace("forward pass", PHASE_TITLES[ctx.phase])
    colour = measures.get(color_by)
    view = ctx.view
    if color_by == "bound":
        rows += bound_legend(ctx)
        color_by = "none"
    if ctx.compact:
        rows += legend_rows(color_by, colour.total if colour else None, shares_known, unbound,
                            views=False, tied=False)[:-1]
        return '<<TABLE BORDER="0" CELLSPACING="2" CELLPADDING="1">' + "".join(rows) + "</TABLE>>"
    rows += legend_rows(color_by, colour.total if colour else None, shares_known, unbound,
                        views=any(n.kind == "view" for n in view.nodes),
                        tied=any(e.kind == "tied" for e in view.edges))
    if measures.get("flops") is not None and ctx.phase is not None:
        rows.append(f'<TR><TD COLSPAN="8"><FONT POINT-SIZE="10" COLOR="#555555">FLOPs: {esc(PHASE_TITLES[ctx.phase])}'
                    "; per copy in a repeated block</FONT></TD></TR>")
    elif measures.get("flops") is not None:
        rows.append(f'<TR><TD COLSPAN="8"><FONT POINT-SIZE="10" COLOR="#555555">FLOPs: forward pass '
                    f"of one step of B sequences × T tokens, convention {esc(measures['flops'].q.convention)}"
                    "; per copy in a repeated block</FONT></TD></TR>")
    return '<<TABLE BORDER="0" CELLSPACING="2" CELLPADDING="1">' + "".join(rows) + "</TABLE>>"


PHASE_TITLES = {"prefill": "inference prefill (B prompts of T tokens)",
                "decode": "inference decode step (1 new token per sequence, a cache of T)"}
#: fills of --color-by bound
BOUND_FILL = {"memory": "#9ecae1", "compute": "#fdae6b"}


def bound_legend(ctx) -> list[str]:
    pts = list(ctx.bounds.values()) if ctx.bounds else []
    if not pts or any(p.bound is None for p in pts):
        return ['<TR><TD COLSPAN="8"><FONT POINT-SIZE="11">not coloured: what bounds each op needs B, T '
                "and a device (--set B=... --set T=..., --hardware NAME or --peak and --bandwidth)"
                "</FONT></TD></TR>"]
    n = {k: sum(1 for p in pts if p.bound == k) for k in BOUND_FILL}
    cells = "".join(f'<TD BGCOLOR="{BOUND_FILL[k]}" BORDER="1" CELLPADDING="3">'
                    f'<FONT POINT-SIZE="10">{k}-bound ({n[k]} ops)</FONT></TD>' for k in BOUND_FILL)
    return ['<TR><TD COLSPAN="8"><FONT POINT-SIZE="11">colour: what bounds each op on the device: '
            "bytes / bandwidth (memory) or FLOPs / peak (compute)</FONT></TD></TR>",
            f"<TR>{cells}</TR>"]


def _repeat_text(expr, b) -> str:
    v = expr.xreplace(b)
    shown = value_text(expr)
    return shown if (v == expr or not v.is_number) else f"{shown} = {value_text(v)}"


def cluster_label(ctx: Ctx, c) -> str:
    arch, b = ctx.model.arch, ctx.model.bindings
    g = arch.groups[c.group]
    name = esc(g.label or g.name)
    if c.copies is not None:  # one copy of an unrolled group
        head = f"<B>{name} {c.copy}</B> of {c.copies}"
    else:
        head = f"<B>{name}</B>  × {esc(_repeat_text(g.repeat, b))}"
        if sympy.expand(g.active - g.repeat) != 0:
            head += f", {esc(_repeat_text(g.active, b))} active"
    if ctx.compact:
        return f"<{head}>"
    key = ("cluster", c.group, c.copy is not None)
    if key not in ctx.memo:
        ctx.memo[key] = _cluster_rows(ctx, c)
    rows = [head, *ctx.memo[key]]
    return "<" + '<BR ALIGN="LEFT"/>'.join(rows[:1] + [f'<FONT POINT-SIZE="11">{r}</FONT>'
                                                        for r in rows[1:]]) + '<BR ALIGN="LEFT"/>>'


def _cluster_rows(ctx: Ctx, c) -> list[str]:
    """A cluster's value rows (the same for every copy of an unrolled group)."""
    arch, b = ctx.model.arch, ctx.model.bindings
    rows = []
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
        part = at_bindings(part, b)
        if part == 0:
            continue
        copies = sympy.Mul(*[count(x) for x in inner])
        per = at_bindings(part / copies, b)
        share = share_of(part, m.total)
        each, in_all = (" each", " in all") if inner else ("", "")
        rows.append(f"{esc(value_text(per))} {unit}{each}" +
                    (f" · {percent(share)}{in_all}" if share is not None else ""))
    return rows


def _entry(ctx: Ctx, m: Measure, path: str):
    """(*m*'s entry for op *path*, its groups' counts innermost last), or None without an entry."""
    entries = ctx.memo.setdefault(("entries", m.key), dict(m.q.breakdown))
    if path not in entries:
        return None
    arch = ctx.model.arch
    chain = arch.group_chain(arch.graph.nodes[path]["group"])
    return entries[path], [g.repeat if m.per == "multiplicity" else g.active for g in chain]


def _per_copy(ctx: Ctx, m: Measure, path: str):
    """The value of one copy of op *path* at the bindings (None where *m* has no entry for it);
    made once per measure and path (a node, rolled or each unrolled copy, shows the same)."""
    key = ("per", m.key, path)
    if key not in ctx.memo:
        found = _entry(ctx, m, path)
        ctx.memo[key] = None if found is None else at_bindings(found[0] / sympy.Mul(*found[1]), ctx.model.bindings)
    return ctx.memo[key]


def _drawn_share(ctx: Ctx, m: Measure, path: str, unrolled_copy: bool):
    """The share of *m*'s total of what the node of op *path* stands for (None where unknown).

    Rolled, a node stands for all its copies; unrolled, for the copies within one copy of its
    top-level group (the E experts of one layer). Made only where it is shown or coloured by.
    """
    key = ("share", m.key, path, unrolled_copy)
    if key not in ctx.memo:
        found = _entry(ctx, m, path)
        if found is None:
            ctx.memo[key] = None
        else:
            total, counts = found
            drawn = total / counts[-1] if (unrolled_copy and counts) else total
            ctx.memo[key] = share_of(at_bindings(drawn, ctx.model.bindings), m.total)
    return ctx.memo[key]


def node_stmt(ctx: Ctx, n) -> str:
    """A node's statement; its label and attributes are made once for all the copies of an
    unrolled group (they depend on the path and on whether the node is a copy, not on which)."""
    key = ("node", n.path, n.kind, n.copy is not None)
    if key not in ctx.memo:
        ctx.memo[key] = _node_attrs(ctx, n)
    return f'"{n.id}" {ctx.memo[key]}'


def _at(x, b) -> sympy.Expr:
    """A shape's dimension at the bindings *b* (a plain int, as some held towers declare, as is)."""
    return x.xreplace(b) if isinstance(x, sympy.Basic) else sympy.Integer(x)


def _node_attrs(ctx: Ctx, n) -> str:
    arch, b = ctx.model.arch, ctx.model.bindings
    if n.kind == "folded":
        more = "" if ctx.compact == "slide" else \
            f'<BR/><FONT POINT-SIZE="12">softmax(Q·Kᵀ/√d<SUB>h</SUB>)·V, {esc(_heads_text(ctx))}</FONT>'
        return f'[label=<<B>{esc(n.path)}</B>{more}>, fillcolor="#eef2f7", style="rounded,filled"];'
    a = arch.graph.nodes[n.path]
    attrs = [f"tooltip={_q(n.path)}"]
    if n.kind == "input":
        label = (f"<B>{esc(a.get('label') or n.path)}</B>"
                 f'<BR/><FONT POINT-SIZE="10">{esc(shape_text(tuple(_at(x, b) for x in _shape(ctx, n.path))))}'
                 f" {esc(a.get('dtype', ''))}</FONT>")
        attrs += ['fillcolor="#e3eefa"', 'color="#2f5d8a"']
        return f'[label=<{label}>, {", ".join(attrs)}];'
    if n.kind == "param":
        owner = arch.graph.nodes[a["owner"]]
        users = [arch.graph.nodes[u].get("label") or u for u in sorted(
            arch.graph.successors(n.path), key=arch.order.index)]
        label = (f"<B>shared matrix</B><BR/><FONT POINT-SIZE=\"10\">{esc(owner.get('label') or a['owner'])}"
                 f".{esc(a['local'])}  {esc(matrix_text(tuple(_at(x, b) for x in a['shape'])))}"
                 f'<BR/>used by {esc(" and ".join(users))}</FONT>')
        attrs += ['shape=note', 'style="filled"', 'fillcolor="#dcecf9"', 'color="#1f5f99"']
        return f'[label=<{label}>, {", ".join(attrs)}];'
    title = esc(a.get("label") or n.path)
    if n.kind == "view":
        attrs += ['style="rounded,dashed,filled"', "fontsize=11", 'fillcolor="#fbfbfb"',
                  'color="#888888"', 'height=0.3', 'margin="0.08,0.02"']
        return f'[label=<{title}<BR/><FONT POINT-SIZE="9" COLOR="#666666">' \
               f'{esc(op_text(a["op"], b))}</FONT>>, {", ".join(attrs)}];'
    lines = [f"<B>{title}</B>", esc(op_text(a["op"], b))]
    if ctx.compact == "slide":
        lines = lines[:1]   # a slide names the ops; the page and the full diagram say what they are
    elif ctx.compact:
        lines[1] = lines[1].replace(" (no bias)", "")   # narrower; the full diagram keeps the remark
    lines += [] if ctx.compact else _param_lines(ctx, n)
    cls = 0
    for key in () if ctx.compact else ("flops", "memory"):
        m = ctx.measures.get(key)
        if m is None:
            continue
        per = _per_copy(ctx, m, n.path)
        if per is not None and per != 0:
            share = _drawn_share(ctx, m, n.path, n.copy is not None) if m is ctx.colour else None
            pct = f" · {percent(share)}" if share is not None else ""
            unit = "" if key == "flops" else " " + esc(m.q.unit)
            lines.append(f"{'FLOPs' if key == 'flops' else 'saved'} {esc(value_text(per))}{unit}{pct}")
    if ctx.colour is not None:
        share = _drawn_share(ctx, ctx.colour, n.path, n.copy is not None)
        cls = color_class(share) if share is not None else 0
    fill = PALETTE[cls]
    point = (ctx.bounds or {}).get(n.path)
    if point is not None and point.bound is not None:
        fill = BOUND_FILL[point.bound]
        inten = f", {float(point.intensity):.3g} FLOPs/byte" if point.intensity is not None else ""
        lines.append(f"{point.bound}-bound{esc(inten)}")
    font = ' COLOR="white"' if cls >= DARK_FROM else ""
    small = 12 if ctx.compact else 10
    body = lines[0] + "".join(f'<BR/><FONT POINT-SIZE="{small}"{font}>{x}</FONT>' for x in lines[1:])
    if font:
        body = f"<FONT COLOR=\"white\">{body}</FONT>"
    attrs.append(f'fillcolor="{fill}"')
    if n.path == arch.output:
        attrs += ["penwidth=2.6", 'color="#222222"']
    return f'[label=<{body}>, {", ".join(attrs)}];'


def _param_lines(ctx: Ctx, n) -> list[str]:
    arch, b = ctx.model.arch, ctx.model.bindings
    a = arch.graph.nodes[n.path]
    if not a["params"]:
        return []
    parts, out = [], []
    for local, pnode in a["params"].items():
        p = arch.graph.nodes[pnode]
        shape = matrix_text(tuple(_at(x, b) for x in p["shape"]))
        if p["owner"] != n.path:
            owner = arch.graph.nodes[p["owner"]].get("label") or p["owner"]
            out.append(esc(f"{local} {shape}: tied to {owner}, no new params"))
        else:
            parts.append(shape)
    m = ctx.measures["params"]
    per = _per_copy(ctx, m, n.path)
    if parts and per is not None:
        share = _drawn_share(ctx, m, n.path, n.copy is not None) if m is ctx.colour else None
        pct = f" · {percent(share)}" if share is not None else ""
        out.insert(0, f"params {esc(value_text(per))} = {esc(' + '.join(parts))}{pct}")
    return out


def _edge_shape(ctx: Ctx, e) -> tuple:
    b = ctx.model.bindings
    if e.kind == "data" and ctx.shapes is not None:
        return tuple(_at(x, b) for x in ctx.shapes.get(_path_of(ctx, e.src), e.shape))
    return tuple(_at(x, b) for x in e.shape)


def labelled_crossing(ctx: Ctx, e) -> tuple[str, list[str]]:
    """A data edge that crosses a cluster's border, drawn through a text node that carries its
    shape (placed in the clusters both ends share, so the text never sits on the border): the
    node's statement and the two edges'."""
    mid = f"{e.src} -> {e.dst}"
    node = (f'"{mid}" [label=<{esc(shape_text(_edge_shape(ctx, e)))}>, shape=plain, style=filled, '
            'fillcolor="#ffffff", fontsize=10, fontcolor="#333333"];')
    return node, [f'"{e.src}" -> "{mid}" [arrowhead=none];', f'"{mid}" -> "{e.dst}";']


def edge_stmt(ctx: Ctx, e) -> str:
    shape = _edge_shape(ctx, e)
    if e.kind == "data":
        return f'"{e.src}" -> "{e.dst}" [label=<{esc(shape_text(shape))}>];'
    if e.kind == "tied":
        return (f'"{e.src}" -> "{e.dst}" [label=<<FONT COLOR="#1f5f99">same '
                f'{esc(matrix_text(shape))} matrix</FONT>>, labelfloat=true, style=dashed, color="#1f5f99", '
                "penwidth=1.6, constraint=false];")
    return (f'"{e.src}" -> "{e.dst}" [label=<<FONT COLOR="#1f5f99">{esc(e.role)}</FONT>>, '
            'style=dashed, color="#1f5f99", penwidth=1.6];')


def _shape(ctx: Ctx, path: str):
    """A node's shape as drawn: at the inference step when one is drawn."""
    if ctx.shapes is not None and path in ctx.shapes:
        return ctx.shapes[path]
    return ctx.model.arch.graph.nodes[path]["shape"]


def _path_of(ctx: Ctx, node_id: str) -> str:
    ids = ctx.__dict__.setdefault("_paths", {n.id: n.path for n in ctx.view.nodes})
    return ids.get(node_id, node_id)


def _heads_text(ctx: Ctx) -> str:
    """``h = 12 heads`` for a folded attention node."""
    from ..core.symbols import h

    v = h.xreplace(ctx.model.bindings)
    return f"h = {value_text(v)} heads" if v != h else "h heads"

"""Contexts for the parameter and shape templates: every number and formula as a finished
LaTeX string, taken from the derivations (``model.params``, ``parameter_list``, ``trace``).

Nothing here counts: sums of derived terms are formed only to print "per block" and "total"
lines, and every value is the model's own ``value`` of a derived expression.
"""

from __future__ import annotations

import re

import sympy

from ..core.symbols import as_expr

from ..derive.params import parameter_list, tied_uses
from ..core.symbols import CANONICAL
from ..render.latex import Tex, tex_concrete_shape, tex_expr, tex_shape
from ..render.latex_escape import NO_GLYPH_NOTE, no_glyph, tex_escape, tex_label, tex_texttt
from ..render.latex_names import COLOURS, category, category_label, local_path, tensor_name
from ..render.latex_numbers import tex_int, tex_percent, tex_short
from ..render.latex_math import ROW_WIDTH, pack_rows, rows_after, signed_terms, tex_fit, tex_lines, tex_times_rows


def _value(model, expr):
    return model.value(sympy.expand(expr))


def _num(v) -> Tex | None:
    return None if v is None else Tex(tex_int(v))


def sizes_used(model) -> list[str]:
    """Canonical names of the symbols the model's parameters and shapes use, plus bound ones."""
    from ..derive.shapes import trace

    names = {s.name for s in model.params.expr.free_symbols}
    for t in trace(model.arch):
        for x in t.shape:
            names |= {s.name for s in as_expr(x).free_symbols}
    names |= set(model.sizes)
    return [n for n in CANONICAL if n in names]


def header(model, notation) -> dict:
    """The model's name, sizes and the notation legend (symbol, meaning, value)."""
    legend = []
    for name in sizes_used(model):
        v = model.sizes.get(name)
        legend.append({"symbol": Tex(notation.symbol(name)), "meaning": _meaning(name),
                       "value": _num(v)})
    changed = [f"{k} = {str(v).lower()}" for k, v in model.flags.items() if v != model.family.flags[k]]
    return {"model": model.name, "family": model.family.name, "legend": legend,
            "flags": ", ".join(changed), "notation": notation.name,
            "workload": next((n.split(": ", 1)[1] for n in model.notes if n.startswith("workload: ")), ""),
            "glyphs": NO_GLYPH_NOTE if no_glyph(model.name) else "",
            "theta": Tex(notation.quantity("params"))}


def _meaning(name):
    from ..core.symbols import MEANING

    return MEANING[name]


def _top_repeat(model, node) -> tuple[str | None, sympy.Expr]:
    chain = model.arch.group_chain(model.arch.graph.nodes[node]["group"])
    if not chain:
        return None, sympy.Integer(1)
    top = chain[-1]
    return top.name, top.repeat


def _tensor_row(model, notation, e, per_copy):
    arch = model.arch
    kind = arch.graph.nodes[e.owner]["op"].kind
    sym, desc = tensor_name(e.owner, e.local, kind, arch)
    shape = Tex(tex_shape(e.shape, notation))
    concrete = tuple(as_expr(x).xreplace(model.bindings) for x in e.shape)
    return {
        "symbol": Tex(sym) if sym else None,
        "description": desc or f"{e.owner}.{e.local}",
        "path": Tex(tex_texttt(f"{e.owner}.{e.local}")),
        "shape": shape,
        "tied_to": None,
        "concrete": Tex(tex_concrete_shape(concrete)) if all(x.is_number for x in concrete) else None,
        "formula": tex_expr(per_copy, notation),
        "value": _num(_value(model, per_copy)),
    }


def per_copy(total, repeat) -> sympy.Expr:
    """*total* (over every copy of a stack) per copy: cancelled before it is expanded, so a
    count of (L - 3) copies gives its per-copy polynomial, never terms over (L - 3)."""
    return sympy.expand(sympy.cancel(sympy.expand(total) / repeat))


#: a sum continued on the next line of an ``align*``
CONTINUED = " \\\\\n  &\\quad + "


def lower_label(label: str) -> str:
    """A group's label inside a sentence: "Dense layer" -> "dense layer", "MoE layer" kept."""
    word = label.split(" ", 1)[0]
    return label[:1].lower() + label[1:] if word[1:].islower() else label


def times_factor(factor, notation) -> str:
    """*factor* typeset as a left factor of a parenthesised sum: a sum (L - 3) keeps its own
    parentheses, so the product reads as it is meant."""
    text = str(tex_expr(factor, notation))
    return f"\\left({text}\\right)" if isinstance(factor, sympy.Add) else text


def count_grouped(num, counts, notation, rows: bool = False, breakable: bool = False) -> str:
    """*num*, linear in a stack's count (L - 3), as ``(L - 3)(...) + rest`` when that leaves no
    negative term (the MoE layers' part, then the dense layers' part); else expanded. *rows*: for
    a side of an ``align*``, a formula too wide for a row broken over rows; *breakable*: in running
    text, the sum in ``\\bigl( \\bigr)``, where a line may break (not in ``\\left( \\right)``)."""
    for count in counts:
        if not isinstance(count, sympy.Add) or len(count.free_symbols) != 1:
            continue
        s = next(iter(count.free_symbols))
        if not (count.is_polynomial(s) and num.is_polynomial(s)) or sympy.degree(count, s) != 1 \
                or sympy.degree(num, s) != 1:
            continue
        per = sympy.expand(num.coeff(s, 1) / count.coeff(s, 1))
        rest = sympy.expand(num - per * count)
        if rest.has(s) or any(t.as_coeff_Mul()[0] < 0 for t in sympy.Add.make_args(rest)):
            continue
        inner = tex_expr(per, notation)
        if rows:
            head = (str(tex_times_rows(times_factor(count, notation), per, notation)) if isinstance(per, sympy.Add)
                    else f"{times_factor(count, notation)} \\cdot {inner}")
            return rows_after(head, signed_terms(rest, notation, first=True) if rest != 0 else [])
        paren = ("\\bigl(", "\\bigr)") if breakable else ("\\left(", "\\right)")
        head = (f"{times_factor(count, notation)} {paren[0]}{inner}{paren[1]}" if isinstance(per, sympy.Add)
                else f"{times_factor(count, notation)} \\cdot {inner}")
        return head + (f" + {tex_expr(rest, notation)}" if rest != 0 else "")
    return str(tex_fit(num, notation) if rows else tex_expr(num, notation))


def _numeric_rows(items) -> Tex:
    """``a + b + c`` for a row of the total's ``align*``, continued on further rows where it is
    wider than one (a model of many stacks: Zamba2's six)."""
    rows = pack_rows([str(items[0])] + [f"+ {t}" for t in items[1:]], ROW_WIDTH - 4)
    return Tex(" \\\\\n  &\\quad ".join(rows))


def by_count(expr, model, notation, rows: bool = False) -> Tex:
    """*expr* typeset with the model's mixed-stack count kept as a factor, ``(L - 3) \\cdot 3 E d
    d_ff + 2 V d`` rather than ``3 E L d d_ff - 9 E d d_ff + 2 V d``, where that reads without a
    negative term; otherwise as printed. *rows*: broken over the rows of an ``align*`` where it
    is too wide for one."""
    counts = [g.repeat for g in model.arch.stacks()] if len(model.arch.stacks()) > 1 else []
    if counts:
        return Tex(count_grouped(sympy.expand(expr), counts, notation, rows))
    return tex_fit(expr, notation) if rows else tex_expr(expr, notation)


def blocks(model, notation) -> dict:
    """One row per parameter tensor of the repeated block, counts per block."""
    groups: dict[str, dict] = {}
    for e in parameter_list(model.arch):
        g, repeat = _top_repeat(model, e.node)
        if g is None:
            continue
        per = per_copy(e.total, repeat)
        entry = groups.setdefault(g, {"rows": [], "sum": sympy.Integer(0), "repeat": repeat,
                                      "label": model.arch.groups[g].label or g})
        entry["rows"].append(_tensor_row(model, notation, e, per))
        entry["sum"] += per
    out = []
    for g, entry in groups.items():
        per_block = sympy.expand(entry["sum"])
        all_blocks = sympy.expand(per_block * entry["repeat"])
        out.append({
            "name": g, "label_key": Tex(re.sub(r"[^A-Za-z0-9]", "", g)), "label": entry["label"], "rows": entry["rows"],
            "total_formula": tex_expr(per_block, notation), "total_value": _num(_value(model, per_block)),
            "per_block": per_block,
            "repeat": tex_expr(entry["repeat"], notation), "factor": Tex(times_factor(entry["repeat"], notation)),
            "repeat_value": _num(_value(model, entry["repeat"])),
            "all_formula": tex_expr(all_blocks, notation), "all_value": _num(_value(model, all_blocks)),
            "all_short": _short(_value(model, all_blocks)),
            "times": _times(entry["repeat"], _value(model, entry["repeat"]), notation),
            "label_lower": lower_label(entry["label"]),
        })
    return {**header(model, notation), "groups": out}


def _times(repeat, value, notation) -> Tex:
    """How many copies of a block a model has, in a caption: "Times $L = 12$ blocks",
    "Times $3$ blocks", "Once"."""
    if repeat == 1:
        return Tex("Once")
    if repeat.is_Integer or value is None:
        return Tex(f"Times ${tex_expr(repeat, notation)}$ blocks")
    return Tex(f"Times ${tex_expr(repeat, notation)} = {tex_int(value)}$ blocks")


def _short(v) -> Tex | None:
    return None if v is None else Tex(tex_short(v))


def embeddings(model, notation) -> dict:
    """The tensors outside the repeated block (embeddings, final norm, head)."""
    rows, total = [], sympy.Integer(0)
    for e in parameter_list(model.arch):
        g, _ = _top_repeat(model, e.node)
        if g is not None:
            continue
        rows.append(_tensor_row(model, notation, e, e.total))
        total += e.total
    for op, local, pnode in tied_uses(model.arch):
        kind = model.arch.graph.nodes[op]["op"].kind
        sym, desc = tensor_name(op, local, kind, model.arch)
        owner_sym, owner_desc = tensor_name(model.arch.graph.nodes[pnode]["owner"],
                                            model.arch.graph.nodes[pnode]["local"], "", model.arch)
        rows.append({"symbol": Tex(sym) if sym else None, "description": desc or op,
                     "path": Tex(tex_texttt(f"{op}.{local}")),
                     "tied_to": Tex(f"${owner_sym}$") if owner_sym else (owner_desc or pnode),
                     "shape": None, "concrete": None, "formula": Tex("0"), "value": Tex("0")})
    total = sympy.expand(total)
    return {**header(model, notation), "rows": rows, "total_formula": tex_expr(total, notation),
            "total_value": _num(_value(model, total))}


def total(model, notation) -> dict:
    """The grand total as an ``align*`` derivation."""
    q = model.params
    b = blocks(model, notation)
    emb = embeddings(model, notation)
    steps = []
    block_terms = [Tex(f"{g['factor']} \\left({g['total_formula']}\\right)") for g in b["groups"]]
    if len(b["groups"]) > 1:  # several stacks: one per line, and the expansion broken into lines
        block_terms = [_bracket(g, notation) for g in b["groups"]]
        steps.append(Tex(CONTINUED.join(block_terms + [emb["total_formula"]])))
        steps.append(Tex(CONTINUED.join(str(t).removeprefix("+ ") for t in tex_lines(q.expr, notation, 4))))
        steps[-1] = Tex(steps[-1].replace(CONTINUED + "-", " \\\\\n  &\\quad -"))
    else:
        steps.append(Tex(" + ".join(block_terms + [emb["total_formula"]])))
        steps.append(tex_expr(q.expr, notation))
    numeric = None
    if q.value is not None:
        parts = [g["all_value"] for g in b["groups"]] + [emb["total_value"]]
        times = [f"{g['repeat_value']} \\cdot {g['total_value']}" for g in b["groups"]]
        numeric = {
            "products": _numeric_rows(times + [emb["total_value"]]),
            "parts": _numeric_rows(parts),
            "value": _num(q.value), "short": Tex(tex_short(q.value)),
        }
    return {**header(model, notation), "steps": steps, "numeric": numeric,
            "notes": list(q.notes) + list(model.notes)}


def _bracket(group, notation, width: int = 90) -> Tex:
    """A stack's count times its per-block sum; a sum too long for one row (a ten-term block) is
    broken over rows inside ``\\bigl( ... \\bigr)``, which, unlike ``\\left( \\right)``, may span
    rows of an ``align*``."""
    inner = str(group["total_formula"])
    if len(inner) <= width:
        return Tex(f"{group['factor']} \\left({inner}\\right)")
    lines = [str(t) for t in tex_lines(group["per_block"], notation, 5)]
    body = " \\\\\n  &\\quad\\quad ".join(lines)
    return Tex(f"{group['factor']} \\bigl({body}\\bigr)")


def breakdown(model, notation) -> dict:
    """The breakdown: parts with formula, value and share; the shares by category for
    the stacked bar (the model, and the same model with an untied head when it is tied)."""
    q = model.params
    arch = model.arch
    tot = q.value
    rows: list[dict] = []
    groups: dict[str, dict] = {}
    for path, expr in q.breakdown:
        g = arch.stack_of(path)
        if g is None:
            kind = arch.graph.nodes[path]["op"].kind
            sym, desc = tensor_name(path, "weight", kind, arch)
            tied = expr == 0 and any(op == path for op, _, _ in tied_uses(arch))
            rows.append({"label": _cap(desc or path), "per_block": False, "tied": tied, "all": False,
                         "formula": tex_expr(expr, notation),
                         "value": _num(_value(model, expr)) if tot is not None else None,
                         "share": _share(_value(model, expr), tot)})
            continue
        repeat = arch.groups[g].repeat
        entry = groups.get(g)
        if entry is None:
            entry = groups[g] = {"cats": {}, "repeat": repeat, "index": len(rows)}
            rows.append({"group": g})
        cat = category(path, arch)
        entry["cats"][cat] = entry["cats"].get(cat, sympy.Integer(0)) + expr
    out_rows = []
    for r in rows:
        if "group" not in r:
            out_rows.append(r)
            continue
        entry = groups[r["group"]]
        per_sum = sympy.Integer(0)
        from ..render.latex_names import TABLE_ORDER

        cats = sorted(entry["cats"].items(), key=lambda kv: TABLE_ORDER.index(kv[0])
                      if kv[0] in TABLE_ORDER else len(TABLE_ORDER))
        for cat, expr in cats:
            per = per_copy(expr, entry["repeat"])
            per_sum += per
            out_rows.append({"label": _cap(category_label(cat)) + ", per block", "per_block": True, "tied": False, "all": False,
                             "formula": tex_expr(per, notation), "value": _num(_value(model, per)),
                             "share": _share(_value(model, expr), tot)})
        all_expr = sympy.expand(per_sum * entry["repeat"])
        out_rows.append({"label": "All blocks", "per_block": False, "tied": False, "all": True,
                         "formula": Tex(f"{times_factor(entry['repeat'], notation)} \\left({tex_expr(sympy.expand(per_sum), notation)}\\right)"),
                         "value": _num(_value(model, all_expr)), "share": _share(_value(model, all_expr), tot)})
    bars = [_bar(model, notation)]
    if model.flags.get("tied"):
        bars.append(_bar(model.with_(tied=False), notation))
    for i, b in enumerate(bars):
        b["yshift"] = Tex(f"{-1.55 * i:.2f}")
    bars = [b for b in bars if b["segments"]]
    return {**header(model, notation), "rows": out_rows, "total_formula": by_count(q.expr, model, notation),
            "total_value": _num(tot), "total_short": _short(tot), "bars": bars,
            "categories": _legend(bars)}


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _share(v, total) -> Tex | None:
    if v is None or not total:
        return None
    return Tex(tex_percent(v, total))


def _bar(model, notation) -> dict:
    """One stacked bar: segments in category order with left/right in percent (0..100)."""
    from ..render.latex_names import CATEGORIES

    q = model.params
    tot = q.value
    sums: dict[str, sympy.Expr] = {}
    for path, expr in q.breakdown:
        cat = category(path, model.arch)
        sums[cat] = sums.get(cat, sympy.Integer(0)) + expr
    order = [c for c in CATEGORIES if c in sums] + [c for c in sums if c not in CATEGORIES]
    segs, left = [], sympy.Integer(0)
    for cat in order:
        v = _value(model, sums[cat])
        if v is None or tot is None or v == 0:
            continue
        share = v * 100 / tot
        right = left + share
        segs.append({"key": cat, "label": category_label(cat), "colour": COLOURS.get(cat, "gray!40"),
                     "left": Tex(f"{float(left):.3f}"), "right": Tex(f"{float(right):.3f}"),
                     "mid": Tex(f"{float(left + share / 2):.3f}"),
                     "share": Tex(tex_percent(v, tot)), "inside": share >= 12 and _label_fits(cat, share),
                     # a narrow last segment: its label ends at the bar's end, not past the margin
                     "east": right == 100 and share < 20})
        left = right
    head = "the output head shares the token embedding" if model.flags.get("tied") else \
        "a separate output head" if "tied" in model.flags else ""
    return {"title": Tex(tex_short(tot) + r"\ \text{parameters}") if tot is not None else None,
            "caption": head, "segments": segs}


#: width of one \footnotesize character in the bar's units (1 unit = 0.96 % of the line width),
#: measured on the typeset bar (0.81-0.85; "attention 14.3 %" fills a 14.3-unit segment)
_CHAR_UNITS = 0.85


def _label_fits(cat, share) -> bool:
    """Whether a segment's label ("cross attention 12.7 %") fits inside the segment: a label wider
    than its segment would print over its neighbour's (the legend and the caption name it)."""
    text = f"{category_label(cat)} {float(share):.1f} %"
    return len(text) * _CHAR_UNITS <= float(share) - 0.5


def _legend(bars) -> list[dict]:
    seen, out = set(), []
    for b in bars:
        for s in b["segments"]:
            if s["key"] not in seen:
                seen.add(s["key"])
                out.append({"label": s["label"], "colour": s["colour"]})
    return out


def shapes(model, notation, **bindings) -> dict:
    """Every tensor of the forward pass, symbolic and concrete."""
    from ..derive.shapes import trace

    m = model.with_(**bindings) if bindings else model
    concrete = m.shapes()
    symbolic = trace(m.arch)
    bands: list[dict] = []
    for i, (c, s) in enumerate(zip(concrete, symbolic), 1):
        title = None
        if c.group:
            grp = m.arch.groups[c.group]
            rep = m.value(grp.repeat)
            count = tex_expr(grp.repeat, notation)  # "L = 12", or a plain number once
            title = Tex(f"{tex_escape(grp.label or c.group)}, " + (
                "once" if grp.repeat == 1 else f"repeated ${count}"
                + (f" = {tex_int(rep)}$ times" if rep is not None and not grp.repeat.is_Integer else "$ times")))
            if sympy.expand(grp.active - grp.repeat) != 0:  # experts: k of E run per token
                act = m.value(grp.active)
                title = Tex(f"{title}, ${tex_expr(grp.active, notation)}"
                            + (f" = {tex_int(act)}$" if act is not None and not grp.active.is_Integer else "$")
                            + " active per token")
            if grp.parent is not None:
                outer = m.arch.groups[grp.parent].label or grp.parent
                title = Tex(f"{title}, in each {tex_escape(lower_label(outer))}")
        if not bands or bands[-1]["group"] != c.group:
            bands.append({"group": c.group, "title": title, "rows": []})
        bound = all(getattr(x, "is_number", False) for x in c.shape)
        bands[-1]["rows"].append({
            "index": i, "label": Tex(f"${tex_label(c.label)}$"), "path": Tex(tex_texttt(local_path(c.name, m.arch.groups))),
            "op": c.op.replace("_", " "),
            "symbolic": tex_shape(s.shape, notation) if s.shape else Tex(r"\text{scalar}"),
            "concrete": (tex_concrete_shape(c.shape) if c.shape else Tex(r"\text{scalar}")) if bound else None,
        })
    at = [(Tex(notation.symbol(k)), Tex(tex_int(m.sizes[k]))) for k in ("B", "T") if k in m.sizes]
    return {**header(m, notation), "bands": bands, "at": at, "size": _table_size(bands)}


#: the widest row (in italic letters, ``tex_width``) a \small shape table holds within the margin;
#: wider tables are set in \footnotesize (a vision tower's patch rows: Gemma 3's ran 10 pt over)
SHAPES_SMALL_WIDTH = 56


def _table_size(bands) -> Tex:
    from ..render.latex_math import tex_width

    def width(r):
        return (tex_width(str(r["label"]).strip("$")) + 0.9 * len(r["op"]) + tex_width(str(r["symbolic"]))
                + tex_width(str(r["concrete"] or "")))

    widest = max((width(r) for b in bands for r in b["rows"]), default=0)
    return Tex(r"\small" if widest <= SHAPES_SMALL_WIDTH else r"\footnotesize")


__all__ = ["header", "blocks", "embeddings", "total", "breakdown", "shapes"]

"""Contexts for the cost templates: the rule-of-thumb cross-check, the FLOPs
derivation with the FLOPs-per-token figure, and the training-memory table.

Every expression and value comes from the derivations (``model.quantity``) and the queries
(``symgpt.query``: compare, rule, crossover, the formula library); this module prints them.
"""

from __future__ import annotations

from fractions import Fraction

import sympy

from ..graph import roles as R
from ..core.errors import SymgptError
from ..core.exprparse import parse_expression
from ..derive.quantity import evaluate
from ..core.symbols import B, T
from ..render.latex import Tex, tex_expr
from ..render.latex_escape import tex_escape, tex_texttt
from ..render.latex_math import ROW_WIDTH, tex_fit, tex_width, tex_lines, tex_substituted_fit, tex_term_values, tex_times_rows
from ..render.latex_names import tensor_name, where
from ..render.latex_numbers import tex_bytes, tex_int, tex_number, tex_percent, tex_short
from .latex_sections import by_count, count_grouped, header, lower_label, per_copy, times_factor

#: fp16 weights and gradients, fp32 Adam master weights and moments
MEMORY_POLICY = {"precision": "mixed-fp16", "optimizer": "adam"}


def _pct(v) -> Tex | None:
    return None if v is None else Tex(tex_percent(v, 1))


#: the widths that grow together in a family's own leading-order rule (L, h, E, k stay fixed)
WIDTHS = ("d", "d_ff", "V", "d_head")


def family_rule(q):
    """The leading-order rule of *q* (a parameter count) derived from the model's own graph:
    every width it has (d, d_ff, V, d_head) grows in proportion, the counts (L, h, h_kv, E, k)
    stay fixed. GPT-2: 12Ld^2 + Vd; Llama: SwiGLU's 3Ld d_ff, GQA's reduced K/V and an untied
    head; an MoE: 3ELd d_ff, every expert. None where the count has no width symbol."""
    from ..query import rule as leading

    names = {str(s) for s in q.expr.free_symbols}
    widths = [w for w in WIDTHS if w in names]
    return (leading(q, ",".join(widths)), widths) if widths else (None, [])


def rule(model, notation) -> dict:
    """The family's own leading-order rule against the exact count (GPT-2's published rule
    ``Vd + 12Ld^2 + 2d`` where that is the family's rule), and the rules as d grows."""
    from ..core.symbols import CANONICAL
    from ..query import compare, formula, rule as leading

    q = model.params
    f = formula("gpt2-rule")
    own, widths = family_rule(q)
    L, d, V = CANONICAL["L"], CANONICAL["d"], CANONICAL["V"]
    published = own is None or sympy.expand(own.rule - (12 * L * d**2 + V * d)) == 0
    if published:
        source, expression, why_text = f.source, f.expression, f.why
    else:
        shown = ", ".join(f"${notation.symbol(w)}$" for w in widths)
        source = (f"{tex_texttt(model.family.name)}, derived from its graph as the widths ({shown}) "
                  "grow together, the other sizes fixed,")
        expression, why_text = own.rule, None
    c = compare(q, expression, model=model.name)
    long_dropped = len(str(by_count(-c.difference, model, notation))) > 80
    b = model.bindings
    rv = evaluate(c.formula, b)  # None where the rule's symbols are not the model's (ViT has no V)
    rows = []
    for regime, label in ((["d", "V"], r"d, V \to \infty\ (V \propto d)"), ("d", r"d \to \infty")):
        r = leading(q, regime)
        rows.append({"regime": Tex(label), "rule": by_count(r.rule, model, notation),
                     "value": _num(r.rule_value), "error": _pct(r.relative_error)})
    return {**header(model, notation),
            "source": Tex(source) if not published else source,
            "formula": by_count(c.formula, model, notation),
            "substituted": tex_substituted_fit(c.formula, b) if rv is not None and q.value is not None else None,
            "terms": tex_term_values(c.formula, b, "exact", width=ROW_WIDTH),
            "value": _num(rv), "exact": _num(q.value),
            "exact_short": Tex(tex_short(q.value)) if q.value is not None else None,
            "value_short": Tex(tex_short(rv)) if rv is not None and q.value is not None else None,
            "dropped": by_count(-c.difference, model, notation, rows=long_dropped),
            # a formula too long to share a line with its numbers (about half a text line): its own row
            "long": len(str(by_count(c.formula, model, notation))) > 60,
            "formula_rows": by_count(c.formula, model, notation, rows=True),
            "long_dropped": long_dropped, "dropped_value": _num(c.difference_value and -c.difference_value),
            "error": _pct(c.relative_error), "rules": rows,
            # the source's explanation holds only where the difference is the one it documents
            "why": why_text if published and f.expect != "equal" and
            sympy.expand(c.difference - parse_expression(f.expect)) == 0 else None}


def _num(v) -> Tex | None:
    return None if v is None else Tex(tex_int(v))


#: how the cost sections name an op whose FLOPs are not those of a parameter tensor, by role
_COST_LABELS = {R.SCORES: "attention scores $QK^\\top$", R.VALUES: "attention values $AV$",
                R.SOFTMAX: "softmax", R.TOKEN_EMBEDDING: "token embedding lookup"}


def _part_label(model, path) -> str:
    arch = model.arch
    kind = arch.graph.nodes[path]["op"].kind if path in arch.graph else ""
    _, desc = tensor_name(path, "weight", kind, arch)
    role = arch.graph.nodes[path].get("role") if path in arch.graph else None
    return _COST_LABELS.get(role, desc or path)


def flops(model, notation, convention=None, numbers: str = "sci", digits: int = 4) -> dict:
    """forward FLOPs of one block per sequence, of the blocks and the head
    per batch, the total, the training step, and 6ND; plus the per-token figure."""
    from ..core.conventions import convention as get_convention
    from ..query import by_role, compare, crossover, select
    from ..query.selection import entry_stack, unbind

    def _sci(v) -> Tex | None:  # a value in the style asked for (sci by default)
        return None if v is None else Tex(tex_number(v, numbers, digits))

    conv = get_convention(convention)
    opts = {"convention": convention} if convention else {}
    # per step, whatever the convention; per="batch" is left out where the convention counts per
    # step already (the same quantity, derived once under one key for every section)
    step = opts if conv.per == "batch" else {**opts, "per": "batch"}
    fwd = model.quantity("flops.forward", **step)
    train = model.quantity("flops.train", **step)
    back = model.quantity("flops.backward", **step)
    # the stacks the forward runs (a held tower's layers count no FLOPs: not listed)
    running = {entry_stack(model.arch, path) for path, _ in fwd.breakdown}
    stacks = [g for g in model.arch.stacks() if g.name in running]
    if not stacks:
        raise SymgptError(f"{model.name} has no stack of layers to count the FLOPs of one block of")
    first = stacks[0]  # the block told in full; other stacks are totalled below it
    block = select(model, "flops.forward", roles=[first.name], per_block_=True, per="sequence", **opts)
    # one layer of the first stack: its total cancelled by its count (a count such as L - floor(L/2)
    # would otherwise stay in the denominators of an expanded sum)
    block_expr = per_copy(select(model, "flops.forward", roles=[first.name], per="sequence", **opts).expr,
                          first.repeat) if len(stacks) > 1 else block.expr
    b = model.bindings
    blocks_q = by_role(fwd, model, [first.name])
    rows = []
    total, train_v, params_v = fwd.value, train.value, model.params.value  # each once
    block_v = evaluate(block_expr, model.bindings) if len(stacks) > 1 else block.value
    repeats = {g.name: g.repeat for g in stacks}
    current = None
    for path, expr in fwd.breakdown:
        v = evaluate(expr, b)
        stack = entry_stack(model.arch, path)
        if len(stacks) > 1 and stack != current:  # several stacks: each under its own heading
            current = stack
            g = model.arch.groups[stack] if stack is not None else None
            rows.append({"header": Tex(
                f"{tex_escape(g.label or g.name)}, {_count(g.repeat, notation)} of them" if g is not None
                else "outside the stacks")})
        label = _part_label(model, path) + (where(path, model.arch) if len(stacks) > 1 else "")
        rows.append({"header": None, "label": Tex(_tex_label(label)),
                     "formula": grouped(expr, repeats.get(stack), notation),
                     "value": _sci(v), "share": Tex(tex_percent(v, total)) if v is not None and total else None,
                     "repeated": stack is not None})
    others = []
    for g in stacks[1:]:
        e = by_role(fwd, model, [g.name]).expr
        others.append({"label": Tex(f"{tex_escape(lower_label(g.label or g.name))} stack, all {_count(g.repeat, notation)} of them"),
                       "formula": grouped(e, g.repeat, notation, always=True, rows=True), "value": _sci(evaluate(e, b)),
                       "display": True})
    others += [{"display": False, "label": Tex(_tex_label(_part_label(model, p))), "formula": tex_expr(e, notation),
                "value": _sci(evaluate(e, b))}
               for p, e in fwd.breakdown if entry_stack(model.arch, p) is None]
    n = model.params.expr
    six = compare(train, "6*N*B*T", names={"N": n}, model=model.name)
    ratio = (train_v / total) if (train_v is not None and total) else None
    ctx = {**header(model, notation), "convention": conv.name, "summary": conv.summary,
           "source": conv.source,
           "block_formula": tex_fit(block_expr, notation),
           "block_substituted": tex_substituted_fit(block_expr, b) if block_v is not None else None,
           "block_terms": tex_term_values(block_expr, b, numbers, digits, width=ROW_WIDTH),
           "block_value": _sci(block_v),
           "repeat": tex_expr(B * first.repeat, notation),
           # several stacks: the first stack's total is the count times the block above, not expanded
           "blocks_formula": tex_expr(blocks_q.expr, notation) if len(stacks) == 1 else None, "blocks_value": _sci(blocks_q.value),
           "others": others, "rows": rows,
           "forward_formula": _forward_lines(model, fwd, stacks, notation) if len(stacks) > 1
           else tex_lines(fwd.expr, notation, 4, width=ROW_WIDTH), "forward_value": _sci(total),
           "first_label": Tex(tex_escape(lower_label(first.label or first.name))) if len(stacks) > 1 else None,
           "first_count": Tex(_count(first.repeat, notation)) if len(stacks) > 1 else None,
           "backward_value": _sci(back.value), "train_value": _sci(train_v),
           "ratio": Tex(tex_number(ratio, "short", 3)) if ratio is not None else None,
           "sixnd_formula": Tex(f"6\\,{notation.quantity('params')}\\,{notation.symbol('B')}{notation.symbol('T')}"),
           "sixnd_value": _sci(evaluate(six.formula, b)), "sixnd_error": _pct(six.relative_error),
           "theta": Tex(notation.quantity("params")), "theta_short": Tex(tex_short(params_v))
           if params_v is not None else None}
    try:
        ctx["figure"] = _flops_figure(model, notation, opts, unbind, crossover, select)
    except SymgptError:  # no crossover to mark (e.g. a sliding window: Min(T, W) terms)
        ctx["figure"] = None
    return ctx


def _count(repeat, notation) -> str:
    """A stack's count in running text: "3", or "$L - 3$"."""
    return tex_int(repeat) if repeat.is_Integer else f"${tex_expr(repeat, notation)}$"


def grouped(expr, repeat, notation, always: bool = False, rows: bool = False) -> Tex:
    """*expr* (a total over every copy of a stack of *repeat* layers) as the count times one
    layer, ``(L - 3) (2 B T d + ...)``, where the count is a sum (a mixed stack: expanded, it
    would read as terms with negative signs) or *always*; otherwise expanded as it is. *rows*:
    for an ``align*``, broken over rows where it is too wide for one."""
    if repeat is None or not (always or isinstance(repeat, sympy.Add)) or repeat == 1:
        return tex_fit(expr, notation) if rows else tex_expr(expr, notation)
    per = per_copy(expr, repeat)
    if not per.free_symbols and not isinstance(repeat, sympy.Add):
        return tex_fit(expr, notation) if rows else tex_expr(expr, notation)
    if isinstance(per, sympy.Add):
        if rows:
            return tex_times_rows(times_factor(repeat, notation), per, notation)
        return Tex(f"{times_factor(repeat, notation)} \\left({tex_expr(per, notation)}\\right)")
    return Tex(f"{times_factor(repeat, notation)} \\cdot {tex_expr(per, notation)}")


def _forward_lines(model, fwd, stacks, notation) -> list[Tex]:
    """The forward FLOPs of a model with several stacks, grouped as it is built: each stack as its
    count times one layer, then the parts outside the stacks; one stack per line."""
    from ..query import by_role
    from ..query.selection import entry_stack

    lines = [grouped(by_role(fwd, model, [g.name]).expr, g.repeat, notation, always=True, rows=True) for g in stacks]
    rest = sympy.expand(sum((e for p, e in fwd.breakdown if entry_stack(model.arch, p) is None), sympy.Integer(0)))
    if rest != 0:
        lines.append(tex_fit(rest, notation))
    return [Tex(("" if i == 0 else "+ ") + str(t)) for i, t in enumerate(lines)]


def _one_fraction(expr, notation, counts=()) -> Tex:
    """*expr* as printed, or, where its expanded terms have several denominators (a mixed
    stack's per-layer average: terms over L h and over h), as one fraction over a common one."""
    num, den = sympy.fraction(sympy.together(sympy.expand(expr)))
    parts = sympy.Add.make_args(sympy.expand(expr))
    dens = {sympy.fraction(t)[1] for t in parts} - {1}
    # several terms over one shared sum (MLA's crossover over L h (d_nope + d_rope + d_v)): one fraction too
    shared_sum = len(dens) == 1 and len(parts) > 2 and isinstance(sympy.expand(next(iter(dens))), sympy.Add)
    if den.is_number or (len(dens) <= 1 and not shared_sum):
        return tex_expr(expr, notation)
    if shared_sum:
        den = sympy.factor(den)
    top = count_grouped(sympy.expand(num), counts, notation)
    if tex_width(top) > ROW_WIDTH:  # a numerator wider than a line: a sum in running text may break
        top = count_grouped(sympy.expand(num), counts, notation, breakable=True)
        return Tex(f"\\frac{{1}}{{{tex_expr(den, notation)}}} \\bigl({top}\\bigr)")
    return Tex(f"\\frac{{{top}}}{{{tex_expr(den, notation)}}}")


def _too_long(formula) -> bool:
    """A crossover's closed form that running text cannot break: a root (``\\sqrt``, one box)
    wider than two lines; the figure gives its value and names the command that prints it."""
    return "\\sqrt" in str(formula) and tex_width(formula) > 2 * ROW_WIDTH


def _legend_formula(expr, notation) -> str:
    """`` $formula$`` after a curve's name in a legend; nothing where the expanded formula has a
    negative term (a mixed stack's count, expanded): the section's text gives it grouped."""
    terms = sympy.Add.make_args(sympy.expand(expr))
    if any(t.as_coeff_Mul()[0] < 0 for t in terms):
        return ""
    return f" ${tex_expr(expr, notation)}$"


def _tex_label(text: str) -> str:
    """A part label (symgpt's own text): escaped, a ``$...$`` math span kept, spaces kept."""
    if "$" in text:
        head, math, tail = text.split("$", 2)
        pad = (" " if head.endswith(" ") else "", " " if tail.startswith(" ") else "")
        return tex_escape(head) + pad[0] + "$" + math + "$" + pad[1] + tex_escape(tail)
    return tex_escape(text)


def _fmt(v) -> str:
    return f"{float(v):.6g}"


def _ceil_log2(v) -> int:
    """``ceiling(log2(v))`` of a positive number: for a Rational by exact integer arithmetic (the
    smallest k with 2^k >= v), else by SymPy."""
    if not v.is_Rational:
        return int(sympy.ceiling(sympy.log(v, 2)))
    p, q = int(v.p), int(v.q)
    k = p.bit_length() - q.bit_length()  # 2^(k-1) < p/q < 2^(k+1)
    while Fraction(2) ** k < Fraction(p, q):
        k += 1
    while Fraction(2) ** (k - 1) >= Fraction(p, q):
        k -= 1
    return k


def _at_T(bindings):
    """``at(expr, x)``: *expr*'s exact value at *bindings* and ``T = x`` (None while a symbol is
    unbound) -- ``evaluate(expr, {**bindings, T: x})``, with the bindings substituted once per
    expression rather than once per point."""
    bound = {}

    def at(expr, x):
        if expr not in bound:
            bound[expr] = expr.xreplace(dict(bindings))
        return evaluate(bound[expr], {T: x if isinstance(x, sympy.Basic) else sympy.Integer(x)})
    return at


def _flops_figure(model, notation, opts, unbind, crossover, select) -> dict | None:
    """Forward FLOPs per token against T: the attention matmuls, the dense matmuls and the
    total with the head, on log axes, with the crossover T = 6d marked."""
    counts = [g.repeat for g in model.arch.stacks()]
    per_tok = select(model, "flops.forward", per="token", **opts)
    blocks = select(model, "flops.forward", roles=[R.STACK], per="token", **opts)
    if T not in blocks.expr.free_symbols:
        return None  # no one sequence length T to plot against (T_enc and T_dec; ViT's patches)
    cross = crossover(blocks, "T")
    cross_all = crossover(per_tok, "T")
    if cross.value is None or cross.notes:  # notes: a regime (T <= W) the plotted T range leaves
        return None
    b = {k: v for k, v in unbind(per_tok, [T]).bindings.items()}
    x_cross = cross.value
    lo, hi = 128, max(32768, 2 ** _ceil_log2(x_cross * 4))
    xs = []
    t = lo
    while t <= hi:
        xs.append(t)
        t *= 2
    at = _at_T(b)  # each series' T-free part substituted once, then T point by point
    series = []
    for key, expr, style, label in (
            ("dense", cross.slow, "blue!70!black, thick", "dense matmuls" + _legend_formula(cross.slow, notation)),
            ("attention", cross.fast, "red!75!black, thick", "attention matmuls" + _legend_formula(cross.fast, notation)),
            ("total", per_tok.expr, "black, densely dashed", "all forward FLOPs (with the head)")):
        pts = [(x, at(expr, x)) for x in xs]
        series.append({"key": key, "style": Tex(style), "label": Tex(_tex_label(label)),
                       "coords": Tex(" ".join(f"({x},{_fmt(v)})" for x, v in pts))})
    y_cross = at(cross.fast, x_cross)
    ys = [at(e, x) for e in (cross.fast, cross.slow, per_tok.expr) for x in (lo, hi)]
    tmax = model.sizes.get("T_max")
    return {"xmin": Tex(str(lo)), "xmax": Tex(str(hi)), "series": series,
            "xticks": Tex(",".join(str(x) for x in xs)),
            "xticklabels": Tex(",".join("{" + tex_int(x) + "}" for x in xs)),
            "ymin": Tex(_fmt(min(ys) / 2)), "ymax": Tex(_fmt(max(ys) * 2)),
            "x_cross": Tex(_fmt(x_cross)), "y_cross": Tex(_fmt(y_cross)),
            "cross_formula": _one_fraction(cross.solution, notation, counts),
            "cross_long": _too_long(_one_fraction(cross.solution, notation, counts)),
            "cross_all_long": cross_all.solution is not None
            and _too_long(_one_fraction(cross_all.solution, notation, counts)),
            "cross_value": Tex(tex_int(x_cross))
            if x_cross.is_Integer else Tex(tex_number(x_cross, "short")),
            "cross_all_formula": _one_fraction(cross_all.solution, notation, counts) if cross_all.solution is not None else None,
            "cross_all_value": Tex("= " + tex_int(cross_all.value) if cross_all.value.is_Integer
                                   else r"\approx " + tex_int(int(sympy.floor(cross_all.value + sympy.Rational(1, 2)))))
            if cross_all.value is not None else None,
            "tmax": Tex(str(int(tmax))) if tmax is not None else None,
            "tmax_label": Tex(tex_int(tmax)) if tmax is not None else None,
            "T": Tex(notation.symbol("T")), "T_max": Tex(notation.symbol("T_max"))}


def _ratio(expr: sympy.Expr, by: sympy.Expr) -> sympy.Expr:
    """``expr / by``, a number where the two are proportional (bytes per parameter): by
    ``cancel``, which shows that for polynomials, else by ``simplify`` (whose first call imports
    ``sympy.physics.units``, a tenth of a second a report need not spend)."""
    ratio = sympy.cancel(expr / by)
    return ratio if ratio.is_number else sympy.simplify(expr / by)


def memory(model, notation, **policy) -> dict:
    """The training-memory budget, exact, under the usual mixed-precision policy,
    with the textbook three-term activation estimate beside the full count of saved tensors."""
    from ..derive.memory import three_term_estimate

    opts = {**MEMORY_POLICY, **policy}
    rows = []
    theta = notation.quantity("params")
    pexpr = model.params.expr
    for name, label in (("memory.weights", "Parameters"), ("memory.gradients", "Gradients"),
                        ("memory.optimizer", "Optimizer state")):
        q = model.quantity(name, **opts)
        ratio = _ratio(q.expr, pexpr)
        formula = Tex(f"{tex_int(ratio)}\\,{theta}") if ratio.is_number else tex_expr(q.expr, notation)
        rows.append({"label": label, "formula": formula, "bytes": _num(q.value),
                     "size": Tex(tex_bytes(q.value)) if q.value is not None else None,
                     "parts": [p for p, _ in q.breakdown] if name == "memory.optimizer" else []})
    act = model.quantity("memory.activations", **opts)
    estimate = three_term_estimate(model, opts["precision"])
    tot = model.quantity("memory.total", **opts)
    states = sum(r_q.value for r_q in (model.quantity(n, **opts) for n in
                 ("memory.weights", "memory.gradients", "memory.optimizer"))) \
        if tot.value is not None else None
    estimate_total = (states + estimate.value) if states is not None and estimate.value is not None else None
    return {**header(model, notation), "policy": opts["precision"], "optimizer": opts["optimizer"],
            "rows": rows, "notes": list(tot.notes),
            "act_lines": tex_lines(act.expr, notation, 4), "act_bytes": _num(act.value),
            "act_size": Tex(tex_bytes(act.value)) if act.value is not None else None,
            "estimate_formula": tex_expr(estimate.expr, notation), "estimate_bytes": _num(estimate.value),
            "estimate_size": Tex(tex_bytes(estimate.value)) if estimate.value is not None else None,
            "total_bytes": _num(tot.value), "total_size": Tex(tex_bytes(tot.value)) if tot.value is not None else None,
            "estimate_total_size": Tex(tex_bytes(estimate_total)) if estimate_total is not None else None,
            "theta": Tex(theta)}

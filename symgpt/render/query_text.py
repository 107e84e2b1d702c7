"""Human output of the queries (rule, dominance, crossover, compare, check): formulas above
numbers, exact values with a rounded decimal beside fractions. Printers format; never derive."""

from __future__ import annotations

from .report_text import model_header
from .text import expr_text, number, sci, table


def percent(r, signed: bool = True) -> str:
    """An exact ratio as a percentage for display (``-0.7283 %``); ``-`` when None."""
    if r is None:
        return "-"
    if abs(r) >= 10**12:  # past what a float shows well (or holds: 1e400 is inf)
        return f"{'+' if signed and r > 0 else ''}{sci(100 * r)} %"
    return f"{100 * float(r):+.4g} %" if signed else f"{100 * float(r):.4g} %"


def value_text(v) -> str:
    """An exact value; a non-integer also as a rounded decimal (``6,702 + 1/24 ≈ 6,702.04``)."""
    if v is None:
        return "(unbound: set the free symbols with --set)"
    if v.is_Integer:
        return number(v)
    return f"{number(v)} ≈ {float(v):,.6g}" if abs(v) < 10**300 else f"{number(v)} ≈ {sci(v)}"


def _title(q) -> str:
    conv = f", convention: {q.convention}" if q.convention else ""
    return f"{q.name} ({q.unit}{conv})" if q.unit else q.name


def rule_text(m, r, rewritten=None) -> str:
    q = r.quantity
    lines = [model_header(m), "", _title(q), f"  as {r.regime.describe(q.expr)}", "",
             "rule (leading order)", f"  {expr_text(r.rule)}"]
    for name, (definition, form) in (rewritten or {}).items():
        lines.append(f"  = {expr_text(form)}    with {name} = {expr_text(definition)}")
    lines.append(f"  = {value_text(r.rule_value)}")
    lines += ["", "exact", f"  {expr_text(r.exact)}", f"  = {value_text(r.exact_value)}", "",
              f"dropped by the rule: {expr_text(r.correction)}",
              f"relative error of the rule (rule - exact) / exact: {percent(r.relative_error)}"
              + (f"  (exact {r.relative_error})" if r.relative_error is not None else "")]
    lines += [f"note: {n}" for n in r.notes]
    return "\n".join(lines)


def dominance_text(m, dm) -> str:
    q = dm.quantity
    bound = q.value is not None   # value and share columns only at a configuration
    lines = [model_header(m), "", _title(q), f"  as {dm.regime.describe(q.expr)}", "",
             "terms by growth (dominant first)"]
    rows = [[f"λ^{t.order}", expr_text(t.expr)] + ([number(t.value)] if bound else [])
            for t in dm.terms]
    lines += [table(["order", "terms"] + (["value"] if bound else []), rows, "llr"), "",
              f"dominant: {expr_text(dm.dominant)}", "", "share of each part"]
    rows = [[p.path, expr_text(p.expr), "-" if p.order is None else f"λ^{p.order}",
             expr_text(p.limit)] + ([percent(p.share, False)] if bound else []) for p in dm.parts]
    heads = ["part", "formula", "order", "limit of share"] + (["share now"] if bound else [])
    lines.append(table(heads, rows, "lllrr"))
    return "\n".join(lines)


def ranking_text(m, q, parts, terms) -> str:
    lines = [model_header(m), "", _title(q), f"  {expr_text(q.expr)}", f"  = {value_text(q.value)}",
             "", "largest parts at this configuration"]
    rows = [[str(i), r.name, expr_text(r.expr), number(r.value), percent(r.share, False)]
            for i, r in enumerate(parts, 1)]
    lines += [table(["#", "part", "formula", "value", "share"], rows, "rllrr"), "",
              "largest terms"]
    rows = [[str(i), expr_text(r.expr), number(r.value), percent(r.share, False)]
            for i, r in enumerate(terms, 1)]
    lines.append(table(["#", "term", "value", "share"], rows, "rlrr"))
    return "\n".join(lines)


def crossover_text(m, c, whole=None, moved=None) -> str:
    s = c.symbol.name
    lines = [model_header(m), "", _title(c.quantity), f"  as {s} grows", "",
             f"{c.fast_label}", f"  {expr_text(c.fast)}",
             f"overtakes {c.slow_label}", f"  {expr_text(c.slow)}", "",
             f"at {s} = {expr_text(c.solution) if c.solution is not None else '(undecided)'}",
             f"   = {value_text(c.value)}"]
    if len(c.solutions) > 1:
        lines.append("other positive roots: " + ", ".join(expr_text(r) for r in c.solutions
                                                          if r != c.solution))
    if c.value is None:  # name what is left to bind (an encoder-decoder's other length, T_dec)
        bound = {k.name for k in c.quantity.bindings}
        free = sorted({x.name for r in c.solutions for x in r.free_symbols} - bound - {s})
        if free:
            lines.append(f"note: the crossover depends on {', '.join(free)}: bind "
                         f"{'them' if len(free) > 1 else 'it'} with --set")
    if whole is not None:
        lines += ["", f"with the whole {whole.quantity.name} counted "
                  f"(the rest: {expr_text(whole.slow)})",
                  f"  at {s} = {expr_text(whole.solution) if whole.solution is not None else '-'}",
                  f"     = {value_text(whole.value)}",
                  f"  it moves by {expr_text(moved) if moved is not None else '-'}"
                  f" = {value_text(m.value(moved) if moved is not None else None)}"]
    return "\n".join(lines)


def models_crossover_text(m, other, c) -> str:
    """The crossover of one quantity of two models (``query.crossmodels``)."""
    s = c.symbol.name
    lines = [model_header(m), f"against {model_header(other)}", "", f"{c.first.name} ({c.first.unit}) as {s} grows",
             f"  {c.first_label}: {expr_text(c.a)}", f"  {c.second_label}: {expr_text(c.b)}", ""]
    if c.cheaper is None:
        lines.append("the two are equal beyond every crossing")
    elif c.solution is None:
        lines.append(f"no crossing at {s} > 0: {c.cheaper} is the smaller at every {s} >= 1")
    else:
        shown = value_text(c.solution) if c.solution.is_Rational else f"≈ {float(c.solution):,.6g}"
        lines += [f"they cross at {s} = {expr_text(c.solution)}", f"   = {shown}"]
        if len(c.crossings) > 1:
            lines.append("other crossings: " + ", ".join(expr_text(r) for r in c.crossings[:-1]))
        lines.append(f"from {s} = {c.threshold} on, {c.cheaper}'s is the smaller")
    for n, a, b in c.checks:
        lines.append(f"  at {s} = {n}: {c.first_label} {value_text(a)}, {c.second_label} {value_text(b)}")
    lines += [f"note: {n}" for n in c.notes]
    return "\n".join(lines)


def compare_text(m, c) -> str:
    q = c.quantity
    lines = [model_header(m), "", _title(q), f"  derived  {expr_text(q.expr)}",
             f"  formula  {expr_text(c.formula)}", ""]
    if c.equal:
        lines.append("equal" + ("" if c.numeric else " (identically, for every size)"))
        if q.value is not None:
            lines.append(f"  = {value_text(q.value)}")
        return "\n".join(lines)
    lines += ["not equal", f"  formula - derived = {expr_text(c.difference)}"]
    if not c.numeric:
        lines.append(f"                    = {value_text(c.difference_value)}")
        if c.equal_at_configuration:
            lines.append("  (equal at this configuration, not for every size)")
    lines.append(f"  relative error (formula - derived) / derived: {percent(c.relative_error)}")
    return "\n".join(lines)


def check_text(rows) -> str:
    body = []
    for c in rows:
        f = c.formula
        picked = ",".join(x for x in (f.part, *f.roles) if x)
        where = f.quantity + (f"[{picked}]" if picked else "") + (" per block" if f.per_block else "")
        where += f" ~ {f.regime}→∞" if f.regime else ""
        verdict = c.verdict
        mark = {True: "✓", False: "✗ unexpected", None: ""}[c.as_expected]
        names = ", ".join(f"{k} = {v}" for k, v in f.names.items())
        body.append([f.expression + (f"  ({names})" if names else ""), where, f.source, f.convention, verdict, mark])
    out = table(["formula", "quantity", "source", "convention", "verdict", "as documented"],
                body, "llllll")
    checked = [c for c in rows if c.comparison is not None]
    summary = (f"{len(rows)} formulas: {sum(c.comparison.equal for c in checked)} equal, "
               f"{sum(not c.comparison.equal for c in checked)} differ, "
               f"{len(rows) - len(checked)} not checked; "
               f"{sum(bool(c.as_expected) for c in checked)} of {len(checked)} as their sources "
               "document")
    return out + "\n\n" + summary

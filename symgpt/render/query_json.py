"""The JSON contract of the queries: expressions in SymPy syntax over the canonical names,
exact values as integers (a fraction as a float plus its exact ``p/q`` string)."""

from __future__ import annotations

from .jsonout import expr_json, json_value


def number_json(key: str, v) -> dict:
    """``{key: 1.5, key + "_exact": "3/2"}``; an integer or None has no ``_exact``."""
    out = {key: json_value(v)}
    if v is not None and not v.is_Integer:
        out[f"{key}_exact"] = str(v)
    return out


def quantity_head(q) -> dict:
    out = {"quantity": q.name, "unit": q.unit}
    if q.convention:
        out["convention"] = q.convention
    return out


def regime_json(regime, expr) -> dict:
    return {"growing": regime.as_json(), "fixed": [s.name for s in regime.fixed(expr)],
            "description": regime.describe(expr)}


def rule_json(r, rewritten=None) -> dict:
    q = r.quantity
    out = {**quantity_head(q), "regime": regime_json(r.regime, q.expr),
           "rule": expr_json(r.rule), "order": None if r.order is None else str(r.order),
           **number_json("rule_value", r.rule_value),
           "exact": expr_json(r.exact), **number_json("value", r.exact_value),
           "dropped": expr_json(r.correction),
           **number_json("relative_error", r.relative_error)}
    if rewritten:
        out["rewritten"] = {name: {"definition": expr_json(d), "rule": expr_json(form)}
                            for name, (d, form) in rewritten.items()}
    if r.notes:
        out["notes"] = list(r.notes)
    return out


def dominance_json(dm) -> dict:
    q = dm.quantity
    return {**quantity_head(q), "regime": regime_json(dm.regime, q.expr),
            "terms": [{"order": str(t.order), "expression": expr_json(t.expr),
                       **number_json("value", t.value)} for t in dm.terms],
            "dominant": expr_json(dm.dominant),
            "parts": [{"path": p.path, "expression": expr_json(p.expr),
                       "order": None if p.order is None else str(p.order),
                       "share_limit": expr_json(p.limit), **number_json("value", p.value),
                       **number_json("share", p.share)} for p in dm.parts]}


def ranking_json(q, parts, terms) -> dict:
    return {**quantity_head(q), "expression": expr_json(q.expr), **number_json("value", q.value),
            "terms": [{"expression": expr_json(r.expr), **number_json("value", r.value),
                       **number_json("share", r.share)} for r in terms],
            "dominant": expr_json(terms[0].expr) if terms else "0",
            "parts": [{"path": r.name, "expression": expr_json(r.expr),
                       **number_json("value", r.value), **number_json("share", r.share)}
                      for r in parts]}


def crossover_json(c, whole=None, moved=None, value_of=None) -> dict:
    out = {**quantity_head(c.quantity), "symbol": c.symbol.name,
           "fast": expr_json(c.fast), "fast_label": c.fast_label,
           "slow": expr_json(c.slow), "slow_label": c.slow_label,
           "solution": None if c.solution is None else expr_json(c.solution),
           "solutions": [expr_json(s) for s in c.solutions],
           **number_json("value", c.value)}
    if whole is not None:
        out["whole"] = {"quantity": whole.quantity.name, "slow": expr_json(whole.slow),
                        "solution": None if whole.solution is None else expr_json(whole.solution),
                        **number_json("value", whole.value),
                        "shift": None if moved is None else expr_json(moved),
                        **number_json("shift_value", None if moved is None else value_of(moved))}
    return out


def models_crossover_json(c) -> dict:
    """The crossover of one quantity of two models (``query.crossmodels``)."""
    sol = c.solution
    return {**quantity_head(c.first), "symbol": c.symbol.name, "first": c.first_label, "second": c.second_label,
            "first_expression": expr_json(c.a), "second_expression": expr_json(c.b),
            "crossings": [expr_json(r) for r in c.crossings],
            "solution": None if sol is None else expr_json(sol),
            **number_json("value", None if sol is None or not sol.is_Rational else sol),
            **({"value_approx": float(sol)} if sol is not None and not sol.is_Rational else {}),
            "cheaper": c.cheaper, "threshold": c.threshold,
            "checks": [{"at": n, "first": expr_json(a), "second": expr_json(b)} for n, a, b in c.checks],
            **({"notes": list(c.notes)} if c.notes else {})}


def compare_json(c) -> dict:
    q = c.quantity
    return {**quantity_head(q), "derived": expr_json(q.expr), **number_json("value", q.value),
            "formula": c.text or expr_json(c.formula), "parsed": expr_json(c.formula),
            "equal": c.equal, "difference": expr_json(c.difference),
            **number_json("difference_value", c.difference_value),
            "equal_at_configuration": c.equal_at_configuration,
            **number_json("relative_error", c.relative_error)}


def check_json(rows) -> dict:
    out = []
    for c in rows:
        f = c.formula
        item = {"name": f.name, "formula": f.expression, "quantity": f.quantity,
                "model": f.model, "settings": dict(f.settings), "options": dict(f.options),
                "part": f.part, "roles": list(f.roles), "per_block": f.per_block, "regime": f.regime,
                "names": dict(f.names), "source": f.source, "convention": f.convention,
                "verdict": c.verdict, "expected": f.expect, "why": f.why,
                "as_expected": c.as_expected}
        if c.comparison is not None:
            item["equal"] = c.comparison.equal
            item["difference"] = expr_json(c.comparison.difference)
        out.append(item)
    return {"formulas": out}

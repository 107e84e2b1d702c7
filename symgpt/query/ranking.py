"""Ranking at a configuration: which parts (or terms) of a quantity are largest at given sizes.

>>> import symgpt
>>> from symgpt.query import ranking
>>> ranking(symgpt.load("gpt2-small").params)[0].path       # the single largest entry
'embedding/token'
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from ..derive.quantity import Quantity, evaluate


@dataclass(frozen=True)
class Ranked:
    """One part (a breakdown path) or term (an expression) with its exact value and share."""

    name: str
    expr: sympy.Expr
    value: sympy.Expr
    share: sympy.Expr | None   # value / total (exact); None when the total is 0

    @property
    def path(self) -> str:
        return self.name

    def __repr__(self) -> str:
        from .crossover import shown_value

        share = "" if self.share is None else f" ({float(self.share):.2%})"
        return f"<{self.name}: {sympy.sstr(self.expr)}{shown_value(self.value)}{share}>"


def _need_bound(q: Quantity) -> sympy.Expr:
    total = q.value
    if total is None:
        free = sorted(str(s) for s in q.expr.free_symbols if s not in q.bindings)
        raise SymgptError(f"ranking {q.name} needs every size bound; unbound: {', '.join(free)} "
                          "(bind them with --set NAME=VALUE or model.with_(...))")
    return total


def _ranked(rows: list[tuple[str, sympy.Expr]], q: Quantity) -> list[Ranked]:
    total = _need_bound(q)
    out = []
    for name, e in rows:
        v = evaluate(e, q.bindings)
        out.append(Ranked(name, e, v, v / total if total else None))
    # largest first; ties keep breakdown order (sorted is stable)
    return sorted(out, key=lambda r: -r.value)


def ranking(q: Quantity, depth: int | None = None) -> list[Ranked]:
    """The breakdown entries of *q* (summed to *depth* path components if given), largest
    first, at the configuration."""
    return _ranked(q.grouped(depth) if depth else list(q.breakdown), q)


def rank_terms(q: Quantity) -> list[Ranked]:
    """The terms of *q*'s expanded expression (``12*L*d**2``, ``V*d``, ...), largest first."""
    terms = sympy.Add.make_args(q.expr) if q.expr != 0 else ()
    return _ranked([(sympy.sstr(t), t) for t in terms], q)

"""Dominance: a quantity's terms ordered by growth, and the limit of each part's share.

>>> import symgpt
>>> from symgpt.query import dominance
>>> dm = dominance(symgpt.load("gpt2").params, "d")
>>> dm.dominant
12*L*d**2
>>> dm.share("embedding")          # the embeddings' share of the parameters as d -> oo
0
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import sympy

from ..core.errors import SymgptError
from ..derive.quantity import Quantity, evaluate, is_prefix
from .regime import Regime, far_side, order, regime_of


@dataclass(frozen=True)
class Term:
    """Terms of one growth order, summed (``expr`` ~ λ^order)."""

    order: sympy.Rational
    expr: sympy.Expr
    value: sympy.Expr | None  # at the configuration


@dataclass(frozen=True)
class PartShare:
    """A breakdown entry (or group of entries): its growth order, the limit of its share of
    the total in the regime, and its share at the configuration."""

    path: str
    expr: sympy.Expr
    order: sympy.Rational | None
    limit: sympy.Expr            # lim part / total: 0, a constant, or an expression
    value: sympy.Expr | None
    share: sympy.Expr | None     # part / total at the configuration (exact)


@dataclass(frozen=True)
class Dominance:
    quantity: Quantity
    regime: Regime
    terms: tuple[Term, ...]      # fastest-growing first
    entries: tuple = ()          # (path, expr): the breakdown, or its entries summed to a depth

    @cached_property
    def parts(self) -> tuple[PartShare, ...]:
        """Each entry's growth order, share limit and share (made on first use: ``dominant``
        and ``share`` need none of them, or a few)."""
        q, reg = self.quantity, self.regime
        b, total = q.bindings, q.value
        parts = []
        for path, e in self.entries:
            o, _ = order(e, reg)
            v = evaluate(e, b)
            share = v / total if (v is not None and total) else None
            parts.append(PartShare(path, e, o, share_limit(e, q.expr, reg), v, share))
        return tuple(parts)

    @property
    def dominant(self) -> sympy.Expr:
        """The fastest-growing terms (the leading-order form when nothing cancels)."""
        return self.terms[0].expr if self.terms else sympy.Integer(0)

    def share(self, prefix: str) -> sympy.Expr:
        """The limit of the share of the entries under *prefix* (summed)."""
        entries = [e for p, e in self.entries if is_prefix(prefix, p)]
        if not entries:
            raise SymgptError(f"{self.quantity.name} has no part {prefix[:60]!r}")
        return sympy.simplify(sympy.Add(*[share_limit(e, self.quantity.expr, self.regime) for e in entries]))

    def dominant_parts(self) -> list[PartShare]:
        """The parts whose share does not vanish in the limit."""
        return [p for p in self.parts if p.limit != 0]

    def __repr__(self) -> str:
        """The fastest-growing terms and their value (the graded terms and the parts' shares are
        attributes: ``terms``, ``parts``)."""
        from .crossover import shown_value

        head = f"dominance in {self.quantity.name} as {self.regime.describe()}"
        if not self.terms:
            return f"<{head}: 0>"
        lead = self.terms[0]
        return f"<{head}: {sympy.sstr(lead.expr)} (order {lead.order}){shown_value(lead.value)}>"


@lru_cache(maxsize=4096)
def share_limit(part: sympy.Expr, total: sympy.Expr, regime: Regime) -> sympy.Expr:
    """lim part / total in *regime*: 0 when the part grows slower, else the ratio of the
    leading forms (``sympy.oo`` if the part outgrows the total, which needs cancellation)."""
    op, lp = order(part, regime)
    ot, lt = order(total, regime)
    if op is None:
        return sympy.Integer(0)
    if ot is None or op > ot:
        return sympy.oo * sympy.sign(lp)
    if op < ot:
        return sympy.Integer(0)
    return sympy.factor(sympy.cancel(lp / lt))


def dominance(q: Quantity, regime, depth: int | None = None) -> Dominance:
    """*q*'s terms by growth order in *regime* (a Regime, ``"T"``, ``["d", "V"]``, ...), and
    each breakdown entry's share limit (entries summed to *depth* path components if given)."""
    if not isinstance(q, Quantity):
        raise SymgptError(f"dominance is taken of a Quantity, got {type(q).__name__}")
    from .regime import graded_terms

    reg = regime_of(regime)
    q = far_side(q, reg)
    terms = tuple(Term(o, e, evaluate(e, q.bindings)) for o, e in graded_terms(q.expr, reg))
    return Dominance(q, reg, terms, tuple(q.grouped(depth) if depth else q.breakdown))

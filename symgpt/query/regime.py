"""Asymptotic regimes and the growth order of expressions under them.

A *regime* says which symbols grow and how fast: each growing symbol ``s`` scales as
``s · λ^rate`` while λ → ∞; every other symbol stays fixed. ``d → ∞`` alone is the regime
``{d: 1}``; ``d`` and ``V`` growing together (``V ∝ d``) is ``{d: 1, V: 1}``; ``V ∝ d²`` is
``{d: 1, V: 2}``. The *order* of an expression is the exponent of λ in its leading
behaviour; its *leading form* is that behaviour with λ set back to 1 (an expression over the
original symbols, homogeneous of that order).

Everything here is exact: orders are Rationals, leading forms are SymPy expressions. Rational
functions are handled exactly (numerator and denominator as polynomials in λ); ``ceiling`` and
``floor`` of a growing argument are replaced by the argument (equal to leading order;
``step_notes`` says where that happened).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce, lru_cache
from typing import Iterable

import sympy

from ..core.errors import SymgptError, short
from ..core.exprparse import parse_expression
from ..core.symbols import CANONICAL, symbol

_LAMBDA = sympy.Symbol("lambda_growth", positive=True)  # internal: never reaches the user
MAX_RATE = 16     # rates p/q with 0 < p/q <= 16 and q <= 16
MAX_STEPS = 256   # the largest rate, in units of the common denominator


@dataclass(frozen=True)
class Regime:
    """Growing symbols with their rates (positive Rationals), in the order given."""

    rates: tuple[tuple[sympy.Symbol, sympy.Rational], ...]

    def __post_init__(self) -> None:
        if not self.rates:
            raise SymgptError("a regime needs at least one growing symbol (--as SYMBOL)")
        names = [s.name for s, _ in self.rates]
        if len(set(names)) != len(names):
            raise SymgptError(f"a symbol is named twice in the regime: {', '.join(names)}")
        for s, r in self.rates:
            if not (isinstance(r, sympy.Rational) and 0 < r <= MAX_RATE and r.q <= MAX_RATE):
                raise SymgptError(f"the rate of {s} must be a positive number up to {MAX_RATE} "
                                  f"with a denominator up to {MAX_RATE}, got {short(r)}")
        q = reduce(sympy.ilcm, (int(r.q) for _, r in self.rates), 1)
        if max(r for _, r in self.rates) * q > MAX_STEPS:
            raise SymgptError("the rates of this regime are too fine-grained (use simpler "
                              "fractions, such as 1/2 or 3/2)")

    @property
    def symbols(self) -> tuple[sympy.Symbol, ...]:
        return tuple(s for s, _ in self.rates)

    def fixed(self, expr: sympy.Expr) -> list[sympy.Symbol]:
        """The symbols of *expr* held fixed in this regime, in canonical order."""
        free = expr.free_symbols
        return [s for s in CANONICAL.values() if s in free and s not in self.symbols]

    def describe(self, expr: sympy.Expr | None = None) -> str:
        """``d → ∞`` / ``d, V → ∞ with V ∝ d`` / ``d, V → ∞ with V ∝ d²``, plus what is fixed."""
        grow = ", ".join(s.name for s in self.symbols)
        (s0, r0), rest = self.rates[0], self.rates[1:]
        ties = []
        for s, r in rest:
            p = r / r0
            ties.append(f"{s.name} ∝ {s0.name}" + ("" if p == 1 else _power_text(p)))
        text = f"{grow} → ∞" + (f" with {', '.join(ties)}" if ties else "")
        if expr is not None:
            fixed = self.fixed(expr)
            text += f"; fixed: {', '.join(s.name for s in fixed)}" if fixed else ""
        return text

    def as_json(self) -> dict:
        return {s.name: str(r) for s, r in self.rates}


def _power_text(p: sympy.Rational) -> str:
    sup = str.maketrans("0123456789-/", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻ᐟ")
    return str(p).translate(sup)


def parse_regime(specs: Iterable[str] | str) -> Regime:
    """A regime from ``--as`` texts: ``"d"``, ``"d,L"``, ``"V:2"`` (rate 2), ``"h:1/2"``.

    Each item is ``SYMBOL`` or ``SYMBOL:RATE``; items may be comma-separated; the rate is a
    positive number (default 1) read by the safe parser, never evaluated as code.
    """
    if isinstance(specs, str):
        specs = [specs]
    rates = []
    for spec in specs:
        if not isinstance(spec, str):
            raise SymgptError(f"a regime item must be text, got {type(spec).__name__}")
        for item in spec.split(","):
            item = item.strip(" \t")
            if not item:
                raise SymgptError(f"empty symbol in regime {short(spec)}")
            name, _, rate_text = item.partition(":")
            s = symbol(name.strip(" \t"))
            rate = sympy.Integer(1)
            if rate_text:
                rate = parse_expression(rate_text, names={})
                if not (rate.is_Rational and 0 < rate <= MAX_RATE and rate.q <= MAX_RATE):
                    raise SymgptError(f"the rate in {short(item)} must be a positive number up "
                                      f"to {MAX_RATE}, with a denominator up to {MAX_RATE}")
            rates.append((s, rate))
    return Regime(tuple(rates))


def regime_of(value) -> Regime:
    """A Regime from a Regime, a Symbol, a name, or a list of names / ``NAME:RATE`` items."""
    if isinstance(value, Regime):
        return value
    if isinstance(value, sympy.Symbol):
        return Regime(((symbol(value.name), sympy.Integer(1)),))
    if isinstance(value, dict):  # {"d": 1, "V": 2}: rates as numbers or text, parsed safely
        return parse_regime([f"{k.name if isinstance(k, sympy.Symbol) else k}:{v}"
                             for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return parse_regime([v.name if isinstance(v, sympy.Symbol) else v for v in value])
    return parse_regime(value)


# --- growth -------------------------------------------------------------------------------

def _replace_steps(expr: sympy.Expr, regime: Regime) -> sympy.Expr:
    """ceiling(a), floor(a) -> a where *a* grows (equal to leading order)."""
    grow = set(regime.symbols)
    steps = [f for f in expr.atoms(sympy.ceiling, sympy.floor) if f.args[0].free_symbols & grow]
    return expr.xreplace({f: f.args[0] for f in steps}) if steps else expr


def step_notes(expr: sympy.Expr, regime: Regime) -> list[str]:
    """Notes for the ceiling/floor terms that leading order replaces by their argument."""
    grow = set(regime.symbols)
    return [f"{f} is taken as {f.args[0]} to leading order"
            for f in sorted(expr.atoms(sympy.ceiling, sympy.floor), key=str)
            if f.args[0].free_symbols & grow]


def _scaled(expr: sympy.Expr, regime: Regime) -> tuple[sympy.Expr, int]:
    """*expr* with each growing symbol s -> s·y^(rate·q); q makes every exponent an integer."""
    q = reduce(sympy.ilcm, (int(r.q) for _, r in regime.rates), 1)
    sub = {s: s * _LAMBDA ** int(r * q) for s, r in regime.rates}
    return _replace_steps(expr, regime).xreplace(sub), q


def _poly_lead(part: sympy.Expr, what: sympy.Expr) -> tuple[int, sympy.Expr]:
    try:
        poly = sympy.Poly(sympy.expand(part), _LAMBDA)
    except sympy.PolynomialError:
        raise SymgptError(f"cannot order {what} by growth: it is not a rational function "
                          "of the growing symbols") from None
    if poly.is_zero:
        return 0, sympy.Integer(0)
    return poly.degree(), poly.LC()


def _monomial_order(expr: sympy.Expr, regime: Regime) -> tuple | None:
    """``order(expr, regime)`` of a sum of distinct monomials (a rational times integer powers of
    symbols -- an expanded count): each term grows as the sum of its growing symbols' powers times
    their rates, the order is the largest, the leading form the sum of the terms of that order (a
    sum of distinct monomials never cancels). The same answer as the general way (numerator and
    denominator as polynomials in λ), without building them; None for anything else."""
    rates = dict(regime.rates)
    best, top = None, []
    for term in sympy.Add.make_args(expr):
        coeff, rest = term.as_coeff_Mul()
        if not coeff.is_Rational:
            return None
        grows = sympy.Integer(0)
        for f in (() if rest == 1 else sympy.Mul.make_args(rest)):
            base, e = f.as_base_exp()
            if not (base.is_Symbol and e.is_Integer):
                return None
            if base in rates:
                grows += rates[base] * e
        if best is None or grows > best:
            best, top = grows, [term]
        elif grows == best:
            top.append(term)
    return best, sympy.Add(*top)


@lru_cache(maxsize=8192)  # the same terms are ordered many times in a report
def order(expr: sympy.Expr, regime: Regime) -> tuple[sympy.Rational | None, sympy.Expr]:
    """``(order, leading form)`` of *expr*: expr ~ leading form · λ^order.

    A zero expression has order None and leading form 0.
    """
    if isinstance(expr, int) and not isinstance(expr, bool):
        expr = sympy.Integer(expr)
    if not isinstance(expr, sympy.Expr):
        raise SymgptError(f"expected a SymPy expression, got {type(expr).__name__}")
    if expr == 0:
        return None, sympy.Integer(0)
    quick = _monomial_order(expr, regime)
    return quick if quick is not None else _general_order(expr, regime)


def _general_order(expr: sympy.Expr, regime: Regime) -> tuple[sympy.Rational | None, sympy.Expr]:
    """``order`` of any rational function of the growing symbols: numerator and denominator of
    *expr* scaled by λ, as polynomials in λ."""
    scaled, q = _scaled(expr, regime)
    num, den = sympy.fraction(sympy.together(scaled))
    dn, cn = _poly_lead(num, expr)
    dd, cd = _poly_lead(den, expr)
    if cn == 0:
        return None, sympy.Integer(0)
    return sympy.Rational(dn - dd, q), sympy.expand(cn / cd)


def graded_terms(expr: sympy.Expr, regime: Regime) -> list[tuple[sympy.Rational, sympy.Expr]]:
    """The terms of expanded *expr* summed by order, fastest-growing first: [(order, sum)].

    Terms that do not involve a growing symbol have order 0. Orders whose terms cancel are
    left out.
    """
    groups: dict[sympy.Rational, sympy.Expr] = {}
    for term in sympy.Add.make_args(sympy.expand(expr)):
        o, _ = order(term, regime)
        if o is None:
            continue
        groups[o] = groups.get(o, sympy.Integer(0)) + term
    out = [(o, sympy.expand(e)) for o, e in groups.items()]
    return sorted([(o, e) for o, e in out if e != 0], key=lambda oe: -oe[0])


def leading(expr: sympy.Expr, regime: Regime) -> sympy.Expr:
    """The leading-order form of *expr* (0 for 0)."""
    return order(expr, regime)[1]


def far_side(q, regime: Regime):
    """*q* with every ``Max(a, b)`` (a roofline's max(FLOPs / peak, bytes / bandwidth)) replaced
    by the side that is larger far out in *regime*: the faster-growing one, or, at equal order,
    the one with the larger leading coefficient at *q*'s bindings. Other quantities come back
    unchanged. Leading forms, dominance and rules of a time are those of that far regime."""
    import dataclasses

    from ..derive.quantity import evaluate

    maxes = {m for _, e in q.breakdown for m in e.atoms(sympy.Max)}
    if not maxes:
        return q
    repl = {}
    for m in maxes:
        ranked = []
        for a in m.args:
            o, lead = order(a, regime)
            ranked.append((o if o is not None else -sympy.oo, evaluate(lead, q.bindings), a))
        top = max(r[0] for r in ranked)
        best = [r for r in ranked if r[0] == top]
        if len(best) > 1:
            if any(r[1] is None for r in best):
                raise SymgptError(f"which side of {sympy.sstr(m)[:120]} grows faster depends on the sizes "
                                  "and the device: bind them (--set, --option hardware=NAME)")
            best = [max(best, key=lambda r: r[1])]
        repl[m] = best[0][2]
    kept = tuple((p, sympy.expand(e.xreplace(repl))) for p, e in q.breakdown)
    note = (f"far out in the regime ({regime.describe()}) each max(FLOPs / peak, bytes / bandwidth) is "
            "its larger side there; values at the configuration are those of that side")
    return dataclasses.replace(q, breakdown=kept, notes=q.notes + (note,))

"""The crossover of two models: the size at which one model's quantity drops below the other's.

``crossover`` (``query.crossover``) sets parts of one quantity against each other. Two models
need their own: each model's quantity with its own sizes bound (d, L, h of one model are not the
other's), every size but the growing symbol bound, and their difference solved exactly:

* the difference is piecewise polynomial in the symbol -- a roofline time is a sum of
  ``Max(FLOPs / F_peak, bytes / BW_mem)`` per op and a sliding window reads ``Min(T, W)`` keys;
  the points where an argument of a Max or Min overtakes another split the half-line into pieces
  (found as exact real roots of polynomials with rational coefficients);
* on each piece the difference is one polynomial, whose real roots in the piece are isolated
  exactly (``sympy.Poly.real_roots``: rationals or ``CRootOf``);
* the crossover is the largest root: beyond it the sign of the difference no longer changes, and
  the first whole size past it (``first``) is where the cheaper model stays cheaper, checked by
  evaluating both quantities exactly at ``first - 1`` and ``first``.

A ceiling (a chunked scan's ``ceiling(T/Q)`` chunks: the prefill of Mamba-2 or Gated DeltaNet) is
not piecewise polynomial in this sense and is refused; a decode step has none.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from ..core.symbols import symbol as canonical
from ..derive.quantity import Quantity


@dataclass(frozen=True)
class ModelsCrossover:
    first: Quantity            # the first model's quantity (its sizes bound, the symbol free)
    second: Quantity
    first_label: str
    second_label: str
    symbol: sympy.Symbol
    a: sympy.Expr              # the first model's quantity in the symbol alone
    b: sympy.Expr
    crossings: tuple           # every point > 0 where a - b changes sign (or touches 0), ascending
    solution: sympy.Expr | None  # the largest crossing (None: none at any positive size)
    cheaper: str | None        # the label of the model whose quantity is smaller beyond it (None: equal)
    threshold: int | None      # the first whole size >= 1 from which the cheaper one stays smaller
    checks: tuple              # ((size, a, b), ...) at threshold - 1 and threshold, exact
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        """Where the two models cross and which is cheaper beyond (the crossings, checks and notes
        are attributes)."""
        from .crossover import shown_value

        head = f"crossover of {self.first_label} and {self.second_label} as {self.symbol} grows"
        if self.solution is None:
            return f"<{head}: none at a positive {self.symbol}>"
        beyond = f", {self.cheaper} cheaper from {self.symbol} = {self.threshold:,}" if self.cheaper else ""
        return f"<{head}: {self.symbol} = {sympy.sstr(self.solution)}{shown_value(self.solution)}{beyond}>"


def _in_symbol(q: Quantity, s: sympy.Symbol) -> sympy.Expr:
    """*q*'s expression with every binding but *s* substituted; refused if another symbol remains."""
    e = q.expr.subs({k: v for k, v in q.bindings.items() if k != s})
    free = sorted(x.name for x in e.free_symbols if x != s)
    if free:
        raise SymgptError(f"{q.name}: bind every size but {s} for a crossover of two models (unbound: "
                          f"{', '.join(free)}); use --set NAME=VALUE, and --option hardware=NAME for a time")
    if e.has(sympy.ceiling, sympy.floor):
        raise SymgptError(f"{q.name} counts whole chunks (ceiling of {s} over a chunk length): a crossover "
                          "of two models is solved for piecewise-polynomial quantities only (a decode step is one)")
    return e


def _poly_roots(e: sympy.Expr, s: sympy.Symbol) -> list:
    """The distinct real roots of the polynomial *e* in *s* (rational coefficients), exact."""
    num, _ = sympy.fraction(sympy.together(e))
    poly = sympy.Poly(sympy.expand(num), s)
    if poly.is_zero:
        return []
    if not all(c.is_Rational for c in poly.all_coeffs()):
        raise SymgptError(f"not a polynomial with rational coefficients in {s}: {sympy.sstr(e)}")
    return sorted(set(poly.real_roots()), key=lambda r: sympy.Float(r, 30))


def _breakpoints(e: sympy.Expr, s: sympy.Symbol) -> list:
    """Where an argument of a Max or Min in *e* overtakes another (> 0), ascending."""
    out = set()
    for m in e.atoms(sympy.Max, sympy.Min):
        args = [a for a in m.args]
        for i, x in enumerate(args):
            for y in args[i + 1:]:
                if (x - y).has(s):
                    out |= {r for r in _poly_roots(x - y, s) if r > 0}
    return sorted(out, key=lambda r: sympy.Float(r, 30))


def _piece(e: sympy.Expr, s: sympy.Symbol, at) -> sympy.Expr:
    """*e* with each Max / Min replaced by its argument that wins at *s* = *at* (inside a piece)."""
    def pick(m):
        inner = m.func(*[_piece(a, s, at) for a in m.args]) if m.args else m
        vals = [(a.subs(s, at), a) for a in inner.args]
        best = (max if isinstance(m, sympy.Max) else min)(vals, key=lambda va: va[0])
        return best[1]

    while True:
        found = [m for m in e.atoms(sympy.Max, sympy.Min) if m.has(s)]
        if not found:
            return sympy.expand(e)
        m = min(found, key=lambda x: sympy.count_ops(x))
        e = e.xreplace({m: pick(m)})


def _sample(lo, hi):
    """An exact point strictly between *lo* and *hi* (``hi`` None: past *lo*)."""
    if hi is None:
        return sympy.floor(lo) + 1 if lo != 0 else sympy.Integer(1)
    return (lo + hi) / 2


def crossover_models(qa: Quantity, qb: Quantity, symbol, label_a: str, label_b: str) -> ModelsCrossover:
    """Where, as *symbol* grows, model A's quantity *qa* and model B's *qb* cross (exact)."""
    s = canonical(symbol.name if isinstance(symbol, sympy.Symbol) else str(symbol).strip())
    if qa.name != qb.name:
        raise SymgptError(f"a crossover of two models compares one quantity, got {qa.name} and {qb.name}")
    a, b = _in_symbol(qa, s), _in_symbol(qb, s)
    diff = a - b
    if not diff.has(s):
        raise SymgptError(f"{qa.name} of {label_a} and of {label_b} do not cross as {s} grows "
                          "(their difference does not depend on it)")
    cuts = _breakpoints(diff, s)
    edges = [sympy.Integer(0), *cuts]
    crossings = set()
    for i, lo in enumerate(edges):
        hi = edges[i + 1] if i + 1 < len(edges) else None
        piece = _piece(diff, s, _sample(lo, hi))
        for r in _poly_roots(piece, s):
            if r > lo and (hi is None or r < hi):
                crossings.add(r)
    crossings |= {c for c in cuts if sympy.simplify(diff.subs(s, c)) == 0}
    crossings = sorted(crossings, key=lambda r: sympy.Float(r, 30))
    # the sign beyond every crossing and breakpoint: at a whole size past them all
    far = sympy.floor(max([sympy.Integer(1), *crossings, *cuts], key=lambda r: sympy.Float(r, 30))) + 1
    sign = sympy.sign(diff.subs(s, far))
    cheaper = None if sign == 0 else (label_b if sign > 0 else label_a)
    solution = crossings[-1] if crossings else None
    notes = []
    threshold, checks = None, ()
    if cheaper is not None:
        threshold = int(sympy.floor(solution)) + 1 if solution is not None and solution >= 1 else 1
        sizes = [n for n in (threshold - 1, threshold) if n >= 1]
        checks = tuple((n, a.subs(s, n), b.subs(s, n)) for n in sizes)
        if threshold == 1:
            notes.append(f"{cheaper}'s {qa.name} is the smaller at every {s} >= 1")
    return ModelsCrossover(qa, qb, label_a, label_b, s, a, b, tuple(crossings), solution, cheaper, threshold,
                           checks, tuple(notes))

"""Two of SymPy's constructions, the very same trees built without most of their work where the
outcome is known: ``sympy.expand`` of a sum of monomials (or of monomials times one such sum),
and ``sympy.Max(a, b)`` of a roofline whose arguments no comparison can order.

**expand.** ``sympy.expand(e)`` applies each of its hints (mul, multinomial, power_base,
power_exp, ...) to every node and returns *e* itself when none changes anything. A *monomial*,
a rational times integer powers of symbols, is left alone by every hint, and so is a sum of
them: ``expanded`` returns such an *e* as it is. A product of monomials and one such sum is
distributed exactly as ``Mul._eval_expand_mul`` distributes it (each term times the product of
the other factors, then one ``Add``), after which every hint is again a no-op. Anything else
(a Min, a power of a sum, a float, ...) goes to ``sympy.expand``.

**Max.** An evaluated ``Max(a, b)`` asks whether a >= b or a <= b (and again of ``factor_terms(a - b)``
against 0) before it keeps both arguments; over symbolic FLOPs and bytes those questions are most
of a step time's cost, and their usual answer is "cannot say". When a - b is seen to take both
signs at points where every free symbol is a positive integer (all the canonical sizes, ``F_peak``
and ``BW_mem`` are), no sound comparison can decide it, so the evaluated Max keeps both arguments
as they are: exactly what ``Max(a, b, evaluate=False)`` builds (the same arguments in the same
canonical order), provided neither argument is itself a Min or Max (which the evaluated Max would
flatten or collapse) and both are finite, real and built of numbers, sizes, sums, products,
integer powers, Min and Max. Otherwise the evaluated Max is built, as before.
"""

from __future__ import annotations

from fractions import Fraction

import sympy

#: the assumptions of a positive integer symbol: a free symbol whose own assumptions all agree
#: with these takes every positive integer value
_POSITIVE_INTEGER = sympy.Dummy(positive=True, integer=True).assumptions0

#: the large value at the far points of the search for both signs (a roofline's crossings sit at
#: a few hundred FLOPs per byte; 2**20 per size is past them)
_FAR = 2**20


class _Unknown(Exception):
    """An expression this evaluator does not take (a Float, oo, a function...)."""


def is_monomial(e) -> bool:
    """A rational, or a product of a rational and integer powers of symbols."""
    if e.is_Rational or e.is_Symbol:
        return True
    if e.is_Pow:
        return e.base.is_Symbol and e.exp.is_Integer
    if e.is_Mul:
        return all(f.is_Rational or f.is_Symbol or (f.is_Pow and f.base.is_Symbol and f.exp.is_Integer)
                   for f in e.args)
    return False


def is_monomial_sum(e) -> bool:
    """A monomial, or a sum of them: a fixed point of ``sympy.expand``."""
    return all(is_monomial(t) for t in e.args) if e.is_Add else is_monomial(e)


def expanded(e) -> sympy.Expr:
    """``sympy.expand(e)``, structurally identical (see the module docstring)."""
    e = sympy.sympify(e)
    if is_monomial_sum(e):
        return e
    if e.is_Mul:
        sums = [f for f in e.args if f.is_Add]
        if len(sums) == 1 and is_monomial_sum(sums[0]) and all(f.is_Add or is_monomial(f) for f in e.args):
            plain = sympy.Mul(*[f for f in e.args if not f.is_Add])
            out = sympy.Add(*[sympy.Mul(plain, t) for t in sums[0].args])
            if is_monomial_sum(out):
                return out
    return sympy.expand(e)


def roofline_max(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """``sympy.Max(a, b)``, structurally identical (see the module docstring)."""
    if _both_signs(a, b):
        return sympy.Max(a, b, evaluate=False)
    return sympy.Max(a, b)


def _both_signs(a, b) -> bool:
    if isinstance(a, (sympy.Min, sympy.Max)) or isinstance(b, (sympy.Min, sympy.Max)):
        return False
    symbols = sorted(a.free_symbols | b.free_symbols, key=lambda s: s.name)
    if not symbols or not all(_POSITIVE_INTEGER.get(k) == v for s in symbols for k, v in s.assumptions0.items()):
        return False
    signs = set()
    try:
        for point in _points(symbols):
            diff = _value(a, point) - _value(b, point)
            if diff:
                signs.add(diff > 0)
                if len(signs) == 2:
                    return True
    except (_Unknown, ZeroDivisionError):
        return False
    return False


def _points(symbols):
    """All sizes 1, all far, then each size far with the others 1 and 1 with the others far."""
    yield dict.fromkeys(symbols, 1)
    yield dict.fromkeys(symbols, _FAR)
    for s in symbols:
        yield {**dict.fromkeys(symbols, 1), s: _FAR}
        yield {**dict.fromkeys(symbols, _FAR), s: 1}


def _value(e, point):
    """The exact value of *e* at *point* (symbol -> positive integer), or _Unknown."""
    if e.is_Symbol:
        return point[e]
    if e.is_Integer:
        return e.p
    if e.is_Rational:
        return Fraction(e.p, e.q)
    if e.is_Add:
        return sum(_value(x, point) for x in e.args)
    if e.is_Mul:
        v = 1
        for x in e.args:
            v *= _value(x, point)
        return v
    if e.is_Pow and e.exp.is_Integer:
        return Fraction(_value(e.base, point)) ** e.exp.p
    if isinstance(e, sympy.Max):
        return max(_value(x, point) for x in e.args)
    if isinstance(e, sympy.Min):
        return min(_value(x, point) for x in e.args)
    raise _Unknown(e)

"""Two of SymPy's constructions, the very same trees built without most of their work where the
outcome is known: ``sympy.expand`` of what it would leave alone (or of such factors times one
such sum), and ``sympy.Max(a, b)`` of a roofline whose arguments no comparison can order.

**expand.** ``sympy.expand(e)`` applies each of its hints (mul, multinomial, power_base,
power_exp, log, basic) to every node and returns *e* itself when none changes anything. Every
hint leaves alone a rational, a symbol and an integer power of a symbol; a product of those
(``Mul._eval_expand_mul`` distributes over sums only) and a Min or Max (none of the hints is
defined on them) of arguments that are left alone; and a sum of such terms: ``expanded``
returns such an *e* as it is. Sums and products of such factors are multiplied out as the mul
hint does (``Mul._eval_expand_mul``: each choice of one term from each sum times the other
factors, all in one ``Add``, which collects like terms), which leaves what every hint leaves
alone. Anything else (a power of a sum, a division by a sum, a float, a function, ...) goes to
``sympy.expand``.

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

import math
from fractions import Fraction
from itertools import product

import sympy

#: the assumptions of a positive integer symbol: a free symbol whose own assumptions all agree
#: with these takes every positive integer value
_POSITIVE_INTEGER = sympy.Dummy(positive=True, integer=True).assumptions0

#: the large value at the far points of the search for both signs (a roofline's crossings sit at
#: a few hundred FLOPs per byte; 2**20 per size is past them)
_FAR = 2**20


#: the most terms ``expanded`` multiplies out itself (beyond, ``sympy.expand`` does)
_MAX_TERMS = 4096


class _Unknown(Exception):
    """An expression this evaluator does not take (a Float, oo, a function...)."""


def is_expanded(e) -> bool:
    """Whether ``sympy.expand`` leaves *e* as it is: a rational, a symbol, an integer power of a
    symbol, a product of such factors and of Min or Max, a sum of such terms, or a Min or Max of
    such arguments."""
    if e.is_Rational or e.is_Symbol:
        return True
    if e.is_Pow:
        return e.base.is_Symbol and e.exp.is_Integer
    if e.is_Mul:
        return all(not f.is_Add and is_expanded(f) for f in e.args)
    if e.is_Add or isinstance(e, (sympy.Min, sympy.Max)):
        return all(is_expanded(t) for t in e.args)
    return False


def expanded(e) -> sympy.Expr:
    """``sympy.expand(e)``, structurally identical (see the module docstring)."""
    if not isinstance(e, sympy.Basic):
        return sympy.expand(e)  # (an int: as before)
    if is_expanded(e):
        return e
    terms = _terms(e)
    if terms is not None:
        out = sympy.Add(*terms)
        if is_expanded(out):
            return out
    return sympy.expand(e)


def _terms(e):
    """The terms of *e* multiplied out (a product of sums: each choice of one term of each, times
    the other factors), or None where *e* is not sums and products of what ``expand`` leaves alone
    or the terms would pass ``_MAX_TERMS``."""
    if e.is_Add:
        out = []
        for t in e.args:
            ts = _terms(t)
            if ts is None:
                return None
            out += ts
        return out
    if e.is_Mul:
        plain, sums = [], []
        for f in e.args:
            if f.is_Add:
                ts = _terms(f)
                if ts is None:
                    return None
                sums.append(ts)
            elif is_expanded(f):
                plain.append(f)
            else:
                return None
        if math.prod(len(ts) for ts in sums) > _MAX_TERMS:
            return None
        return [sympy.Mul(*plain, *chosen) for chosen in product(*sums)]
    return [e] if is_expanded(e) else None


def roofline_max(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """``sympy.Max(a, b)``, structurally identical (see the module docstring)."""
    if _both_signs(a, b):
        return sympy.Max(a, b, evaluate=False)
    return sympy.Max(a, b)


def _both_signs(a, b) -> bool:
    if isinstance(a, (sympy.Min, sympy.Max)) or isinstance(b, (sympy.Min, sympy.Max)):
        return False
    if a == 0 or b == 0:
        return False  # an op that only moves bytes: left to SymPy (which mostly decides it at once)
    symbols = sorted(a.free_symbols | b.free_symbols, key=lambda s: s.name)
    if not symbols or any(_POSITIVE_INTEGER.get(k) != v for s in symbols for k, v in s.assumptions0.items()):
        return False  # (a symbol whose assumptions exclude some positive integers)
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

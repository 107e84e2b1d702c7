"""Exact evaluation of an expression at every point of a grid at once (``sweep.compile`` tabulates
its non-polynomial atoms with it): NumPy object arrays of Python ints and Fractions, so nothing
is rounded, at the speed of a few array operations instead of one SymPy substitution per point.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import reduce

import numpy as np
import sympy


class Unsupported(Exception):
    """An expression ``on_grid`` does not evaluate (the caller evaluates it point by point)."""


_COMPARE = {"<=": np.less_equal, "<": np.less, ">=": np.greater_equal, ">": np.greater, "==": np.equal,
            "!=": np.not_equal}


def on_grid(e, env: dict):
    """*e* at every point of a grid, exactly: *env* maps each symbol to an object array of
    Python ints; + - * integer powers, Min, Max, Abs, floor, ceiling and Piecewise over
    comparisons are done elementwise on Python ints and Fractions (no float anywhere)."""
    if e in env:
        return env[e]
    if e.is_Integer:
        return int(e)
    if e.is_Rational:
        return Fraction(int(e.p), int(e.q))
    if e is sympy.true or e is sympy.false:
        return bool(e)
    args = [on_grid(a, env) for a in e.args] if not isinstance(e, sympy.Piecewise) else None
    if e.is_Add:
        return reduce(lambda a, b: a + b, args)
    if e.is_Mul:
        return reduce(lambda a, b: a * b, args)
    if e.is_Pow and e.exp.is_Integer:
        base, k = args[0], int(e.exp)
        return base ** k if k >= 0 else Fraction(1) / _fractions(base) ** -k
    if isinstance(e, (sympy.Min, sympy.Max)):
        return reduce(np.minimum if isinstance(e, sympy.Min) else np.maximum, args)
    if isinstance(e, sympy.Abs):
        return np.abs(args[0])
    if isinstance(e, (sympy.floor, sympy.ceiling)):
        f = np.frompyfunc(math.floor if isinstance(e, sympy.floor) else math.ceil, 1, 1)
        return f(args[0])
    if isinstance(e, sympy.core.relational.Relational) and e.rel_op in _COMPARE:
        return np.asarray(_COMPARE[e.rel_op](args[0], args[1]), dtype=bool)
    if isinstance(e, (sympy.And, sympy.Or)):
        return reduce(np.logical_and if isinstance(e, sympy.And) else np.logical_or, args)
    if isinstance(e, sympy.Piecewise):
        if e.args[-1][1] is not sympy.true:
            raise Unsupported(e)  # no catch-all branch: some points may be left undefined
        out = _objects(on_grid(e.args[-1][0], env))
        for value, cond in reversed(e.args[:-1]):
            out = _objects(np.where(on_grid(cond, env), _objects(on_grid(value, env)), out))
        return out
    raise Unsupported(e)


def _objects(a) -> np.ndarray:
    """*a* as an object array of Python numbers (never a fixed-width integer that could wrap)."""
    if isinstance(a, np.ndarray) and a.dtype == object:
        return a
    out = np.empty(np.shape(a), dtype=object)
    out[...] = a.tolist() if isinstance(a, np.ndarray) else a
    return out


def _fractions(a):
    return np.frompyfunc(Fraction, 1, 1)(a) if isinstance(a, np.ndarray) else Fraction(a)

"""Exact, vectorised evaluation of a derived expression over a grid (NumPy).

The expression (ours: derived by symgpt, never user text) is split into a polynomial over the
grid symbols and a few non-polynomial *atoms* (``ceiling(V/64)``, ``1/h``, ...). Each atom is
tabulated exactly (SymPy) once per distinct value of its own symbols. The polynomial, scaled by
the common denominator D of its coefficients to integer coefficients, is compiled with
``sympy.lambdify`` and SymPy's NumPy printer.

Overflow: before evaluating, |P| is bounded over the whole grid by the sum over its terms of
|coefficient| x the product of max|x|^e. Every intermediate of the evaluation (a partial product
of a term, a partial sum) is within that bound, since the variables are integers. Below 2**63
the evaluation runs in int64 and is exact; otherwise it runs on object arrays of Python ints
(exact, about 50x slower), so a 40-digit size never wraps around. A value that is not an
integer (P not divisible by D, or a fractional atom) becomes an exact ``fractions.Fraction``.
No floats are ever used.
"""

from __future__ import annotations

from fractions import Fraction
from functools import reduce
from math import lcm, prod

import numpy as np
import sympy

from ..symbols import as_expr

from ..errors import SymgptError
from .grid import INT64_MAX, Chunk

MAX_ATOM_POINTS = 100_000   # distinct argument tuples of one non-polynomial atom
#: (atom, the values of its symbols) -> its table, shared by every compilation (``plan`` compiles
#: the same atoms for each structural choice); read-only once made
_TABLES: dict = {}


def exact(v):
    """A SymPy rational as a Python int or Fraction."""
    return int(v) if v.is_Integer else Fraction(int(v.p), int(v.q))


class Compiled:
    """*expr* compiled for the grid of *axes* (``Axis`` list; symbols looked up by name).

    ``evaluate(chunk)`` returns an int64 array, or an object array of Python ints and Fractions.
    """

    def __init__(self, expr: sympy.Expr, axes, what: str, symbols=None):
        from ..symbols import CANONICAL

        self.what = what
        symbols = symbols or CANONICAL  # name -> symbol (``plan`` adds its parallel degrees)
        self.position = {symbols[a.name]: i for i, a in enumerate(axes)}
        expr = as_expr(expr) if isinstance(expr, int) else expr  # an int, never text
        unknown = sorted(str(s) for s in expr.free_symbols if s not in self.position)
        if unknown:
            raise SymgptError(f"{what} depends on {', '.join(unknown)}, "
                              f"which {'is' if len(unknown) == 1 else 'are'} neither bound "
                              f"(--set {unknown[0]}=...) nor gridded (--grid {unknown[0]}=...)")
        self.atoms: list[tuple[sympy.Dummy, tuple[int, ...], np.ndarray]] = []
        poly = sympy.expand(self._split(expr, axes))
        gens = sorted(poly.free_symbols, key=str)
        if any(c.is_Float for c in poly.atoms(sympy.Number)) or not poly.is_polynomial(*gens):
            raise SymgptError(f"{what} cannot be evaluated exactly over a grid: {poly}")
        terms = sympy.Poly(poly, *gens).terms() if gens else [((), poly)]
        if not all(c.is_Rational for _, c in terms):
            raise SymgptError(f"{what} has a coefficient that is not rational: {poly}")
        self.denominator = reduce(lcm, (int(c.q) for _, c in terms), 1)
        scaled = sympy.expand(poly * self.denominator)
        maxabs = {s: self._maxabs(s, axes) for s in gens}
        self.bound = sum(abs(int(c * self.denominator)) * prod(maxabs[s] ** e for s, e in zip(gens, m))
                         for m, c in terms)
        fractional = any(t.dtype == object and any(isinstance(x, Fraction) for x in t.flat)
                         for _, _, t in self.atoms)
        self.int64 = self.bound <= INT64_MAX and not fractional
        self.gens = gens
        self.constant = exact(scaled) if not gens else None
        self.fn = _lambdify(gens, scaled) if gens else None

    # --- compilation --------------------------------------------------------------------------
    def _split(self, e: sympy.Expr, axes) -> sympy.Expr:
        """*e* with every non-polynomial subterm over grid symbols replaced by a tabulated dummy."""
        if e.is_Symbol or e.is_Number or not e.free_symbols:
            return e
        if e.is_Add or e.is_Mul:
            return e.func(*[self._split(a, axes) for a in e.args])
        if e.is_Pow and e.exp.is_Integer and e.exp >= 0:
            return sympy.Pow(self._split(e.base, axes), e.exp)
        return self._tabulate(e, axes)

    def _tabulate(self, atom: sympy.Expr, axes) -> sympy.Dummy:
        memo = self.__dict__.setdefault("_memo", {})
        if atom not in memo:  # an atom that occurs in many terms is tabulated once
            memo[atom] = self._table(atom, axes)
        return memo[atom]

    def _table(self, atom: sympy.Expr, axes) -> sympy.Dummy:
        syms = sorted(atom.free_symbols, key=lambda s: self.position[s])
        dims = tuple(self.position[s] for s in syms)
        shape = tuple(len(axes[i]) for i in dims)
        if prod(shape) > MAX_ATOM_POINTS:
            raise SymgptError(f"{self.what}: cannot tabulate {atom} over {prod(shape):,} values of "
                              f"{', '.join(map(str, syms))} (at most {MAX_ATOM_POINTS:,}); narrow the grid")
        key = (atom, tuple(tuple(axes[i].all()) for i in dims))
        table = _TABLES.get(key)
        if table is None:
            table = self._fill(atom, syms, dims, axes).reshape(shape)
            if len(_TABLES) > 4096:
                _TABLES.clear()
            _TABLES[key] = table
        dummy = sympy.Dummy(f"atom{len(self.atoms)}")
        self.atoms.append((dummy, dims, table))
        return dummy

    def _fill(self, atom, syms, dims, axes) -> np.ndarray:
        from itertools import product

        values = []
        for combo in product(*(axes[i].all() for i in dims)):
            v = atom.xreplace({s: sympy.Integer(x) for s, x in zip(syms, combo)})
            if not v.is_Rational:
                raise SymgptError(f"{self.what}: {atom} is not a rational number at "
                                  + ", ".join(f"{s}={x}" for s, x in zip(syms, combo)))
            values.append(exact(v))
        fits = all(isinstance(v, int) and abs(v) <= INT64_MAX for v in values)
        table = np.empty(len(values), dtype=np.int64 if fits else object)
        table[:] = values
        return table

    def _maxabs(self, s, axes) -> int:
        if s in self.position:
            return axes[self.position[s]].max   # sizes are positive
        for dummy, _, table in self.atoms:
            if dummy == s:
                return max((abs(int(x)) if isinstance(x, (int, np.integer)) else abs(x)
                            for x in table.flat), default=0).__ceil__()
        raise AssertionError(s)

    # --- evaluation ---------------------------------------------------------------------------
    def _arg(self, s, chunk: Chunk, exact_mode: bool) -> np.ndarray:
        if s in self.position:
            return chunk.values(self.position[s], exact=exact_mode)
        for dummy, dims, table in self.atoms:
            if dummy == s:
                flat = np.ravel_multi_index(tuple(chunk.index[i] for i in dims), table.shape) if dims \
                    else np.zeros(chunk.n, dtype=np.int64)
                out = table.reshape(-1)[flat]
                return out.astype(object) if exact_mode and out.dtype != object else out
        raise AssertionError(s)

    def evaluate(self, chunk: Chunk) -> np.ndarray:
        if self.fn is None:
            value = self.constant
            dtype = np.int64 if isinstance(value, int) and abs(value) <= INT64_MAX else object
            out = np.empty(chunk.n, dtype=dtype)
            out[:] = value
            return self._divide(out)
        args = [self._arg(s, chunk, not self.int64) for s in self.gens]
        out = self.fn(*args)
        if np.ndim(out) == 0 or len(out) != chunk.n:  # a term free of the grid symbols
            out = np.broadcast_to(out, (chunk.n,)).copy()
        return self._divide(out)

    def _divide(self, raw: np.ndarray) -> np.ndarray:
        D = self.denominator
        if D == 1:
            return raw
        if raw.dtype != object and not (raw % D).any():
            return raw // D
        out = np.empty(len(raw), dtype=object)
        out[:] = [_normal(Fraction(x) / D) if not isinstance(x, (int, np.integer)) else
                  _normal(Fraction(int(x), D)) for x in raw]
        return out


class Sign:
    """An array with the sign of *expr* at every point (for ``--where``): *expr* is written as
    one fraction num/den, and sign(num)·sign(den) is evaluated, so ``params / L > 1.5e7`` stays
    in exact int64 arithmetic instead of tabulating 1/L as fractions."""

    def __init__(self, expr: sympy.Expr, axes, what: str):
        num, den = sympy.fraction(sympy.together(expr))
        self.num = Compiled(num, axes, what)
        self.den = None if den == 1 else Compiled(den, axes, what)

    def evaluate(self, chunk: Chunk) -> np.ndarray:
        n = self.num.evaluate(chunk)
        return n if self.den is None else np.sign(n) * np.sign(self.den.evaluate(chunk))


def _lambdify(gens, expr):
    """``sympy.lambdify`` with SymPy's NumPy printer and a namespace holding only ``numpy``:
    ``modules="numpy"`` runs ``from numpy import *``, which loads numpy.f2py and numpy.testing
    (about 0.8 s) for a polynomial that needs nothing but ``+``, ``*`` and ``**``."""
    from sympy.printing.numpy import NumPyPrinter

    return sympy.lambdify(gens, expr, modules=[{"numpy": np}], printer=NumPyPrinter)


def _normal(f: Fraction):
    return f.numerator if f.denominator == 1 else f

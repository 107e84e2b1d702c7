"""Exact, vectorised evaluation of a derived expression over a grid (NumPy).

The expression (ours: derived by symgpt, never user text) is split into a polynomial over the
grid symbols and a few non-polynomial *atoms* (``ceiling(V/64)``, ``1/h``, ...). Each atom is
tabulated exactly (SymPy) once per distinct value of its own symbols. The polynomial, scaled by
the common denominator D of its coefficients to integer coefficients, is kept as its list of
terms and evaluated term by term on arrays that broadcast (a chunk gives each axis as a short
array along its own dimension), so the factors of one axis are combined on that axis alone.

Overflow is judged per chunk: before evaluating one, |P| is bounded over the chunk by the sum
over its terms of |coefficient| x the product of max|x|^e. Every intermediate of the evaluation
(a partial product of a term, a partial sum) is within that bound, since the variables are
integers. Below 2**63 the chunk runs in int64 and is exact; otherwise on object arrays of Python
ints (exact, slower), so a 40-digit size never wraps around. A value that is not an integer (P
not divisible by D, or a fractional atom) becomes an exact ``fractions.Fraction``.

Floats are used only to *choose*, never as a result: ``estimate`` evaluates P in float64 with a
rigorous error bound E (Higham's gamma_n over the largest term sum), so a caller can rank or sign
points whose |P| or gap exceeds E and recompute the undecided few exactly (``sign``, ``top``).
"""

from __future__ import annotations

from fractions import Fraction
from functools import reduce
from math import lcm, prod

import numpy as np
import sympy

from ..core.symbols import as_expr

from ..core.errors import SymgptError
from .grid import INT64_MAX, Chunk
from .gridexact import Unsupported, on_grid

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
        from ..core.symbols import CANONICAL

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
        self.gens = gens
        #: (exponents, integer coefficient) of P = D * poly
        self.terms = [(tuple(m), int(c * self.denominator)) for m, c in terms]
        self.fractional = any(t.dtype == object and any(isinstance(x, Fraction) for x in t.flat)
                              for _, _, t in self.atoms)
        maxabs = {s: self._maxabs(s, axes) for s in gens}
        self.bound = self._bound([maxabs[s] for s in gens])
        self.int64 = self.bound <= INT64_MAX and not self.fractional  # on the whole grid
        n = max((2 + 3 * sum(m) for m, _ in self.terms), default=2) + len(self.terms)
        self._gamma = 1.01 * n * 2.0 ** -53 / (1 - n * 2.0 ** -53)  # Higham's gamma_n, rounded up
        self._floats: dict = {}

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

        grids = np.meshgrid(*[np.array(axes[i].all(), dtype=object) for i in dims], indexing="ij")
        try:  # at once, on object arrays of Python ints and Fractions (exact)
            values = on_grid(atom, dict(zip(syms, grids)))
        except (ArithmeticError, Unsupported):
            values = None
        if values is not None:
            values = [_normal(Fraction(x)) for x in np.broadcast_to(values, grids[0].shape).flat]
        else:  # one point at a time, SymPy evaluating each
            values = [self._one(atom, syms, combo) for combo in product(*(axes[i].all() for i in dims))]
        fits = all(isinstance(v, int) and abs(v) <= INT64_MAX for v in values)
        table = np.empty(len(values), dtype=np.int64 if fits else object)
        table[:] = values
        return table

    def _one(self, atom, syms, combo):
        v = atom.xreplace({s: sympy.Integer(x) for s, x in zip(syms, combo)})
        if not v.is_Rational:
            raise SymgptError(f"{self.what}: {atom} is not a rational number at "
                              + ", ".join(f"{s}={x}" for s, x in zip(syms, combo)))
        return exact(v)

    def _maxabs(self, s, axes) -> int:
        if s in self.position:
            return axes[self.position[s]].max   # sizes are positive
        for dummy, _, table in self.atoms:
            if dummy == s:
                return max(1, _absmax(table))  # >= 1: every partial product stays within the bound
        raise AssertionError(s)

    def _bound(self, maxabs) -> int:
        return sum(abs(c) * prod(x ** e for x, e in zip(maxabs, m)) for m, c in self.terms)

    # --- evaluation ---------------------------------------------------------------------------
    def _arg(self, s, pts, kind: str) -> np.ndarray:
        """Generator *s* at the points of *pts* (a ``Chunk`` or ``Points``): ``int`` int64,
        ``exact`` Python ints/Fractions, ``float`` float64 (each value correctly rounded)."""
        if s in self.position:
            i = self.position[s]
            v = pts.values(i, exact=kind == "exact")
            return v.astype(np.float64) if kind == "float" else v
        for dummy, dims, table in self.atoms:
            if dummy == s:
                if kind == "float":
                    if dummy not in self._floats:
                        self._floats[dummy] = np.array([float(x) for x in table.flat]).reshape(table.shape)
                    table = self._floats[dummy]
                out = table[tuple(pts.index[i] for i in dims)] if dims else np.asarray(table)
                return out.astype(object) if kind == "exact" and out.dtype != object else out
        raise AssertionError(s)

    def chunk_bound(self, pts) -> int:
        """An upper bound of |P| (and of every intermediate) over the points of *pts*."""
        return self._bound([_absmax(pts.values(self.position[s])) if s in self.position
                            else max(1, _absmax(self._atom(s, pts))) for s in self.gens])

    def _atom(self, s, pts):
        """|atom| rounded up at the points of *pts* (its maximum is what the bound needs): from a
        table of ceil(|x|) made once, int64 where it fits, so a chunk of Fractions is not scanned."""
        ceil = self.__dict__.setdefault("_ceil", {})
        for dummy, dims, table in self.atoms:
            if dummy == s:
                if dummy not in ceil:
                    ceil[dummy] = _ceil_abs(table)
                t = ceil[dummy]
                return t[tuple(pts.index[i] for i in dims)] if dims else np.asarray(t)
        raise AssertionError(s)

    def fits(self, pts) -> bool:
        """Whether *pts* evaluate exactly in int64."""
        return self.int64 or (not self.fractional and self.chunk_bound(pts) <= INT64_MAX)

    def raw(self, pts) -> np.ndarray:
        """P = D * value at the points of *pts*, exact (int64 or Python ints), broadcast-shaped."""
        kind = "int" if self.fits(pts) else "exact"
        if not self.gens:
            return np.asarray(self.terms[0][1] if self.terms else 0, dtype=np.int64 if kind == "int" else object)
        return _poly(self.terms, [self._arg(s, pts, kind) for s in self.gens], kind)

    def evaluate(self, pts, flat: bool = True) -> np.ndarray:
        """The exact values at the points of *pts*: int64, or an object array of Python ints and
        Fractions; a flat array of ``pts.n`` values, or (``flat=False``) one that broadcasts to
        ``pts.shape``."""
        out = self._divide(self.raw(pts))
        return spread(out, pts) if flat else out

    def estimate(self, pts):
        """``(F, E)``: P in float64 at the points of *pts* (broadcast-shaped) and a bound E with
        |F - P| <= E everywhere; None where floats cannot say (a size past 2**53, |P| near the
        float range)."""
        if any(_absmax(pts.values(self.position[s])) > 2 ** 53 for s in self.gens if s in self.position):
            return None  # not every size is a float
        bound = self.chunk_bound(pts)
        if bound > 2 ** 1000:
            return None
        if not self.gens:
            return np.asarray(float(self.terms[0][1] if self.terms else 0)), float(bound) * self._gamma
        F = _poly(self.terms, [self._arg(s, pts, "float") for s in self.gens], "float")
        return F, float(bound) * (1 + 2.0 ** -50) * self._gamma

    def _divide(self, raw: np.ndarray) -> np.ndarray:
        D = self.denominator
        if D == 1:
            return raw
        if raw.dtype != object and not (raw % D).any():
            return raw // D
        out = np.empty(raw.shape, dtype=object)
        out.flat[:] = [_normal(Fraction(x) / D) if not isinstance(x, (int, np.integer)) else
                       _normal(Fraction(int(x), D)) for x in raw.flat]
        return out


def spread(a: np.ndarray, pts) -> np.ndarray:
    """A broadcast-shaped result as a flat array of one value per point of *pts*."""
    shape = getattr(pts, "shape", (pts.n,))
    return np.broadcast_to(a, shape).reshape(-1)


def sign(compiled: "Compiled", pts) -> np.ndarray:
    """sign(P) at the points of *pts* (int8, broadcast-shaped), exact: in int64 where the chunk
    fits, else from the float estimate where |F| > E and exactly at the few points left."""
    if compiled.fits(pts):
        return np.sign(compiled.raw(pts)).astype(np.int8)
    est = compiled.estimate(pts)
    if est is None:
        r = compiled.raw(pts)
        return (r > 0).astype(np.int8) - (r < 0).astype(np.int8)
    F, E = est
    out = np.where(F > E, 1, np.where(F < -E, -1, 0)).astype(np.int8)
    unsure = np.abs(F) <= E
    if unsure.any():
        shape = getattr(pts, "shape", (pts.n,))
        out = np.broadcast_to(out, shape).copy()
        where = np.flatnonzero(np.broadcast_to(unsure, shape))
        r = compiled.raw(subset(pts, where)).reshape(-1) if len(where) else np.zeros(0)
        out.reshape(-1)[where] = (r > 0).astype(np.int8) - (r < 0).astype(np.int8)
    return out


def subset(pts, positions: np.ndarray):
    """The points at flat *positions* of *pts* (a ``Chunk`` or ``Points``)."""
    if hasattr(pts, "points"):
        return pts.points(positions)
    from .grid import Points

    return Points(pts.axes if hasattr(pts, "axes") else pts._axes,
                  tuple(ix[positions] for ix in pts.index), len(positions))


def _ceil_abs(table: np.ndarray) -> np.ndarray:
    """ceil(|x|) of every entry: int64 where every one fits, else Python ints."""
    if table.dtype != object:
        return np.abs(table)
    out = [abs(x).__ceil__() for x in table.flat]
    fits = all(x <= INT64_MAX for x in out)
    arr = np.empty(len(out), dtype=np.int64 if fits else object)
    arr[:] = out
    return arr.reshape(table.shape)


def _absmax(a) -> int:
    a = np.asarray(a)
    if a.size == 0:
        return 0
    if a.dtype != object:
        return int(np.abs(a).max())
    return max(abs(x) for x in a.flat).__ceil__()


def _poly(terms, args, kind: str):
    """sum of c * prod(x^e) over *terms*, grouped Horner-fashion by the generator whose array is
    smallest: P = sum_k g^k P_k(rest). Each P_k lives on the other axes only, so a grid of two
    axes costs about two operations per point whatever the number of terms. Floats multiply
    powers out (the error bound counts every rounding)."""
    used = sorted({g for exps, _ in terms for g, e in enumerate(exps) if e}, key=lambda g: np.size(args[g]))
    if not used:
        c = sum(c for _, c in terms)
        return np.asarray(np.int64(c) if kind == "int" else float(c) if kind == "float" else c,
                          dtype=np.int64 if kind == "int" else np.float64 if kind == "float" else object)
    g = used[0]
    groups: dict[int, list] = {}
    for exps, c in terms:
        groups.setdefault(exps[g], []).append((exps[:g] + (0,) + exps[g + 1:], c))
    total = None
    for k in sorted(groups):
        inner = _poly(groups[k], args, kind)
        v = inner if k == 0 else _power(args[g], k, kind) * inner
        total = v if total is None else total + v
    return total


def _power(x, e: int, kind: str):
    if kind != "float" or e == 1:
        return x ** e if e > 1 else x
    out = x
    for _ in range(e - 1):
        out = out * x
    return out


class Sign:
    """An array with the sign of *expr* at every point (for ``--where``): *expr* is written as
    one fraction num/den, and sign(num)·sign(den) is evaluated, so ``params / L > 1.5e7`` stays
    in exact int64 arithmetic instead of tabulating 1/L as fractions."""

    def __init__(self, expr: sympy.Expr, axes, what: str):
        num, den = sympy.fraction(sympy.together(expr))
        self.num = Compiled(num, axes, what)
        self.den = None if den == 1 else Compiled(den, axes, what)

    def evaluate(self, chunk, flat: bool = True) -> np.ndarray:
        s = sign(self.num, chunk)
        if self.den is not None:
            s = s * sign(self.den, chunk)
        return spread(s, chunk) if flat else s


def _normal(f: Fraction):
    return f.numerator if f.denominator == 1 else f

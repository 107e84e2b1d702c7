"""Crossover: the size at which one part of a quantity overtakes another, solved exactly.

By default the *fast* side is the fastest-growing terms of the quantity (or of its part) as the
symbol grows, and the *slow* side is everything else: for the forward FLOPs of GPT-2's blocks
as T grows, the attention matmuls ``4·B·L·T²·d`` against the dense ones ``24·B·L·T·d²``,
crossing at ``T = 6·d``. With ``against`` the two sides are two parts of the breakdown.

The solution is the largest positive root of ``fast - slow`` in the symbol (beyond it the fast
side stays ahead); other symbols are treated as positive and kept symbolic, then substituted
for the value at the configuration.

A sliding window makes attention count ``T·Min(T, W)`` keys: quadratic in T up to the window,
linear beyond it, where it can never overtake the (linear) dense matmuls. The crossover is then
solved in the regime ``T ≤ W`` (``Min(T, W) = T``), and ``notes`` says so -- and says when the
point found lies beyond W, outside that regime.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from functools import lru_cache

import sympy

from ..core.errors import SymgptError
from ..derive.quantity import Quantity, evaluate
from ..core.symbols import symbol as canonical
from .regime import Regime, graded_terms
from .selection import restrict, unbind


@dataclass(frozen=True)
class Crossover:
    quantity: Quantity        # what the two sides were taken from (with --part applied)
    symbol: sympy.Symbol
    fast: sympy.Expr          # the side that grows faster
    slow: sympy.Expr          # the side it overtakes
    fast_label: str
    slow_label: str
    solutions: tuple[sympy.Expr, ...]   # positive roots of fast - slow
    solution: sympy.Expr | None         # the largest: fast > slow beyond it
    notes: tuple[str, ...] = ()         # the regime assumed (a sliding window: T <= W), in words

    @property
    def value(self):
        """The solution at the configuration (exact), or None while a symbol is unbound."""
        if self.solution is None:
            return None
        return evaluate(self.solution, self.quantity.bindings)

    def __repr__(self) -> str:
        """The crossover and its value at the configuration (the sides, roots and notes are
        attributes: ``fast``, ``slow``, ``solutions``, ``notes``)."""
        head = f"crossover of {self.quantity.name} as {self.symbol} grows"
        if self.solution is None:
            found = "no positive solution" if not self.solutions else f"{len(self.solutions)} candidate roots"
            return f"<{head}: {found}>"
        return f"<{head}: {self.symbol} = {sympy.sstr(self.solution)}{shown_value(self.value)}>"


def shown_value(v) -> str:
    """`` = value`` for a result's repr (exact, and about so many when not whole); empty when
    unbound."""
    from ..core.numtext import number

    if v is None:
        return ""
    text = f" = {number(v)}"
    if v.is_Rational and not v.is_Integer:
        text += f" ≈ {float(v):,.6g}"
    elif not v.is_Rational and v.is_real:
        text = f" ≈ {float(v):,.6g}"
    return text


def _symbol(s) -> sympy.Symbol:
    if isinstance(s, Regime):
        if len(s.rates) != 1:
            raise SymgptError("a crossover grows exactly one symbol (--as T)")
        return s.rates[0][0]
    return canonical(s.name if isinstance(s, sympy.Symbol) else str(s).strip())


@lru_cache(maxsize=1024)  # a report asks the same crossover several times
def _roots(diff: sympy.Expr, s: sympy.Symbol) -> tuple:
    """The roots in *s* of ``diff = 0``, solved for a positive real stand-in of *s*."""
    t = sympy.Dummy(s.name, positive=True)
    num, _ = sympy.fraction(sympy.together(diff.xreplace({s: t})))
    if not num.has(t):
        return None
    root = _linear_root(num, t)
    return (root,) if root is not None else _solved_roots(num, t)


def _solved_roots(num: sympy.Expr, t: sympy.Dummy) -> tuple:
    """The roots of ``num = 0`` by ``sympy.solve`` (which keeps those not shown negative for the
    positive *t*), each simplified and expanded: the general way, and the oracle of the quick one."""
    try:
        roots = sympy.solve(num, t)
    except NotImplementedError:
        return ()
    return tuple(one_fraction(sympy.expand(sympy.simplify(r))) for r in roots)


def one_fraction(e: sympy.Expr) -> sympy.Expr:
    """*e*, a rational function over a sum, as one fraction with no common factor, its numerator
    and denominator each grouped (:func:`grouped`): a decode step's critical batch reads
    ``F_peak·d·(…)/(BW_mem·d·(…) − F_peak·(…))`` instead of one fraction per term of the expanded
    root over the same denominator. Anything else (a polynomial, one over a monomial, a root
    with radicals) is returned as it is."""
    if not e.free_symbols:
        return e
    held = _held_atoms(e)
    if held:  # Min(T, W), floor(L/6): letters of their own while the fraction is formed
        inner = e.xreplace(held)
        return e if inner == e else one_fraction(inner).xreplace({v: k for k, v in held.items()})
    if not e.is_rational_function():
        return e  # (a number, radicals and all, stays as solve wrote it)
    num, den = sympy.fraction(sympy.cancel(sympy.together(e)))
    num, den = sympy.expand(num), sympy.expand(den)
    if not den.is_Add:
        return e
    if _mostly_negative(num):
        num, den = -num, -den
    return grouped(num) / grouped(den)


def _held_atoms(e: sympy.Expr) -> dict:
    """The windows and counts in *e* (``Min(T, W)``, ``floor(L/6)``) -> a positive symbol each
    (named in the order SymPy sorts them, so the same root prints the same)."""
    atoms = sorted(e.atoms(sympy.Min, sympy.Max, sympy.floor, sympy.ceiling), key=sympy.default_sort_key)
    return {a: sympy.Symbol(f"_held{i}", positive=True) for i, a in enumerate(atoms)}


def _mostly_negative(p: sympy.Expr) -> bool:
    terms = sympy.Add.make_args(p)
    return 2 * sum(1 for t in terms if t.as_coeff_Mul()[0] < 0) > len(terms)


def grouped(p: sympy.Expr) -> sympy.Expr:
    """The polynomial *p* with its common monomial factor taken out and, when every remaining
    term holds exactly one of two symbols (a roofline's F_peak and BW_mem), collected by them:
    ``BW_mem·(…) − F_peak·(…)``; each group's own common factor taken out."""
    terms = sympy.Add.make_args(sympy.expand(p))
    if len(terms) == 1:
        return p
    coeff, rest = sympy.factor_terms(p).as_coeff_Mul()
    common = coeff * sympy.Mul(*[f for f in sympy.Mul.make_args(rest) if not f.is_Add])
    inner = sympy.Add.make_args(sympy.expand(p / common))
    parts = _two_groups(inner)
    if parts is None:
        return sympy.factor_terms(p)
    body = sympy.Add(*[x * sympy.factor_terms(sympy.Add(*[t / x for t in ts])) for x, ts in parts])
    return body if common == 1 else sympy.Mul(common, body, evaluate=False)


def _two_groups(terms) -> list | None:
    """[(a, terms holding a), (b, terms holding b)]: the first pair of symbols (hardware symbols
    first, then by name) such that every term holds exactly one of them, to the first power."""
    from ..core.symbols import HARDWARE_SYMBOLS

    syms = sorted(set().union(*[t.free_symbols for t in terms]),
                  key=lambda x: (x.name not in HARDWARE_SYMBOLS, x.name))
    for i, a in enumerate(syms):
        for b in syms[i + 1:]:
            ga = [t for t in terms if not t.has(b) and _power_of(t, a) == 1]
            gb = [t for t in terms if not t.has(a) and _power_of(t, b) == 1]
            if ga and gb and len(ga) + len(gb) == len(terms):
                return [(a, ga), (b, gb)]
    return None


def _power_of(term: sympy.Expr, x: sympy.Symbol) -> int | None:
    """The power of *x* in the monomial *term* (``3·x·y² -> 1``), None where *x* appears other
    than as an integer power of a factor (inside a sum, a Max, a radical): what
    ``sympy.degree(term, x)`` gives for a monomial, without building a polynomial."""
    power = 0
    for f in sympy.Mul.make_args(term):
        if f == x:
            power += 1
        elif f.is_Pow and f.base == x and f.exp.is_Integer and f.exp > 0:
            power += int(f.exp)
        elif f.has(x):
            return None
    return power


def _linear_root(num: sympy.Expr, t: sympy.Dummy) -> sympy.Expr | None:
    """The one root of ``num = t^k·(a·t + b)`` -- the usual crossover, ``T = 6·d`` -- when *num* is
    a polynomial with rational coefficients, the root a polynomial in the other symbols (or one
    over a monomial) and surely positive, expanded; None for anything else (``_solved_roots``
    decides those).

    Such a root is what ``_solved_roots`` gives, in the same form: ``sympy.solve`` keeps it (a
    positive value is never shown negative), drops ``t = 0`` (not positive), and any form of a
    Laurent polynomial expands to the same sum of terms. It is found by sorting the terms of
    *num* by their power of *t*, without ``solve`` and ``simplify`` (whose first call imports
    ``sympy.physics.units``)."""
    by_power: dict[int, list] = {}
    for term in sympy.Add.make_args(sympy.expand(num)):
        mono = _monomial(term)
        if mono is None or any(e < 0 for e in mono[1].values()):
            return None
        by_power.setdefault(mono[1].get(t, 0), []).append(term)
    if len(by_power) != 2:
        return None
    low, high = sorted(by_power)
    if high != low + 1:
        return None
    a = sympy.Add(*[term / t ** high for term in by_power[high]])
    b = sympy.Add(*[term / t ** low for term in by_power[low]])
    if a.is_Add:  # one root over a sum: a polynomial if a divides b, else not handled here
        root = sympy.cancel(-b / a)
        if sympy.fraction(root)[1].is_Add:
            return None  # a rational function: its expanded form depends on how it was written
        root = sympy.expand(root)
    else:
        root = sympy.Add(*[-term / a for term in sympy.Add.make_args(b)])
    monos = [_monomial(term) for term in sympy.Add.make_args(root)]
    if any(m is None or m[0] <= 0 for m in monos) or not all(s.is_positive for s in root.free_symbols):
        return None  # not surely positive: solve's own check decides
    return root


def _monomial(term: sympy.Expr) -> tuple | None:
    """``(coefficient, {symbol: power})`` of a rational multiple of a product of integer powers of
    symbols, else None."""
    coeff, rest = term.as_coeff_Mul()
    if not coeff.is_Rational:
        return None
    powers = {}
    for f in (() if rest == 1 else sympy.Mul.make_args(rest)):
        base, e = f.as_base_exp()
        if not (base.is_Symbol and e.is_Integer):
            return None
        powers[base] = int(e)
    return coeff, powers


def solve_crossover(fast: sympy.Expr, slow: sympy.Expr, s: sympy.Symbol, bindings=None):
    """(positive roots, the largest) of ``fast = slow`` in *s*."""
    roots = _roots(sympy.expand(fast - slow), s)
    if roots is None:
        raise SymgptError(f"{sympy.sstr(fast)} and {sympy.sstr(slow)} do not cross as {s} grows "
                          "(their difference does not depend on it)")
    if roots == ():
        raise SymgptError(f"cannot solve {sympy.sstr(fast)} = {sympy.sstr(slow)} for {s}")
    roots = list(roots)
    if bindings:
        keep = []
        for r in roots:
            v = evaluate(r, {k: v for k, v in bindings.items() if k != s})
            if v is None:
                keep.append((r, None))
            elif v.is_real and v > 0:
                keep.append((r, v))
        roots_pos = [r for r, _ in keep]
        known = [(v, r) for r, v in keep if v is not None]
        if known and len(known) == len(keep):
            best = max(known, key=lambda vr: vr[0])[1]
            return tuple(roots_pos), best
    else:
        roots_pos = [r for r in roots if r.is_positive is not False and r.is_real is not False]
    sure = [r for r in roots_pos if r.is_positive]
    if len(roots_pos) == 1:
        return tuple(roots_pos), roots_pos[0]
    if len(sure) == len(roots_pos) and sure:
        return tuple(roots_pos), sympy.Max(*sure)
    return tuple(roots_pos), None


def crossover(q: Quantity, symbol, part=None, against=None) -> Crossover:
    """Where, as *symbol* grows, the fastest-growing terms of *q* (restricted to *part*)
    overtake the rest -- or, with *against*, where *part* overtakes the part *against*."""
    if not isinstance(q, Quantity):
        raise SymgptError(f"a crossover is taken of a Quantity, got {type(q).__name__}")
    s = _symbol(symbol)
    full, bounds = _below_window(unbind(q, [s]), s)
    sides = _roofline(restrict(full, part), s) if against is None else None
    if sides is not None:
        base = restrict(full, part)
        fast, slow = sides
        roots, best = solve_crossover(fast, slow, s, full.bindings)
        note = ("a roofline: the crossover is where the step's compute time (FLOPs / F_peak, summed "
                "over its ops) overtakes its memory time (bytes / BW_mem); an all-reduce adds to both "
                "alike; under scaling-book the KV-cache read counts as memory time, and --part weights "
                "gives the book's critical batch of the parameters alone")
        notes = (note,)
        if not roots:
            notes += (f"no positive {s} solves it here: the memory time grows with {s} at least as fast as "
                      "the compute time (per sequence, the step's bytes outweigh its FLOPs at this "
                      "peak-to-bandwidth ratio), so the step never turns compute-bound as a whole",)
        c = Crossover(base, s, fast, slow, "compute time (FLOPs / F_peak)", "memory time (bytes / BW_mem)",
                      roots, best, notes)
        return _with_regime_notes(c, bounds)
    if against is not None:
        if part is None:
            raise SymgptError("against needs a part to set against it (part=..., --part PATH)")
        a, b = restrict(full, part), restrict(full, against)
        fast, slow = a.expr, b.expr
        fast_label, slow_label = a.name, b.name
        base = a
    else:
        base = restrict(full, part)
        graded = graded_terms(base.expr, Regime(((s, sympy.Integer(1)),)))
        if len(graded) < 2:
            raise SymgptError(f"{base.name} has one growth order in {s}: nothing to overtake "
                              "(try another symbol, or a part with --part / against)")
        fast = graded[0][1]
        slow = sympy.expand(base.expr - fast)
        fast_label, slow_label = f"fastest-growing terms of {base.name}", "the rest"
    roots, best = solve_crossover(fast, slow, s, full.bindings)
    c = Crossover(base, s, fast, slow, fast_label, slow_label, roots, best)
    return _with_regime_notes(c, bounds)


def _roofline(q: Quantity, s: sympy.Symbol):
    """(compute side, memory side) of a roofline quantity -- entries Max(FLOPs / F_peak,
    bytes / BW_mem), the inference times -- or None for any other quantity."""
    from ..core.symbols import BW_mem, F_peak

    compute, memory, found = sympy.Integer(0), sympy.Integer(0), False
    for _, e in q.breakdown:
        if not isinstance(e, sympy.Max):  # an op with no FLOPs (or no bytes) is its one side
            if e.has(F_peak) and not e.has(BW_mem):
                compute += e
            elif e.has(BW_mem) and not e.has(F_peak):
                memory += e
            continue
        flops = [a for a in e.args if a.has(F_peak)]
        if len(flops) != 1 or len(e.args) != 2:
            return None
        found = True
        compute += flops[0]
        memory += next(a for a in e.args if a is not flops[0])
    if not found or not (compute.has(s) or memory.has(s)):
        return None
    return sympy.expand(compute), sympy.expand(memory)


def _below_window(q: Quantity, s: sympy.Symbol) -> tuple[Quantity, tuple]:
    """*q* with every ``Min(s, X)`` replaced by *s* (the regime ``s <= X``), and the Mins."""
    mins = sorted({m for _, e in q.breakdown for m in e.atoms(sympy.Min) if s in m.args},
                  key=sympy.default_sort_key)
    if not mins:
        return q, ()
    repl = {m: s for m in mins}
    kept = tuple((p, sympy.expand(e.xreplace(repl))) for p, e in q.breakdown)
    return Quantity(q.name, kept, q.bindings, q.unit, q.convention, q.notes), tuple(mins)


def _with_regime_notes(c: Crossover, mins) -> Crossover:
    if not mins:
        return c
    s, notes = c.symbol, []
    for m in mins:
        bound = sympy.Min(*[a for a in m.args if a != s])
        notes.append(f"solved in the regime {s} <= {sympy.sstr(bound)}, where {sympy.sstr(m)} = {s} "
                     f"(a sliding window); beyond {s} = {sympy.sstr(bound)} each query sees "
                     f"{sympy.sstr(bound)} keys, the attention terms grow linearly in {s} and no "
                     "longer overtake the rest")
        v, w = c.value, evaluate(bound, c.quantity.bindings)
        if v is not None and w is not None and v > w:
            notes.append(f"{s} = {sympy.sstr(v)} lies beyond {sympy.sstr(bound)} = {w}, outside that "
                         f"regime: with this window the crossover is never reached")
    return dataclasses.replace(c, notes=tuple(notes))


def outside(model, c: Crossover) -> list[str]:
    """The model's constraints the crossover point breaks (T = 4,608 > T_max = 1,024): a
    crossover beyond what the model can run is still where the curves cross, but say so."""
    v = c.value
    if v is None:
        return []
    b = {**c.quantity.bindings, c.symbol: v}
    out = []
    for con in model.arch.constraints:
        if con.kind != "le" or c.symbol not in con.expr.free_symbols:
            continue
        left = evaluate(con.expr, b)
        if left is not None and left > 0:
            others = ", ".join(f"{s} = {b[s]}" for s in sorted(con.expr.free_symbols, key=str)
                               if s != c.symbol and s in b)
            out.append(f"at {c.symbol} = {sympy.sstr(v)} the model is out of range: {con.message}"
                       + (f" ({others})" if others else ""))
    return out


def shift(moved: Crossover, reference: Crossover) -> sympy.Expr | None:
    """How far a crossover moved: ``moved.solution - reference.solution`` (None if either is)."""
    if moved.solution is None or reference.solution is None:
        return None
    return sympy.expand(sympy.simplify(moved.solution - reference.solution))

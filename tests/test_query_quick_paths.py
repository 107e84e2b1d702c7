"""The quick paths of the queries against the general ways they stand in for.

Oracles: the crossover's roots as ``sympy.solve`` + ``simplify`` + ``expand`` give them (the code
before the quick path, copied below), the growth order as the λ-polynomial way gives it
(``regime._general_order``), ``ceiling(log2(v))`` by SymPy, bytes per parameter by ``simplify``,
and the figure's points by ``evaluate`` with all bindings at once. Each pair must agree exactly:
the same expressions in the same form and order (``==``, structurally), hence the same printed
formulas and numbers.
"""

from __future__ import annotations

import importlib

import pytest
import sympy
from hypothesis import HealthCheck, given, settings, strategies as st

import symgpt
from symgpt.documents import latex_costs
from symgpt.documents.workload import report_model
from symgpt.core.errors import SymgptError
from symgpt.core.notation import notation as get_notation
from symgpt.query import select
from symgpt.query.regime import Regime, _general_order, _monomial_order, order
from symgpt.core.symbols import B, L, T, V, d, h

CX = importlib.import_module("symgpt.query.crossover")  # the module (the package exports the function)
SYMS = (d, L, V, h, B)
ROOTS = CX._roots.__wrapped__  # uncached, and kept from the spies below


def old_roots(diff, s):
    """``crossover._roots`` before the quick path: solve for a positive stand-in, then
    simplify and expand each root."""
    t = sympy.Dummy(s.name, positive=True)
    num, _ = sympy.fraction(sympy.together(diff.xreplace({s: t})))
    if not num.has(t):
        return None
    try:
        roots = sympy.solve(num, t)
    except NotImplementedError:
        return ()
    return tuple(sympy.expand(sympy.simplify(r)) for r in roots)


def same_roots(new, old):
    """*new* (``crossover._roots``) holds the roots of *old* (``old_roots``), in order: equal
    exactly, each a polynomial (or over a monomial) expanded as before, or a rational function
    over a sum written as one fraction (``crossover.one_fraction``, its denominator perhaps
    factored) where the old root was a sum of fractions over one denominator."""
    if new is None or old is None:
        return new is old
    if len(new) != len(old):
        return False
    for a, b in zip(new, old):
        if a == b:
            continue
        if sympy.cancel(a - b) != 0 or len(sympy.Add.make_args(a)) != 1 or not sympy.fraction(a)[1].free_symbols:
            return False
    return True


def quick_root(diff, s):
    """What the quick path alone says (None: it leaves the case to sympy.solve)."""
    t = sympy.Dummy(s.name, positive=True)
    num, _ = sympy.fraction(sympy.together(diff.xreplace({s: t})))
    return CX._linear_root(num, t)


# --- hypothesis: polynomials in T ----------------------------------------------------------
monomials = st.builds(lambda es: sympy.Mul(*[s ** e for s, e in zip(SYMS, es)]),
                      st.lists(st.integers(0, 2), min_size=len(SYMS), max_size=len(SYMS)))
nonzero = st.integers(-6, 6).filter(bool)
symbolic = st.lists(st.tuples(nonzero, monomials), min_size=1, max_size=2).map(
    lambda ts: sympy.Add(*[c * m for c, m in ts]))
integer = nonzero.map(sympy.Integer)


positive = st.lists(st.tuples(st.integers(1, 6), monomials), min_size=1, max_size=3).map(
    lambda ts: sympy.Add(*[c * m for c, m in ts]))


@st.composite
def crossing(draw):
    """``fast - slow`` as a crossover sees it, maybe divided by a monomial (per token): T^k·(a·T + b)
    with any coefficients; one that crosses (a monomial against positive terms, T = 6d + V/(2L)
    alike); one whose T-coefficient is a sum dividing the rest; or a general polynomial of
    degree 1 to 3 (symbolic coefficients up to degree 2, integers at degree 3)."""
    shape = draw(st.sampled_from(["linear", "crosses", "crosses", "divides", "general"]))
    coef = st.one_of(integer, symbolic)
    k = draw(st.integers(0, 2))
    if shape == "linear":
        poly = T ** k * (draw(coef) * T + draw(coef))
    elif shape == "crosses":
        poly = T ** k * (draw(st.integers(1, 6)) * draw(monomials) * T - draw(positive))
    elif shape == "divides":
        poly = T ** k * draw(positive) * (T - draw(positive))
    else:
        deg = draw(st.integers(1, 3))
        cs = [draw(coef if deg <= 2 else integer) if draw(st.booleans()) or i == deg else 0
              for i in range(deg + 1)]
        poly = sum(c * T ** i for i, c in enumerate(cs))
    per = draw(st.sampled_from([sympy.Integer(1), B * T, B, 2 * L]))
    return sympy.expand(poly / per)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crossing())
def test_roots_equal_solve_on_random_polynomials(diff):
    new = ROOTS(diff, T)
    assert same_roots(new, old_roots(diff, T))
    assert new is None or all(sympy.expand(r) == r or len(sympy.Add.make_args(r)) == 1 for r in new)


def test_quick_root_cases_by_hand():
    # 4LTd = 24Ld² at T = 6d; with the head, T = 6d + V/(2L); t = 0 is never a root
    assert quick_root(4 * L * T * d - 24 * L * d**2, T) == 6 * d
    assert quick_root(sympy.expand(T**2 * (4 * L * d) - T * (24 * L * d**2 + 2 * V * d)), T) \
        == 6 * d + V / (2 * L)
    assert quick_root(2 * T - (d + h), T) == d / 2 + h / 2       # over a number
    assert quick_root(sympy.expand((d + h) * T - (d + h) * (d + 3)), T) == d + 3  # a sum divides
    assert quick_root((d + h) * T - d, T) is None      # a rational function: left to solve
    assert quick_root(T - d + h, T) is None             # d - h: sign unknown, left to solve
    assert quick_root(T + 5, T) is None                 # negative: left to solve (which drops it)
    assert quick_root(T**2 - 5 * T + 6, T) is None      # a quadratic: left to solve
    assert ROOTS(T**2 - 5 * T + 6, T) == (2, 3)


# --- every crossover of the reports and of `symgpt crossover` on several presets ------------
PRESETS = {"gpt2-small": {}, "llama-7b": {}, "mixtral-8x7b": {}, "qwen3-30b-a3b": {},
           "bart-base": {}, "t5-small": {"T_enc": 512, "T_dec": 512}, "vit-base": {}}


def _captured(monkeypatch, module=CX, name="_roots"):
    """Every argument tuple *module.name* is called with (it still answers)."""
    calls = []
    real = getattr(module, name)

    def spy(*args):
        calls.append(args)
        return real(*args)
    monkeypatch.setattr(module, name, spy)
    return calls


def test_report_crossovers_equal_solve(monkeypatch):
    calls = _captured(monkeypatch)
    notation = get_notation(None)
    for name, sizes in PRESETS.items():
        m = report_model(symgpt.load(name, **sizes))
        latex_costs.flops(m, notation)                       # the LaTeX figure
        free = m.free(*m.sizes)                              # the HTML page's plot
        fwd = free.quantity("flops.forward")
        if T in fwd.expr.free_symbols:
            CX.crossover(fwd, T)
    report = sorted(set(calls), key=sympy.default_sort_key)
    assert len(report) >= 10
    for diff, s in report:
        assert same_roots(ROOTS(diff, s), old_roots(diff, s)), diff
        assert quick_root(diff, s) is not None, diff  # the report's crossovers take the quick path


@pytest.mark.parametrize("name", ["gpt2-small", "llama-7b", "t5-small"])  # MoE: in the report test
def test_cli_crossovers_equal_solve(monkeypatch, name):
    calls = _captured(monkeypatch)
    m = symgpt.load(name, B=8, **PRESETS.get(name, {}))
    for q, sym, part in (("flops.forward", "T", None), ("flops.forward", "T", "blocks"),
                         ("flops.forward", "T_enc", None), ("flops.train", "d", None),
                         ("memory.activations", "T", None), ("flops.forward", "L", None)):
        try:
            CX.crossover(m.quantity(q), sym, part=part)
        except SymgptError:
            pass  # no crossover here (one growth order, no such symbol): nothing was solved
    assert calls
    for diff, s in set(calls):
        assert same_roots(ROOTS(diff, s), old_roots(diff, s)), diff


# --- growth orders --------------------------------------------------------------------------
laurent = st.lists(st.tuples(nonzero, st.lists(st.integers(-2, 3), min_size=len(SYMS), max_size=len(SYMS))),
                   min_size=1, max_size=6).map(
    lambda ts: sympy.Add(*[c * sympy.Mul(*[s ** e for s, e in zip(SYMS, es)]) for c, es in ts]))
regimes = st.lists(st.tuples(st.sampled_from(SYMS), st.sampled_from([1, 2, sympy.Rational(1, 2),
                                                                     sympy.Rational(3, 2)])),
                   min_size=1, max_size=3, unique_by=lambda r: r[0]).map(
    lambda rs: Regime(tuple((s, sympy.Rational(r)) for s, r in rs)))


@settings(max_examples=150, deadline=None)
@given(laurent, regimes)
def test_monomial_order_equals_general_order(expr, regime):
    if expr == 0:
        return
    assert _monomial_order(expr, regime) == _general_order(expr, regime)


def test_monomial_order_declines_what_it_cannot_read():
    r = Regime(((T, sympy.Integer(1)),))
    assert _monomial_order(T * (T + d), r) is None             # not expanded
    assert _monomial_order(sympy.ceiling(T / 2) + d, r) is None  # a step: the general way
    assert order(sympy.ceiling(T / 2) + d, r) == (1, T / 2)


def test_report_orders_equal_general_order(monkeypatch):
    """Every order a report's dominance, rules and crossovers ask for."""
    from symgpt.query import regime as reg

    real = reg._monomial_order
    seen = _captured(monkeypatch, reg, "_monomial_order")
    reg.order.cache_clear()
    notation = get_notation(None)
    for name in ("gpt2-small", "mixtral-8x7b"):
        m = report_model(symgpt.load(name))
        latex_costs.rule(m, notation)
        latex_costs.flops(m, notation)
        from symgpt.query import dominance

        dominance(m.params, "d")
        dominance(m.quantity("flops.forward"), "T")
    reg.order.cache_clear()
    quick = [(e, r) for e, r in set(seen) if real(e, r) is not None]
    assert len(quick) >= 20
    for e, r in quick:
        assert real(e, r) == _general_order(e, r), e


# --- the FLOPs figure and the memory table ----------------------------------------------------
@given(st.integers(1, 10**30), st.integers(1, 10**12))
def test_ceil_log2_equals_sympy(p, q):
    v = sympy.Rational(p, q)
    assert latex_costs._ceil_log2(v) == int(sympy.ceiling(sympy.log(v, 2)))


@pytest.mark.parametrize("k", [-3, 0, 1, 12, 14, 60])
def test_ceil_log2_at_powers_of_two(k):
    v = sympy.Integer(2) ** k
    assert latex_costs._ceil_log2(v) == k == int(sympy.ceiling(sympy.log(v, 2)))
    assert latex_costs._ceil_log2(v + sympy.Rational(1, 10**9)) == k + 1


def test_points_equal_evaluate():
    from symgpt.derive.quantity import evaluate
    from symgpt.query.selection import unbind

    m = report_model(symgpt.load("gpt2-small"))
    q = select(m, "flops.forward", per="token")
    b = unbind(q, [T]).bindings
    at = latex_costs._at_T(b)
    for x in (128, 1024, 32768, sympy.Rational(27, 2)):
        assert at(q.expr, x) == evaluate(q.expr, {**b, T: sympy.Integer(x) if isinstance(x, int) else x})
    assert latex_costs._at_T({})(q.expr, 128) is None  # a symbol unbound: no value


def test_bytes_per_parameter_equal_simplify():
    from symgpt.families import presets

    ALL = presets()

    for name in ALL:
        m = symgpt.load(name)
        for what in ("memory.weights", "memory.gradients", "memory.optimizer"):
            e = m.quantity(what, **latex_costs.MEMORY_POLICY).expr
            quick, slow = latex_costs._ratio(e, m.params.expr), sympy.simplify(e / m.params.expr)
            assert quick == slow and quick.is_number == slow.is_number, (name, what)


def test_per_step_quantity_without_per_is_the_same_quantity():
    """The FLOPs section asks for the per-step quantities without ``per="batch"`` where the
    convention counts per step already: the same Quantity as with it (breakdown, label, notes)."""
    from symgpt.core.conventions import CONVENTIONS

    m = symgpt.load("gpt2-small", B=8, T=1024)
    batch = [c for c in CONVENTIONS.values() if c.per == "batch"]
    assert len(batch) >= 5
    for c in batch:
        for name in ("flops.forward", "flops.train", "flops.backward"):
            plain = m.quantity(name, convention=c.name)
            assert plain == m.quantity(name, convention=c.name, per="batch"), (c.name, name)
    assert m.quantity("flops.forward") == m.quantity("flops.forward", per="batch")

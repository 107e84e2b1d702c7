"""symgpt.derive.shortcuts builds the very trees SymPy builds, and the cached parameter bytes are
the uncached ones.

Oracles: SymPy itself -- ``sympy.Max(a, b)`` evaluated and ``sympy.expand(e)``, compared by
``srepr`` (the same tree, not just an equal value) on the arguments the report's step times
really pass and on hypothesis-generated expressions; ``param_bytes`` computed with its cache
emptied; and ZeRO's own arithmetic (Rajbhandari et al. 2020, Sec. 3 and 5): mixed-precision Adam
holds 2Ψ + 2Ψ + KΨ bytes, K = 12, divided by N_d at stage 3."""

import itertools

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symgpt
from symgpt.derive import inference_time, memory_states
from symgpt.derive.memory import setup as memory_setup
from symgpt.derive.shortcuts import _both_signs, expanded, is_expanded, roofline_max
from symgpt.core.symbols import BW_mem, F_peak, B, E, L, T, d, k

TP = sympy.Symbol("tp", integer=True, positive=True)
DP = sympy.Symbol("dp", integer=True, positive=True)


def same(a, b) -> bool:
    return sympy.srepr(a) == sympy.srepr(b)


# --- Max on the report's own arguments -------------------------------------------------------
def _step_maxima(monkeypatch, model, **options):
    seen = []

    def spy(a, b):
        seen.append((a, b, roofline_max(a, b)))
        return seen[-1][2]

    monkeypatch.setattr(inference_time, "roofline_max", spy)
    for phase in ("prefill", "decode"):
        inference_time.phase_time(model, phase, **options)
    return seen


@pytest.mark.parametrize("name, free, options, crossing", [
    ("gpt2-small", True, {}, 12),                       # the report's page: F_peak, BW_mem symbolic
    ("gpt2-small", False, {"hardware": "h100-sxm"}, 12),
    ("gpt2-small", False, {"convention": "scaling-book", "hardware": "a100-80gb"}, 2),
    ("mistral-7b", True, {"chips": 2}, 16),              # grouped-query attention, a sliding window
    ("mixtral-8x7b", False, {}, 18),                     # experts: Min(E, k·B) in the bytes
    ("deepseek-v2-lite", False, {"hardware": "h100-sxm"}, 40),  # latent attention, a dense first layer
    ("t5-small", False, {"attention": "flash"}, 30),
])
def test_roofline_max_is_sympys_max_on_the_report_steps(monkeypatch, name, free, options, crossing):
    m = symgpt.load(name)
    if free:
        m = m.free(*m.sizes)
    seen = _step_maxima(monkeypatch, m, **options)
    for a, b, got in seen:
        assert same(got, sympy.Max(a, b)), (a, b)
    # not vacuous: the cheap construction was taken where FLOPs and bytes cross (the matmuls)
    assert sum(_both_signs(a, b) for a, b, _ in seen) >= crossing


def test_roofline_max_falls_back_where_sympy_decides():
    x = 2 * B * T * d / F_peak
    cases = [(sympy.Integer(0), 4 * B * T * d / BW_mem),            # 0 against bytes: the bytes
             (x, x + B / F_peak),                                    # one provably larger
             (x, x),                                                 # the same
             (x, sympy.Max(x, B / BW_mem)),                          # a Max argument is flattened
             (B * sympy.Min(E, k * B) / BW_mem, 3 * B * d / F_peak),
             (sympy.Symbol("z") * x, B / BW_mem),                    # a symbol of any sign
             (sympy.Symbol("n", negative=True) * x, B / BW_mem),
             (sympy.Float(2.5) * x, B / BW_mem)]
    for a, b in cases:
        assert same(roofline_max(a, b), sympy.Max(a, b)), (a, b)
    assert not _both_signs(x, x + B / F_peak)
    assert not _both_signs(sympy.Symbol("n", negative=True) * x, B / BW_mem)
    assert _both_signs(x, B * d / BW_mem)


# --- hypothesis: positive polynomials and more -----------------------------------------------
SYMBOLS = (B, T, d, F_peak, BW_mem, TP)


@st.composite
def monomials(draw, signed=True):
    num = draw(st.integers(-7 if signed else 1, 7).filter(lambda n: n != 0))
    c = sympy.Rational(num, draw(st.integers(1, 5)))
    for s in draw(st.lists(st.sampled_from(SYMBOLS), max_size=3)):
        c = c * s ** draw(st.integers(-1, 3))
    return c


@st.composite
def polynomials(draw, signed=True):
    return sympy.Add(*draw(st.lists(monomials(signed), min_size=1, max_size=4)))


@st.composite
def max_arguments(draw):
    a = draw(polynomials(signed=draw(st.booleans())))
    kind = draw(st.sampled_from(["poly", "shifted", "scaled", "min", "zero"]))
    if kind == "poly":
        b = draw(polynomials(signed=draw(st.booleans())))
    elif kind == "shifted":                                          # provably larger or smaller
        b = a + draw(monomials(signed=False)) * draw(st.sampled_from([1, -1]))
    elif kind == "scaled":
        b = a * draw(monomials(signed=False))
    elif kind == "min":
        b = sympy.Min(E, k * B) * draw(monomials(signed=False)) + draw(polynomials())
    else:
        b = sympy.Integer(0)
    return (a, b) if draw(st.booleans()) else (b, a)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(max_arguments())
def test_roofline_max_is_sympys_max_on_generated_arguments(args):
    a, b = args
    got, want = roofline_max(a, b), sympy.Max(a, b)
    if same(got, want):
        return
    # Where they differ, SymPy's Max must be the one that is wrong: it decides some comparisons of
    # positive-integer symbols wrongly (Max(2/(B*T), 1) is 2/(B*T), false at B = T = 2). The
    # oracle then is the maximum itself, at points of every symbol from 1 to 64.
    symbols = sorted((a - b).free_symbols | got.free_symbols, key=str)
    wrong = False
    for values in itertools.product((1, 2, 3, 64), repeat=len(symbols)):
        point = dict(zip(symbols, values))
        true = max(a.xreplace(point), b.xreplace(point))
        assert got.xreplace(point) == true, point
        wrong |= want.xreplace(point) != true
    assert wrong, (got, want)


@st.composite
def expressions(draw, depth=2):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.one_of(monomials(), polynomials()))
    parts = draw(st.lists(expressions(depth=depth - 1), min_size=1, max_size=3))
    how = draw(st.sampled_from(["add", "mul", "mul", "mul", "square", "over", "max"]))
    if how == "add":
        return sympy.Add(*parts)
    if how == "mul":
        return sympy.Mul(*parts)
    if how == "square":
        return parts[0] ** 2
    if how == "over":
        return parts[0] / (draw(monomials(signed=False)) + B)
    return sympy.Max(*parts) * draw(monomials())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions())
def test_expanded_is_sympys_expand(e):
    assert same(expanded(e), sympy.expand(e))
    if is_expanded(e):
        assert same(sympy.expand(e), e)


@st.composite
def products(draw):
    """Sums of products of polynomials (a size times a block's sum, an op's bytes over BW_mem)."""
    terms = []
    for _ in range(draw(st.integers(1, 3))):
        factors = draw(st.lists(polynomials(), min_size=1, max_size=3))
        if draw(st.booleans()):
            factors.append(sympy.Max(*draw(st.lists(polynomials(), min_size=1, max_size=2))))
        terms.append(sympy.Mul(*factors))
    return sympy.Add(*terms)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(products())
def test_expanded_multiplies_out_as_expand_does(e):
    assert same(expanded(e), sympy.expand(e))


def test_expanded_on_what_the_derivations_pass():
    cases = [(8 * B * L * T * d + L * (6 * d**2 + 6 * d)) / BW_mem,   # an op's bytes over bandwidth
             L * (2 * B * T * d + 4 * B * d + 2 * B * d * (T + 1)) / BW_mem,
             2 * B * T * d / F_peak + sympy.Max(B * d / F_peak, 2 * B / BW_mem),  # a step time's total
             4 * (3 * d**2 * L + d) / (TP * DP),                      # a sharded parameter's bytes
             (B + 1) ** 2 * d, d / (TP + 1), sympy.Integer(0), sympy.Float(0.5) * d]
    for e in cases:
        assert same(expanded(e), sympy.expand(e)), e


# --- parameter bytes: cached = computed afresh ---------------------------------------------------
@pytest.mark.parametrize("name, extra", [("gpt2-small", {"pp": 4, "stage": "last", "tp": 2}),
                                         ("mixtral-8x7b", {"dp": 4, "ep": 2, "zero": 1})])
def test_cached_param_bytes_are_the_uncached_ones(name, extra):
    m = symgpt.load(name)
    layouts = [{}, {"tp": TP, "dp": DP}, {"tp": 2, "dp": 4, "zero": 3}, {"pp": 2, "stage": "last"}, extra]
    asks = [(opts, per, zero_from) for opts in layouts for per in (1, 2, 4) for zero_from in (1, 3)]
    fresh = []
    for opts, per, zero_from in asks:
        memory_states._param_bytes.cache_clear()
        fresh.append(memory_states.param_bytes(memory_setup(m, **opts), per, zero_from))
    memory_states._param_bytes.cache_clear()
    for _ in range(2):  # the second round is answered from the cache
        for (opts, per, zero_from), want in zip(asks, fresh):
            got = memory_states.param_bytes(memory_setup(m, **opts), per, zero_from)
            assert [p for p, _ in got] == [p for p, _ in want]
            assert all(same(g, w) for (_, g), (_, w) in zip(got, want))


def test_zero_stage3_states_are_the_papers_16_psi_over_nd():
    m = symgpt.load("gpt2-small")
    psi = 124_439_808  # GPT-2 small's parameters (the tied head counted once)
    for zero, want in ((0, 16 * psi), (1, 4 * psi + 12 * sympy.Rational(psi, 8)),
                       (3, sympy.Rational(16 * psi, 8)), (0, 16 * psi)):  # a repeat: from the cache
        got = sum(m.quantity(q, precision="mixed-fp16", optimizer="adam", zero=zero, dp=8).value
                  for q in ("memory.weights", "memory.gradients", "memory.optimizer"))
        assert got == want

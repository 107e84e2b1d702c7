"""symgpt.render.mathml against its oracle, SymPy 1.14's own presentation MathML printer (with the
page's settings: terms in grlex order, a centred dot): equal strings, for every formula the
interactive page of a spread of presets holds, and for random sums, products, fractions and
powers over symgpt's symbols. The fast path must really be taken for all of these (a fallback to
SymPy would pass trivially); nodes outside its subset must fall back and still print the same."""

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symgpt
from symgpt.documents.html import DP, TP, page
from symgpt.render import mathml
from symgpt.render.html_js import mathml_expr
from symgpt.core.symbols import CANONICAL, HARDWARE_SYMBOLS

ORACLE = mathml.sympy_presentation


def sympy_mathml(e):
    """The oracle, spelt out: what the page printed before this printer existed."""
    from sympy.printing.mathml import mathml as sympy_printer

    return sympy_printer(e, printer="presentation", order="grlex", mul_symbol="dot")


@pytest.fixture
def no_fallback(monkeypatch):
    """presentation() must print it itself: SymPy's printer may not be called."""
    def refuse(e):
        raise AssertionError(f"fell back to SymPy's printer for {e}")

    monkeypatch.setattr(mathml, "sympy_presentation", refuse)


# --- every formula of the page, for a spread of presets -------------------------------------------
SETS = {"t5-small": dict(T_enc=512, T_dec=128), "bart-base": dict(T_enc=512, T_dec=128),
        "transformer-base": dict(T_enc=256, T_dec=256)}
PRESETS = ["gpt2-small",  # learned positions, tied head
           "llama-70b",  # GQA, SwiGLU, RMSNorm
           "mixtral-8x7b",  # MoE, sliding window
           "deepseek-v2-lite",  # MLA, shared + routed experts
           "gemma-2-9b",  # local/global attention, soft-capping
           "bert-base", "t5-small", "bart-base", "transformer-base",  # encoders, encoder-decoders
           "vit-base"]  # patches, no vocabulary


@pytest.mark.parametrize("name", PRESETS)
def test_every_formula_of_the_page_prints_as_sympy_prints_it(name, monkeypatch):
    exprs = page(symgpt.load(name, **SETS.get(name, {}))).exprs.items
    expected = [sympy_mathml(e) for e in exprs]
    assert len(set(expected)) > 50  # the page's formulas, not a handful
    mathml._KEYS.clear()
    monkeypatch.setattr(mathml, "sympy_presentation", lambda e: pytest.fail(f"fell back for {e}"))
    got = [mathml.presentation(e) for e in exprs]
    for e, a, b in zip(exprs, expected, got):
        assert b == a, e
    assert [mathml_expr(e) for e in exprs[:3]] == [f'<math display="inline">{a}</math>' for a in expected[:3]]


# --- by hand: what SymPy writes, spelt out ----------------------------------------------------------
def test_the_markup_spelt_out(no_fallback):
    B, L, T, T_max, d = (CANONICAL[n] for n in ("B", "L", "T", "T_max", "d"))
    F = HARDWARE_SYMBOLS["F_peak"]
    dot = "<mo>&#xB7;</mo>"
    assert mathml.presentation(3 * L * d**2 + T_max * d) == (
        f"<mrow><mrow><mn>3</mn>{dot}<mi>L</mi>{dot}<msup><mi>d</mi><mn>2</mn></msup></mrow>"
        f"<mo>+</mo><mrow><msub><mi>T</mi><mi>max</mi></msub>{dot}<mi>d</mi></mrow></mrow>")
    assert mathml.presentation(-B * T / (2 * F)) == (
        f"<mrow><mo>-</mo><mfrac><mrow><mi>B</mi>{dot}<mi>T</mi></mrow>"
        f"<mrow><mn>2</mn>{dot}<msub><mi>F</mi><mi>peak</mi></msub></mrow></mfrac></mrow>")
    assert mathml.presentation(sympy.floor(T / 3)) == (
        "<mrow><mo>&#8970;</mo><mrow><mfrac><mi>T</mi><mn>3</mn></mfrac></mrow><mo>&#8971;</mo></mrow>")
    assert mathml.presentation(sympy.floor(T / 3)) == sympy_mathml(sympy.floor(T / 3))


# --- random expressions over symgpt's symbols -------------------------------------------------------
SYMBOLS = [*CANONICAL.values(), *HARDWARE_SYMBOLS.values(), TP, DP]
symbols = st.sampled_from(SYMBOLS)
integers = st.integers(-60, 60).filter(bool).map(sympy.Integer)
rationals = st.builds(sympy.Rational, st.integers(-40, 40).filter(bool), st.integers(2, 12))
exponents = st.sampled_from([2, 3, -1, -2, -3, sympy.Rational(1, 2), sympy.Rational(-1, 2), sympy.Rational(3, 2),
                             sympy.Rational(1, 3), sympy.Rational(-2, 3), sympy.Rational(5, 4)])


@st.composite
def monomials(draw):
    c = draw(st.one_of(integers, rationals, st.just(sympy.S.One), st.just(sympy.S.NegativeOne)))
    return c * sympy.Mul(*(s ** x for s, x in draw(st.lists(st.tuples(symbols, exponents | st.just(1)),
                                                            max_size=4))))


def polynomials():
    return st.lists(monomials(), min_size=1, max_size=6).map(lambda ts: sympy.Add(*ts))


def _has_symbol(e):
    return bool(e.free_symbols)


def combine(children):
    sym = children.filter(_has_symbol)
    real = sym.filter(lambda e: e.is_extended_real)  # max and min compare their arguments
    return st.one_of(
        st.builds(lambda a, b: a + b, children, children),
        st.builds(lambda a, b: a * b, children, children),  # products of sums stay unexpanded
        st.builds(lambda a, b: a / b, children, sym),
        st.builds(lambda a, x: a ** x, sym, exponents),
        st.builds(lambda c, a: c * a, integers | rationals, children),
        st.builds(sympy.Max, real, real), st.builds(sympy.Min, real, real),
        st.builds(lambda a, b: sympy.floor(a / b), sym, sym),
        st.builds(lambda a, b: sympy.ceiling(a / b), sym, sym),
    )


#: the node types the printer prints itself
SUBSET = (sympy.Symbol, sympy.Rational, sympy.Add, sympy.Mul, sympy.Pow, sympy.Max, sympy.Min, sympy.floor,
          sympy.ceiling)
expressions = st.recursive(polynomials() | symbols | integers | rationals, combine, max_leaves=12)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(polynomials())
def test_random_polynomials_print_as_sympy_prints_them(e):
    expected = ORACLE(e)
    assert expected == sympy_mathml(e)
    calls = []
    got = _tracked(e, calls)
    assert got == expected
    assert not calls, "a polynomial over symgpt's symbols is printed without SymPy's printer"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions)
def test_random_expressions_print_as_sympy_prints_them(e):
    expected = ORACLE(e)
    calls = []
    assert _tracked(e, calls) == expected
    if calls:  # only a node outside the subset (Abs, zoo, a power of a number: sqrt(2)) may send it to SymPy
        nodes = list(sympy.preorder_traversal(e))
        assert any(not isinstance(n, SUBSET) or (n.is_Pow and n.base.is_number) for n in nodes), e


def _tracked(e, calls):
    def counted(x):
        calls.append(x)
        return ORACLE(x)

    saved = mathml.sympy_presentation
    mathml.sympy_presentation = counted
    try:
        return mathml.presentation(e)
    finally:
        mathml.sympy_presentation = saved


# --- symbol names: subscripts, digits, superscripts, Greek letters ----------------------------------
names = st.from_regex(r"[A-Za-z]{1,6}([_^][A-Za-z0-9]{1,4}){0,3}[0-9]{0,2}", fullmatch=True) | st.sampled_from(
    ["alpha", "Psi_kv", "beta2", "x__1", "lambda_max^2", "T_max_mem", "d_ff2", "sigma^2_x", "", "x_", "_x", "x^",
     "a b", "x<y", "a&b", "\u00e9t\u00e9_2", "2x"])


@settings(max_examples=200, deadline=None)
@given(names, st.sampled_from([{}, {"positive": True}, {"integer": True, "positive": True}]))
def test_symbol_names_print_as_sympy_prints_them(name, assumptions):
    s = sympy.Symbol(name, **assumptions)
    for e in (s, 2 * s**2 / CANONICAL["d"], s + CANONICAL["L"]):
        assert mathml.presentation(e) == ORACLE(e)


# --- outside the subset: SymPy prints it ------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda d: d * sympy.pi, lambda d: sympy.Float("1.5") * d, lambda d: sympy.sin(d) + d,
    lambda d: sympy.sqrt(2) * d, lambda d: sympy.I * d + 1, lambda d: sympy.Dummy("x") + d,
    lambda d: sympy.Symbol("A", commutative=False) * d, lambda d: sympy.log(d) / d, lambda d: d ** d,
    lambda d: sympy.oo + 0 * d, lambda d: sympy.Abs(d - 3),
])
def test_other_nodes_fall_back_to_sympy(make):
    e = make(CANONICAL["d"])
    calls = []
    assert _tracked(e, calls) == sympy_mathml(e)
    assert calls == [e]

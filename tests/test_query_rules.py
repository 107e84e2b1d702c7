"""Rules (leading-order forms) against the seeds' rules and numbers, computed here by hand.

Oracles: lecture note 7.3 (§4.1 per-block table, §4.4 rule, §5.1 FLOPs per block, self-test (b)),
lesson LM4-T5 ("P ≈ 12·N·d²"), and conventions.md §1 (Kaplan: C_forward = 2N + 2·L·T·d, 6N).
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.query import Regime, order, parse_regime, rewrite, rule, select
from symgpt.core.symbols import L, T, T_max, V, d, h

N = sympy.Symbol("N", positive=True)


def note73_block(d: int) -> int:
    """Lecture note 7.3 §4.1, the per-block table summed row by row."""
    return (2 * d) + (3 * d * d) + (3 * d) + (d * d) + d + (2 * d) + (4 * d * d) + (4 * d) \
        + (4 * d * d) + d


def note73_total(L: int, d: int, V: int, T_max: int) -> int:
    """Lecture note 7.3 §4.1-4.3: L blocks + token table + position table + final LayerNorm."""
    return L * note73_block(d) + V * d + T_max * d + 2 * d


# --- which regime gives which rule (symbolic, GPT-2 family with every size free) ---------

RULES = [
    # (quantity, part, regime, expected leading form: the textbook rule)
    ("params", None, "d", 12 * L * d**2),                       # lesson LM4-T5: 12·N·d² (N blocks)
    ("params", "blocks", "d", 12 * L * d**2),                   # Kaplan's N
    ("params", "blocks", "d,L", 12 * L * d**2),
    ("params", None, ["d", "V"], V * d + 12 * L * d**2),        # lecture note 7.3 §7.2: Vd + 12Ld²
    ("params", None, "d,L,V:2", V * d + 12 * L * d**2),
    ("params", None, "V", V * d),
    ("params", None, "T_max", T_max * d),
]


@pytest.mark.parametrize("quantity,part,regime,expected", RULES)
def test_textbook_rules_are_leading_orders(quantity, part, regime, expected):
    q = select("gpt2", quantity, part)
    assert sympy.expand(rule(q, regime).rule - expected) == 0


def test_note73_rule_within_one_percent():
    """Lecture note 7.3 §4.4: Vd + 12Ld² + 2d = 123,533,568, within 1 % of 124,439,808."""
    exact = note73_total(12, 768, 50257, 1024)
    assert exact == 124_439_808
    m = symgpt.load("gpt2-small")
    r = rule(m.params, ["d", "V"])
    assert r.rule_value + 2 * 768 == 123_533_568 == 50257 * 768 + 12 * 12 * 768**2 + 2 * 768
    assert r.exact_value == exact
    err = Fraction(123_533_568 - exact, exact)
    assert abs(err) < Fraction(1, 100)
    # the rule without the seed's +2d, exactly
    assert r.relative_error == sympy.Rational(50257 * 768 + 12 * 12 * 768**2 - exact, exact)


def test_self_test_b_rule_vs_exact():
    """Lecture note 7.3 self-test (b): d=4096, L=32, V=50000, T_max=2048."""
    d_, L_, V_, Tm = 4096, 32, 50000, 2048
    estimate = V_ * d_ + 12 * L_ * d_**2          # the Vd + 12Ld² rule
    assert estimate == 6_647_250_944              # 204,800,000 + 6,442,450,944
    exact = note73_total(L_, d_, V_, Tm)         # §4.1: biases and LayerNorms included
    assert note73_block(d_) == 201_379_840
    assert exact == 6_657_351_680                 # 32 x 201,379,840 + 204,800,000 + 8,388,608 + 8,192
    m = symgpt.load("gpt2", d=d_, L=L_, V=V_, T_max=Tm, h=32)
    r = rule(m.params, "d,V")
    assert r.rule_value == estimate
    assert r.exact_value == exact
    assert r.relative_error == sympy.Rational(estimate - exact, exact)   # about -0.15 %
    assert -0.0016 < float(r.relative_error) < -0.0015


def test_relative_error_is_signed_and_exact():
    m = symgpt.load("gpt2-small")
    r = rule(m.params, "d")
    assert r.rule_value == 12 * 12 * 768**2
    assert r.relative_error == sympy.Rational(12 * 12 * 768**2 - 124_439_808, 124_439_808)
    assert r.correction == 13 * L * d + V * d + T_max * d + 2 * d


def test_unbound_relative_error_is_none():
    r = rule(symgpt.load("gpt2").params, "d")
    assert r.relative_error is None and r.rule_value is None


def test_padded_vocabulary_ceiling_is_leading_order_V():
    m = symgpt.load("gpt2", vocab_multiple=64)
    r = rule(m.params, "d,V")
    assert sympy.expand(r.rule - (V * d + 12 * L * d**2)) == 0
    assert r.notes and "ceiling" in r.notes[0]


# --- FLOPs rules: lecture note 7.3 §5.1, Kaplan §1 --------------------------------------------------

def test_per_block_forward_flops_rule_note73():
    """24Td² + 4T²d per block per sequence (d, T growing together), = 1.771e10 at T=1024."""
    q = select(symgpt.load("gpt2-small", T=1024), "flops.forward", "blocks", True, per="sequence")
    r = rule(q, "d,T")
    assert sympy.expand(r.rule - (24 * T * d**2 + 4 * T**2 * d)) == 0
    assert r.rule_value == 24 * 1024 * 768**2 + 4 * 1024**2 * 768 == 17_716_740_096
    assert abs(float(r.rule_value) / 1.771e10 - 1) < 1e-3   # the seed's 1.771 × 10¹⁰


def test_kaplan_forward_is_2N_plus_2LTd():
    """conventions.md §1: C_forward = 2N + 2·n_layer·n_ctx·d_attn per token, N = 12Ld²."""
    q = select("gpt2", "flops.forward", convention="kaplan", per="token")
    r = rule(q, "d,T")
    assert r.in_terms_of("N", 12 * L * d**2) == 2 * N + 2 * L * T * d


def test_kaplan_training_is_6N():
    """conventions.md §1: training C ≈ 6N per token (the context term dropped: d ≫ T/12)."""
    q = select("gpt2", "flops.train", convention="kaplan", per="token")
    r = rule(q, "d")
    assert r.in_terms_of("N", 12 * L * d**2) == 6 * N
    assert sympy.expand(r.correction - 6 * L * T * d) == 0


# --- regimes and rewriting -------------------------------------------------------------------

def test_regime_parsing():
    r = parse_regime(["d", "L:1/2", "V:2"])
    assert r.rates == ((d, 1), (L, sympy.Rational(1, 2)), (V, 2))
    assert r.describe() == "d, L, V → ∞ with L ∝ d¹ᐟ², V ∝ d²"
    assert order(V * d + L * d**2, r) == (sympy.Rational(3), V * d)


@pytest.mark.parametrize("bad", ["", "x", "d,d", "d:0", "d:-1", "d:h", "d:__import__('os')",
                                 "d:6e9", "d:1/1000", "d,V:1/16,L:1/15,h:1/13"])
def test_bad_regimes_refused(bad):
    with pytest.raises(SymgptError):
        parse_regime(bad)


def test_rational_functions_order():
    # d/h -> oo as d grows; the leading form of (d**2 + d)/(d + h) is d
    assert order((d**2 + d) / (d + h), Regime(((d, sympy.Integer(1)),))) == (1, d)


def test_rewrite_checks_itself():
    assert rewrite(72 * L * d**2 + 6 * L * T * d, "N", 12 * L * d**2) == 6 * N + 6 * L * T * d
    assert rewrite(6 * L * T * d, "N", 12 * L * d**2) == 6 * L * T * d   # nothing to replace
    with pytest.raises(SymgptError):
        rewrite(d, "N", sympy.Integer(3))

"""Dominance (growth order, share limits) and ranking at a configuration, against lecture note 7.3's
self-tests (a), (d), (e) computed here by hand from its §4.1-4.3 tables."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.query import dominance, rank_terms, ranking, select
from symgpt.core.symbols import L, T_max, V, d


def note73_total(L: int, d: int, V: int, T_max: int) -> int:
    block = 2 * d + 3 * d * d + 3 * d + d * d + d + 2 * d + 4 * d * d + 4 * d + 4 * d * d + d
    return L * block + V * d + T_max * d + 2 * d


def test_params_terms_by_growth_in_d():
    dm = dominance(symgpt.load("gpt2").params, "d")
    assert [t.order for t in dm.terms] == [2, 1]
    assert dm.dominant == 12 * L * d**2
    assert sympy.expand(dm.terms[1].expr - (13 * L * d + V * d + T_max * d + 2 * d)) == 0


def test_embedding_share_vanishes_as_d_grows():
    dm = dominance(symgpt.load("gpt2").params, "d")
    assert dm.share("embedding") == 0
    # the blocks' limit shares are their d² coefficients over 12: qkv 3/12, proj 1/12, ffn 8/12
    assert dm.share("blocks/attention/qkv") == sympy.Rational(1, 4)
    assert dm.share("blocks/ffn") == sympy.Rational(2, 3)
    assert dm.share("blocks") == 1


def test_embedding_share_when_V_grows_with_d():
    dm = dominance(symgpt.load("gpt2").params, "d,V")
    assert sympy.simplify(dm.share("embedding/token") - V / (V + 12 * L * d)) == 0


@pytest.mark.parametrize("name,L_,d_,T_max_,low,high", [
    ("gpt2-small", 12, 768, 1024, 0.3095, 0.3105),  # lesson LM4-T5's bar: "token emb. 31.0%"
    ("gpt3-175b", 96, 12288, 2048, 0.0030, 0.0040),  # about a third of a percent
])
def test_self_test_e_embedding_share(name, L_, d_, T_max_, low, high):
    """Lecture note 7.3 (e): V·d over the total, GPT-2-small vs GPT-3-175B (V = 50,257)."""
    exact = Fraction(50257 * d_, note73_total(L_, d_, 50257, T_max_))
    m = symgpt.load(name)
    top = {r.name: r for r in ranking(m.params)}
    assert top["embedding/token"].value == 50257 * d_
    assert top["embedding/token"].share == sympy.Rational(exact.numerator, exact.denominator)
    assert low < float(exact) < high


def test_self_test_e_share_falls_with_scale():
    small = ranking(symgpt.load("gpt2-small").params)
    big = ranking(symgpt.load("gpt3-175b").params)
    share = lambda rows: next(r.share for r in rows if r.name == "embedding/token")  # noqa: E731
    assert share(small) > 80 * share(big)
    assert small[0].name == "embedding/token"          # the largest single entry of GPT-2-small
    assert big[0].name == "blocks/ffn/up"              # ... but not of GPT-3-175B


def test_self_test_a_largest_term_of_a_block():
    """Lecture note 7.3 (a): the per-block table's largest rows are W_1 and W_2 (4d² = 2,359,296)."""
    q = select("gpt2-small", "params", "blocks", True)
    rows = ranking(q)
    assert [r.name for r in rows[:2]] == ["blocks/ffn/up", "blocks/ffn/down"]
    assert rows[0].value == 2_359_296 + 3_072           # W_1 + b_1
    assert rows[1].value == 2_359_296 + 768             # W_2 + b_2
    assert sum(r.value for r in rows) == 7_087_872      # the seed's per-block total
    assert rank_terms(q)[0].expr == 12 * d**2


def test_ranking_needs_bound_sizes():
    with pytest.raises(SymgptError, match="unbound"):
        ranking(symgpt.load("gpt2").params)


# --- activation memory: lecture note 7.3 §5.5 and self-test (d); Korthikanti's 5as²b ---------------

ACT = symgpt.load("gpt2-small", B=8, T=1024)


def test_self_test_d_attention_scores_are_the_largest_activation():
    """Lecture note 7.3 (d): the B·h·T² attention scores (8·12·1024² ≈ 1.0e8 entries per block)."""
    entries = 8 * 12 * 1024**2
    assert entries == 100_663_296
    for precision, nbytes in (("fp32", 4), ("mixed-fp16", 2)):
        q = ACT.quantity("memory.activations", precision=precision)
        top = ranking(q)[0]
        assert top.name == "blocks/attention/softmax"
        assert top.value == entries * nbytes * 12          # × L blocks
        per_block = ranking(select(ACT, "memory.activations", "blocks", True,
                                   precision=precision))[0]
        assert per_block.value == entries * nbytes


def test_activations_grow_as_h_T_squared():
    from symgpt.core.symbols import B, T, h

    dm = dominance(ACT.quantity("memory.activations"), "T")
    assert dm.terms[0].order == 2 and all(t.order < 2 for t in dm.terms[1:])
    lead = sympy.Poly(dm.dominant, T)
    assert lead.degree() == 2
    # the B·h·T² scores: 4 bytes (fp32) per entry per layer, plus the T×T bool causal mask
    assert sympy.expand(dm.dominant - (4 * B * h * T**2 * L + T**2 * L)) == 0
    share = dm.share("blocks/attention/softmax")
    assert sympy.simplify(share - 4 * B * h / (4 * B * h + 1)) == 0
    assert sympy.limit(share.subs(h, sympy.Symbol("x")), sympy.Symbol("x"), sympy.oo) == 1


def test_korthikanti_activations_dominated_by_5as2b():
    """conventions.md §4: per layer sbh(34 + 5as/h): the 5·a·s²·b term dominates as s grows."""
    from symgpt.core.symbols import B, T, h

    dm = dominance(ACT.quantity("memory.activations", convention="korthikanti"), "T")
    assert sympy.expand(dm.dominant - 5 * h * T**2 * B * L) == 0
    assert dm.share("blocks/attention") == 1

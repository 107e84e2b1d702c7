"""Crossovers against the seed's per-block FLOPs (24Td² + 4T²d) and LM head (2BTVd).

By hand: 4·B·T²·d = 24·B·T·d² at T = 6d (4,608 for d = 768); with the LM head,
4·B·L·T²·d = 24·B·L·T·d² + 2·B·T·V·d at T = 6d + V/(2L) (6,702 + 1/24 for GPT-2-small).
"""

from __future__ import annotations

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.query import crossover, outside, per_block, restrict, select, shift, solve_crossover
from symgpt.core.symbols import B, L, T, V, d

ATTENTION = "blocks/attention/scores,blocks/attention/values"
DENSE = "blocks/attention/qkv,blocks/attention/proj,blocks/ffn"

M = symgpt.load("gpt2-small")


def test_attention_overtakes_dense_at_6d():
    c = crossover(M.quantity("flops.forward"), "T", part="blocks")
    assert sympy.expand(c.fast - 4 * B * L * T**2 * d) == 0        # seed: 4T²d per block
    assert sympy.expand(c.slow - 24 * B * L * T * d**2) == 0       # seed: 24Td² per block
    assert c.solution == 6 * d
    assert c.value == 6 * 768 == 4608


def test_per_block_per_sequence_same_crossover():
    q = per_block(restrict(M.quantity("flops.forward", per="sequence"), "blocks"), M)
    c = crossover(q, T)
    assert c.solution == 6 * d and c.value == 4608


def test_lm_head_moves_the_crossover():
    whole = crossover(M.quantity("flops.forward"), "T")
    part = crossover(M.quantity("flops.forward"), "T", part="blocks")
    assert sympy.expand(whole.slow - (24 * B * L * T * d**2 + 2 * B * T * V * d)) == 0
    assert sympy.expand(whole.solution - (6 * d + V / (2 * L))) == 0
    assert whole.value == sympy.Rational(6 * 768) + sympy.Rational(50257, 2 * 12)
    moved = shift(whole, part)
    assert sympy.expand(moved - V / (2 * L)) == 0
    assert M.value(moved) == sympy.Rational(50257, 24)       # about 2,094 tokens later


def test_part_against_part():
    q = M.quantity("flops.forward")
    assert crossover(q, "T", part=ATTENTION, against=DENSE).value == 4608
    c = crossover(q, "T", part=ATTENTION, against=DENSE + ",lm_head")
    assert c.value == sympy.Rational(160849, 24)


def test_crossover_ignores_a_bound_T():
    c = crossover(symgpt.load("gpt2-small", T=1024, B=8).quantity("flops.forward"), "T",
                  part="blocks")
    assert c.value == 4608


def test_out_of_range_is_said():
    c = crossover(M.quantity("flops.forward"), "T", part="blocks")
    notes = outside(M, c)
    assert notes and "T_max" in notes[0]


def test_quadratic_crossover_takes_largest_positive_root():
    # T² - 5T + 6 crosses at 2 and 3; beyond 3 the T² side stays ahead
    roots, best = solve_crossover(T**2 + 6, 5 * T, T, {})
    assert set(roots) == {2, 3} and best == 3


@pytest.mark.parametrize("kwargs", [dict(part="nope"), dict(against="blocks"),
                                    dict(part="blocks", against="nope")])
def test_bad_parts_refused(kwargs):
    with pytest.raises(SymgptError):
        crossover(M.quantity("flops.forward"), "T", **kwargs)


def test_one_growth_order_has_no_crossover():
    with pytest.raises(SymgptError, match="one growth order"):
        crossover(select(M, "params", "blocks"), "V")


def test_a_critical_batch_is_one_grouped_fraction():
    """Llama 3 8B's decode step on an H100: the batch where compute time overtakes memory time,
    one fraction F_peak·(…)/(BW_mem·(…) − F_peak·(…)) -- equal to the roots ``sympy.solve``
    gives of compute = memory (each expanded: a sum of fractions over one denominator)."""
    from symgpt.core.symbols import BW_mem, F_peak

    m = symgpt.load("llama-3-8b", T=128)
    c = crossover(m.quantity("inference.decode.time", hardware="h100-sxm"), "B")
    t = sympy.Symbol("t", positive=True)
    num, _ = sympy.fraction(sympy.together(sympy.expand(c.fast - c.slow).xreplace({B: t})))
    solved = [sympy.expand(sympy.simplify(r)) for r in sympy.solve(num, t)]
    assert len(solved) == 1 and len(sympy.Add.make_args(solved[0])) > 1  # a sum of fractions
    assert sympy.cancel(c.solution - solved[0]) == 0
    assert c.solutions == (c.solution,)
    top, bottom = sympy.fraction(c.solution)
    assert not top.is_Add and top.has(F_peak) and not top.has(BW_mem)  # F_peak·(weights)
    groups = sympy.Add.make_args(bottom)                                   # BW_mem·(…) − F_peak·(…)
    assert len(groups) == 2 and {g.has(BW_mem) for g in groups} == {True, False}
    assert all(g.has(BW_mem) != g.has(F_peak) for g in groups)
    assert len(sympy.sstr(c.solution)) < len(sympy.sstr(solved[0])) / 5
    # at the configuration: compute time equals memory time there, exactly
    assert c.value == solved[0].subs(c.quantity.bindings)
    assert sympy.expand(c.fast - c.slow).subs({**c.quantity.bindings, B: c.value}) == 0


def test_result_reprs_are_short():
    c = crossover(M.quantity("flops.forward"), "T")
    assert repr(c) == "<crossover of flops.forward as T grows: T = 6*d + V/(2*L) = 160,849/24 ≈ 6,702.04>"
    m = symgpt.load("llama-3-8b", T=128)
    r = repr(crossover(m.quantity("inference.decode.time", hardware="h100-sxm"), "B"))
    assert "\n" not in r and len(r) < 400 and r.endswith("= 18,565,348,570,560/22,216,597,657 ≈ 835.652>")
    from symgpt.query import dominance, ranking

    assert repr(dominance(M.params, "d")) == "<dominance in params as d → ∞: 12*L*d**2 (order 2) = 84,934,656>"
    assert repr(ranking(M.params)[0]) == "<embedding/token: V*d = 38,597,376 (31.02%)>"

"""Time: lecture note 7.3's self-test (c), MFU, training time, and lesson LM4-T5's initial loss ln V."""

import math

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError

PEAK = 300 * 10**12  # lecture note 7.3 (c): "an A100 GPU at ~300 TFLOPs/s fp16"


def test_note73_self_test_c_gpt2_small():
    # ≈ 7 × 10¹² FLOPs per step / 3 × 10¹⁴ FLOP/s ≈ 23 ms
    m = symgpt.load("gpt2-small", B=8, T=1024)
    step = m.quantity("time.step", peak=PEAK)
    assert step.unit == "s" and step.value.is_Rational
    assert round(float(step.value) * 1000) == round(7e12 / 3e14 * 1000) == 23


def test_note73_self_test_c_gpt3_175b():
    # 6·N·D with N = 175 × 10⁹, D = 1024 · 2048 tokens: 2.2 × 10¹⁸ FLOPs, 7.3 × 10³ s at 300 TFLOP/s;
    # the derived count adds attention and the LM head: within 10 % of it
    m = symgpt.load("gpt3-175b", B=1024, T=2048)
    six_nd = 6 * 175e9 * 1024 * 2048
    assert round(six_nd / 1e17) == 22
    step = float(m.quantity("time.step", peak=PEAK).value)
    assert 1.0 < step / (six_nd / 3e14) < 1.1
    ratio = step / float(symgpt.load("gpt2-small", B=8, T=1024).quantity("time.step", peak=PEAK).value)
    assert 3e5 < ratio < 4e5  # GPT-3 175B's step is ~3.4 × 10⁵ GPT-2-small steps


def test_mfu_inverts_step_time():
    m = symgpt.load("gpt2-small", B=8, T=1024)
    at_40 = m.quantity("time.step", peak=PEAK, mfu=sympy.Rational(2, 5)).value
    assert m.quantity("time.mfu", measured=at_40, peak=PEAK).value == sympy.Rational(2, 5)
    tps = m.quantity("time.throughput", peak=PEAK, mfu=sympy.Rational(2, 5)).value
    assert tps == 8 * 1024 / at_40


def test_training_time_for_d_tokens():
    # D tokens cost (train FLOPs per token) × D; at one step's worth of tokens it is one step
    m = symgpt.load("gpt2-small", B=8, T=1024)
    one_step = m.quantity("time.training", tokens=8 * 1024, peak=PEAK).value
    assert one_step == m.quantity("time.step", peak=PEAK).value
    assert m.quantity("time.training", tokens=10**9, peak=PEAK, mfu=sympy.Rational(1, 2)).value == \
        2 * m.quantity("time.training", tokens=10**9, peak=PEAK).value


def test_lm4t5_initial_loss():
    # "The cross-entropy of a uniform guess is ln V, which is 10.82 for V = 50,257"; code: 10.825
    q = symgpt.load("gpt2-small").quantity("loss.initial")
    assert q.expr == sympy.log(sympy.Symbol("V", integer=True, positive=True))
    assert q.value == sympy.log(50257)
    assert round(float(q.value), 3) == 10.825 and math.floor(float(q.value) * 100) / 100 == 10.82


@pytest.mark.parametrize("options,message", [
    (dict(peak=0), "peak must be positive"),
    (dict(mfu=2), "mfu must be positive at most 1"),
    (dict(mfu="0.5"), "mfu must be a positive number"),
])
def test_bad_time_options(options, message):
    with pytest.raises(SymgptError, match=message):
        symgpt.load("gpt2-small", B=8, T=1024).quantity("time.step", **options)

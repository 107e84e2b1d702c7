"""A whole generation (``inference.generate.time``, ``ttft``, ``tpot``, ``tokens_per_s``) beyond
gpt2: a sliding window's cache of Min(W, t + 1) keys summed in closed form against an explicit loop
over the decode steps (each step's roofline time at its own cache length, exact Rationals), the
refusal of a bidirectional encoder (it generates nothing), and every preset with every inference
quantity: a value or one SymgptError, never another exception."""

import subprocess
import sys

import pytest
import sympy

import presetsample
import symgpt
from symgpt import SymgptError
from symgpt.derive.inference_time import _sum_term
from symgpt.model.model import quantity_names
from symgpt.families import presets
from symgpt.core.symbols import T

PRESETS = presets()

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
GENERATION = ("inference.generate.time", "inference.ttft", "inference.tpot", "inference.tokens_per_s")


def _loop(m, P, G, **opts):
    """The prefill at T = P plus each decode step over a cache of t = P .. P + G - 2 tokens, one by one."""
    pre = m.with_(T=P).quantity("inference.prefill.time", **opts).value
    step = m.quantity("inference.decode.time", **opts).expr.xreplace(m.quantity("inference.decode.time", **opts).bindings)
    steps = [step.xreplace({T: t}) for t in range(P, P + G - 1)]
    assert all(s.is_Rational for s in steps)
    return pre, steps


@pytest.mark.parametrize("B", [1, 64, 512])
def test_sliding_window_generation_crossing_the_window_equals_the_loop(B):
    # W = 8, a prompt of 5 and 20 new tokens: the cache holds 5, 6, ..., 23 tokens, the window's
    # Min(8, t + 1) turns at t = 7; at B = 512 the dense matmuls are compute-bound, so the
    # roofline's Max switches sides too
    m = symgpt.load("mistral-7b", B=B, W=8)
    opts = dict(hardware="h100-sxm")
    P, G = 5, 20
    pre, steps = _loop(m, P, G, **opts)
    # each step by its own quantity (no shared formula): the same numbers
    assert steps[0] == m.with_(T=P).quantity("inference.decode.time", **opts).value
    assert steps[-1] == m.with_(T=P + G - 2).quantity("inference.decode.time", **opts).value
    gen = m.quantity("inference.generate.time", prompt=P, generate=G, **opts).value
    assert gen.is_Rational and gen == pre + sum(steps)
    assert m.quantity("inference.ttft", prompt=P, generate=G, **opts).value == pre
    assert m.quantity("inference.tpot", prompt=P, generate=G, **opts).value == sum(steps) / (G - 1)
    assert m.quantity("inference.tokens_per_s", prompt=P, generate=G, **opts).value == B * G / gen
    # the window matters: the steps past it cost the same attention FLOPs as the step at it
    f = [m.with_(T=t).quantity("inference.decode.flops").values()["blocks/attention/scores"] for t in (7, 8, 20)]
    assert f[0] == f[1] == f[2] and f[0] == 2 * B * 32 * 4096 * 8


def test_mistral_generation_across_its_real_window_equals_the_loop():
    # W = 4096: a prompt of 4000 and 200 new tokens cross it at t = 4095
    m = symgpt.load("mistral-7b", B=4)
    for opts in (dict(hardware="h100-sxm"), dict(hardware="a100-80gb", chips=2, weight_bits=4, group_size=128)):
        P, G = 4000, 200
        pre, steps = _loop(m, P, G, **opts)
        assert m.quantity("inference.generate.time", prompt=P, generate=G, **opts).value == pre + sum(steps)


def test_scaling_book_generation_of_a_sliding_window():
    # KV bytes / BW_mem + max(FLOPs / F_peak, weight bytes / BW_mem): the KV cache's Min(T, W)
    m = symgpt.load("mistral-7b", B=2, W=8)
    opts = dict(hardware="h100-sxm", convention="scaling-book")
    pre, steps = _loop(m, 5, 20, **opts)
    assert m.quantity("inference.generate.time", prompt=5, generate=20, **opts).value == pre + sum(steps)


def test_sum_of_min_and_max_by_hand():
    t = sympy.Symbol("t", integer=True, positive=True)
    # sum_{t=1}^{10} Min(4, t): 1 + 2 + 3 + 4·7 = 34; sum_{t=1}^{10} Max(3·Min(4, t), 10 - t)
    assert _sum_term(sympy.Min(4, t), t, sympy.Integer(1), sympy.Integer(10)) == 34
    e = sympy.Max(3 * sympy.Min(4, t), 10 - t)
    assert _sum_term(e, t, sympy.Integer(1), sympy.Integer(10)) == sum(max(3 * min(4, k), 10 - k) for k in range(1, 11))
    assert _sum_term(e, t, sympy.Integer(3), sympy.Integer(2)) == 0
    # symbolic coefficients order nothing: the sum stays a Sum
    x = sympy.Symbol("x", positive=True)
    assert isinstance(_sum_term(sympy.Max(x * t, 1), t, sympy.Integer(1), sympy.Integer(5)), sympy.Sum)


@pytest.mark.parametrize("name", ["vit-base", "bert-base"])
def test_an_encoder_generates_nothing(name):
    m = symgpt.load(name, B=1)
    for q in GENERATION:
        with pytest.raises(SymgptError, match="bidirectional encoder"):
            m.quantity(q, prompt=5, generate=3, hardware="h100-sxm")


def test_cli_generation_of_an_encoder_is_one_line():
    r = subprocess.run([sys.executable, "-m", "symgpt", "infer", "vit-base", "--set", "B=1", "--hardware",
                        "h100-sxm", "--prompt", "5", "--generate", "3"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("symgpt: error: inference.generate.time needs")


INFERENCE = [n for n in quantity_names() if n.startswith("inference.")]


#: one preset a family (SYMGPT_ALL_PRESETS=1: every preset; tests/presetsample.py)
@pytest.mark.parametrize("preset", presetsample.sample(presetsample.family_of))
def test_every_preset_gives_every_inference_quantity_or_one_error(preset):
    m = symgpt.load(preset, B=2)
    lengths = {g.length.name: 16 for g in m.arch.stacks() if isinstance(g.length, sympy.Symbol)}
    m = m.with_(**lengths)
    for name in INFERENCE:
        opts = dict(hardware="h100-sxm")
        if name in GENERATION:
            opts.update(prompt=4, generate=3)
        try:
            q = m.quantity(name, **opts)
        except SymgptError as e:
            assert "\n" not in str(e)
            continue
        assert q.value is not None, (preset, name)


def test_a_decode_step_under_a_sliding_window_reads_the_window_only():
    # transformers' sliding-window cache layers keep the last W - 1 keys and values: a decode step
    # attends to Min(T + 1, W) of them. By hand, mistral (h_kv = 8 of h = 32 heads, d = 4096, bf16),
    # W = 8, B = 1, per layer: Q·Kᵀ reads the query (d) and K (W · d·h_kv/h), writes h·W scores
    m = symgpt.load("mistral-7b", B=1, W=8)
    L, d, h, hkv, W = 32, 4096, 32, 8, 8
    for t in (7, 100, 1000):
        got = m.with_(T=t).quantity("inference.decode.bytes")
        assert got.values()["blocks/attention/scores"] == L * 2 * (d + W * d * hkv // h + h * W)
        assert got.value == m.with_(T=7).quantity("inference.decode.bytes").value
    # below the window the cache holds T keys and the new one: T + 1
    got = m.with_(T=5).quantity("inference.decode.bytes").values()["blocks/attention/scores"]
    assert got == L * 2 * (d + 6 * d * hkv // h + h * 6)
    # without a window (llama-7b) every cached key is read
    ll = symgpt.load("llama-7b", B=1, T=100).quantity("inference.decode.bytes").values()["blocks/attention/scores"]
    assert ll == L * 2 * (d + 101 * d + h * 101)


def test_alternating_window_generation_equals_the_loop():
    # gemma-2: every other layer under a window of 4096, the rest global; P = 4000, G = 150 crosses it
    m = symgpt.load("gemma-2-9b", B=2)
    opts = dict(hardware="h100-sxm")
    pre, steps = _loop(m, 4000, 150, **opts)
    assert m.quantity("inference.generate.time", prompt=4000, generate=150, **opts).value == pre + sum(steps)

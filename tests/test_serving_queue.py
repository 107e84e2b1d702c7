"""TTFT percentiles of a disaggregated prefill pool (symgpt.derive.serving_queue): the M/D/1
waiting time's percentiles against hand-worked pieces of Erlang's distribution (P(W = 0) = 1 - ρ;
for t < D, (1 - ρ) e^{λt}; for D <= t < 2D, (1 - ρ)(e^{λt} - λ(t - D) e^{λ(t - D)})), solved here
in floats, and against a first-come-first-served queue simulated by Lindley's recursion."""

from __future__ import annotations

import json
import math
import random

import pytest
import sympy

from symgpt.derive import serving_queue as sq
from tests.clirun import run

R = sympy.Rational


def _bisect(f, lo, hi, p):
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if f(mid) >= p else (mid, hi)
    return hi


def test_below_one_minus_rho_nobody_waits():
    assert sq.wait_quantile(R(1, 2), R(1, 5), 1) == 0          # P(W = 0) = 0.8
    assert sq.wait_quantile(R(1, 2), R(1, 2), 1) == 0          # P(W = 0) = 0.5: the median waits 0


def test_the_first_prefill_interval_is_an_exponential():
    """λ = 1/5, D = 1: p90 solves 0.8 e^{t/5} = 0.9, t = 5 ln(9/8) (below D: 0.8 e^{0.2} = 0.977)."""
    got = sq.wait_quantile(R(9, 10), R(1, 5), 1)
    want = 5 * math.log(9 / 8)
    assert want <= float(got) < want + 2e-9


def test_the_second_prefill_interval_is_erlangs_two_terms():
    """λ = 1/2, D = 1: P(W <= 1) = 0.5 e^{0.5} = 0.824 < 0.9 <= P(W <= 2) = 0.947."""
    lam, D = 0.5, 1.0

    def cdf(t):
        return (1 - lam * D) * (math.exp(lam * t) - lam * (t - D) * math.exp(lam * (t - D)))

    want = _bisect(cdf, 1.0, 2.0, 0.9)
    got = sq.wait_quantile(R(9, 10), R(1, 2), 1)
    assert abs(float(got) - want) < 2e-9
    assert abs(float(sq.wait_cdf(R(3, 2), R(1, 2), 1)) - cdf(1.5)) < 1e-12


@pytest.mark.parametrize("lam", [0.5, 0.8])
def test_percentiles_match_a_simulated_queue(lam):
    """D = 1, Poisson arrivals at λ: 400,000 prompts through Lindley's recursion; the p90 and p99
    waits within 4 %."""
    rng, w, waits = random.Random(11), 0.0, []
    for _ in range(400_000):
        waits.append(w)
        w = max(0.0, w + 1.0 - rng.expovariate(lam))
    waits.sort()
    for p in (0.9, 0.99):
        sim = waits[int(p * len(waits))]
        got = float(sq.wait_quantile(R(p).limit_denominator(100), R(lam).limit_denominator(100), 1))
        assert abs(got - sim) < 0.04 * sim, (p, got, sim)


def test_a_saturated_queue_is_refused():
    with pytest.raises(Exception, match="λD < 1"):
        sq.wait_cdf(1, 1, 1)


def test_serve_reports_ttft_percentiles_at_the_target_rate():
    r = run(["serve", "llama-7b", "--hardware", "h100-sxm", "--set", "T=2048", "--set", "B=8", "--disaggregate",
             "--prompt", "1000", "--generate", "20", "--ttft", "0.05", "--tpot", "0.02", "--json"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    rate = sympy.Rational(out["serving.disagg.prefill_rate"]["exact_value"])
    p = [sympy.Rational(out[f"serving.disagg.ttft_p{q}"].get("exact_value", out[f"serving.disagg.ttft_p{q}"]["value"]))
         for q in (50, 90, 99)]
    assert p[0] <= p[1] <= p[2]
    # D from the mean: the rate solves D + λD²/(2(1 - λD)) = 0.05 (Pollaczek-Khinchine)
    D = min(s for s in sympy.solve(sympy.Symbol("D") + rate * sympy.Symbol("D") ** 2 /
                                   (2 * (1 - rate * sympy.Symbol("D"))) - sympy.Rational(1, 20),
                                   sympy.Symbol("D")) if s > 0)
    for q, v in zip((50, 90, 99), p):
        assert v == D + sq.wait_quantile(R(q, 100), rate, D)

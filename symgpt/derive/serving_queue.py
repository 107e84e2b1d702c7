"""Percentiles of the time to first token of a disaggregated prefill pool: the M/D/1 queue.

A prefill instance serves one prompt at a time in D seconds; prompts arrive as a Poisson stream
of rate λ (DistServe, Zhong et al. 2024, Sec. 3.1). The waiting time W in the queue has the
distribution Erlang derived (1909; Crommelin 1932): with ρ = λD < 1 and n = floor(t / D),

    P(W <= t) = (1 - ρ) · Σ_{k=0..n} (λ(kD - t))^k / k! · e^{-λ(kD - t)},

so P(W = 0) = 1 - ρ, and for t < D, P(W <= t) = (1 - ρ) e^{λt}. The TTFT is D + W. A percentile
p is the least t with P(W <= t) >= p: 0 when p <= 1 - ρ, else found by bisection on the exact
distribution, evaluated with enough digits for the alternating sum (mpmath: the terms grow as
e^{λt} while the sum stays below 1), and reported rounded up to the nanosecond.
"""

from __future__ import annotations

import sympy

from ..core.errors import SymgptError
from .quantity import Quantity

#: the percentiles reported
PERCENTILES = (50, 90, 99)
#: the resolution of a reported percentile: one nanosecond
RESOLUTION = sympy.Rational(1, 10**9)
#: the longest wait searched, in prefills (beyond it the queue is refused as too close to saturation)
MAX_PREFILLS = 10**5


def _mp():
    import mpmath

    return mpmath


def wait_cdf(t, rate, D):
    """P(W <= t) of the M/D/1 queue (an mpmath number), *t*, *rate* and *D* exact."""
    mp = _mp()
    t, rate, D = sympy.Rational(t), sympy.Rational(rate), sympy.Rational(D)
    rho = rate * D
    if not 0 <= rho < 1 or D <= 0:
        raise SymgptError(f"the M/D/1 queue needs 0 <= λD < 1 and D > 0, got λD = {rho}")
    if t < 0:
        return mp.mpf(0)
    n = int(sympy.floor(t / D))
    digits = 30 + int(float(rate * t) * 0.8686) + len(str(n))     # 2·λt·log10(e) digits cancel
    with mp.workdps(digits):
        lam, tt, dd = (mp.mpf(x.p) / x.q for x in (rate, t, D))
        s = mp.mpf(0)
        for k in range(n + 1):
            x = lam * (k * dd - tt)
            s += x ** k / mp.factorial(k) * mp.exp(-x)
        return +(1 - lam * dd) * s


def wait_quantile(p, rate, D) -> sympy.Rational:
    """The least t (rounded up to :data:`RESOLUTION`) with P(W <= t) >= p."""
    p, rate, D = sympy.Rational(p), sympy.Rational(rate), sympy.Rational(D)
    if not 0 < p < 1:
        raise SymgptError(f"a percentile is in (0, 1), got {p}")
    rho = rate * D
    if p <= 1 - rho:
        return sympy.Integer(0)
    mp = _mp()
    target = mp.mpf(p.p) / p.q
    lo, hi = sympy.Integer(0), D
    while wait_cdf(hi, rate, D) < target:
        lo, hi = hi, 2 * hi
        if hi > MAX_PREFILLS * D:
            raise SymgptError(f"the prefill queue at λD = {float(rho):.6g} waits beyond {MAX_PREFILLS} prefills at the "
                              f"{float(p * 100):g}th percentile: too close to saturation to evaluate")
    while hi - lo > RESOLUTION:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if wait_cdf(mid, rate, D) >= target else (mid, hi)
    return sympy.ceiling(hi / RESOLUTION) * RESOLUTION


def ttft_percentiles(rate, D, prompt: int) -> list:
    """TTFT = D + W at the p50, p90 and p99 of the M/D/1 waiting time, one quantity each."""
    note = (f"TTFT percentile of the prefill instance at the rate above (an M/D/1 queue, D = {float(D):.6g} s, one "
            f"prefill of {prompt} tokens; ρ = λD = {float(rate * D):.6g}): D + the waiting time's percentile, from "
            "Erlang's M/D/1 waiting-time distribution P(W <= t) = (1 - ρ) Σ_{k <= t/D} (λ(kD - t))^k / k! "
            "e^{-λ(kD - t)} (Erlang 1909, Crommelin 1932), inverted by bisection and rounded up to the nanosecond",
            "TPOT: every request sees the same full decode batch in this model, so its percentiles are its mean")
    return [Quantity(f"serving.disagg.ttft_p{q}", (("total", D + wait_quantile(sympy.Rational(q, 100), rate, D)),),
                     {}, "s", "md1-erlang", note) for q in PERCENTILES]

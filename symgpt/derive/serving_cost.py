"""What serving costs, from exact step times (``serving_spec.StepTimer``): dollars per million
input and output tokens, joules per token, and disaggregated prefill and decode pools
(DistServe, Zhong et al. 2024; Splitwise, Patel et al. 2024).

* Throughput at batch B and context T: input tokens/s = B·T / prefill time (B prompts of T
  tokens); output tokens/s = B / decode-step time (a cache of T: the longest context, so an
  upper bound of the mean step).
* Cost: a price per device-hour times the devices (``chips``) over 3,600 s, divided by the
  throughput, times 10⁶.
* Energy: the board power of each device (the datasheet's maximum, ``Hardware.board_power``)
  times a utilisation fraction (default 1: the maximum, an upper bound; a memory-bound decode
  step draws less), times the devices, times the seconds per token.
* Disaggregation: a request's prompt KV cache (its blocks, ``serving.Paged``, on every device of
  the prefill instance) moves to the decode instance over the scale-out network (each device
  its own shard, in parallel, at the profile's ``node_bandwidth``); the devices the two pools
  need are in the ratio of a request's device-seconds in each: one prefill of P tokens (batch 1,
  as DistServe runs prefills, yielding the first token) against G - 1 decode steps over caches
  of P .. P + G - 2 at batch B.
  Throughput balance only, unless targets are given:
* Disaggregation at TTFT and TPOT targets (``disaggregation_targets``): a prefill instance runs
  one prompt at a time, first come first served, fed by Poisson arrivals: an M/D/1 queue, as
  DistServe's analysis of a prefill instance (Zhong et al. 2024, Sec. 3.1): its mean TTFT at
  arrival rate λ is D + λD²/(2(1 - λD)), D the time of one prefill of P tokens (the
  Pollaczek-Khinchine formula with a deterministic service). The largest rate that keeps the
  mean TTFT within a target t > D is λ = 2(t - D)/(D(2t - D)). A decode instance at batch b
  takes the mean step time over the request's contexts P .. P + G - 2 per output token: the
  largest b (up to the sequences that fit) with that mean within the TPOT target serves
  b/((G - 1)·step) requests a second. Prefill instances per decode instance: that rate over λ.
  Means, not percentiles; a decode batch always full (continuous batching at saturation).
"""

from __future__ import annotations

import sympy

from ..core.errors import SymgptError
from .quantity import Quantity


def positive_rational(text, option: str) -> sympy.Rational:
    """A positive exact number from text ("2.5", "5/2"), or a one-line error."""
    from fractions import Fraction

    try:
        v = sympy.Rational(Fraction(str(text).strip()))
    except (ValueError, ZeroDivisionError):
        raise SymgptError(f"{option} takes a positive number such as 2.5 or 5/2, got {str(text)[:40]!r}") from None
    if v <= 0:
        raise SymgptError(f"{option} takes a positive number, got {text}")
    return v


def _q(name, value, unit, notes):
    return Quantity(name, (("total", value),), {}, unit, "serving", tuple(notes))


def cost(timer, batch: int, T: int, price) -> list:
    """$ per million input and output tokens at *price* per device-hour."""
    chips = timer.s.chips
    pre, dec = timer.seconds(batch, T, 0), timer.seconds(batch, 1, T)
    per_s = sympy.Rational(price) * chips / 3600
    note = (f"{price} $ per device-hour × {chips} device(s); at batch B = {batch}, context T = {T}: input from the "
            f"prefill of B prompts of T tokens, output from one decode step over a cache of T (the longest, an "
            f"upper bound of the mean)")
    return [_q("serving.cost.input_per_million", per_s * pre / (batch * T) * 10**6, "$", [note]),
            _q("serving.cost.output_per_million", per_s * dec / batch * 10**6, "$", [note])]


def energy(timer, batch: int, T: int, fraction=1) -> list:
    """Joules per input and output token from the board power at a utilisation *fraction*."""
    dev = timer.s.device
    if dev is None or dev.board_power is None:
        name = dev.name if dev is not None else "this device"
        raise SymgptError(f"energy per token needs a board power: {name} has none in its profile (no datasheet figure)")
    f = sympy.Rational(fraction)
    if not 0 < f <= 1:
        raise SymgptError(f"the power fraction is in (0, 1], got {fraction}")
    watts = dev.board_power * f * timer.s.chips
    pre, dec = timer.seconds(batch, T, 0), timer.seconds(batch, 1, T)
    note = (f"board power {dev.board_power} W × {f} × {timer.s.chips} device(s) [{dev.power_source}]; at batch "
            f"B = {batch}, context T = {T}")
    return [_q("serving.energy.input_per_token", watts * pre / (batch * T), "J", [note]),
            _q("serving.energy.output_per_token", watts * dec / batch, "J", [note])]


def disaggregation(timer, paged, batch: int, prompt: int, output: int) -> list:
    """KV bytes a request moves from the prefill to the decode pool, its transfer time, and the
    prefill : decode device ratio for requests of *prompt* and *output* tokens."""
    for name, v, low in (("the mean prompt", prompt, 1), ("the mean output", output, 2)):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise SymgptError(f"{name} is a number of tokens >= {low}, got {v!r}")
    s = timer.s
    per_device = sympy.Add(*[e for _, e in paged.sequence_parts()]).xreplace({paged.T: prompt}).xreplace(s.bindings)
    moved = per_device * s.chips
    notes = [f"a prompt of P = {prompt} tokens: its KV blocks on each of the {s.chips} device(s) of the prefill "
             "instance (DistServe, Zhong et al. 2024; Splitwise, Patel et al. 2024)"]
    out = [_q("serving.disagg.kv_bytes_per_request", moved, "bytes", notes)]
    dev = s.device
    bw = dev.node_bandwidth if dev is not None else None
    if bw is None:
        notes2 = ["no transfer time: the profile publishes no per-device scale-out bandwidth"]
    else:
        out.append(_q("serving.disagg.transfer_time", per_device / bw, "s", [
            f"each device sends its shard over its own scale-out link, {bw} bytes/s per direction [{dev.source}]"]))
        notes2 = []
    pre = timer.seconds(1, prompt, 0)
    dec = sympy.Add(*[timer.seconds(batch, 1, prompt + i) for i in range(output - 1)]) / batch
    out.append(_q("serving.disagg.prefill_to_decode", pre / dec, "devices per decode device", notes2 + [
        f"device-seconds per request: one prefill of {prompt} tokens (batch 1, its first output token) against "
        f"{output - 1} decode steps over caches of {prompt} to {prompt + output - 2} tokens at batch {batch}, "
        "shared by the batch; throughput balance only (TTFT and TPOT targets: --ttft and --tpot)"]))
    return out


def mdl_mean_ttft(service, rate):
    """Mean time to first token of an M/D/1 prefill queue: *service* seconds a prompt, Poisson
    arrivals at *rate* a second (Pollaczek-Khinchine, deterministic service)."""
    load = rate * service
    if load >= 1:
        raise SymgptError("the prefill queue is unstable at this rate (rate × prefill time >= 1)")
    return service + rate * service**2 / (2 * (1 - load))


def disaggregation_targets(timer, batch_cap: int, prompt: int, output: int, ttft, tpot) -> list:
    """Prefill and decode instances that meet a mean TTFT of *ttft* and a TPOT of *tpot* seconds
    for requests of *prompt* and *output* tokens (see the module's notes)."""
    ttft, tpot = sympy.Rational(ttft), sympy.Rational(tpot)
    D = timer.seconds(1, prompt, 0)
    if ttft <= D:
        raise SymgptError(f"a mean TTFT of {ttft} s is below one prefill of {prompt} tokens "
                          f"({float(D):.4g} s on this device): no arrival rate meets it")
    rate = 2 * (ttft - D) / (D * (2 * ttft - D))
    steps = output - 1

    def mean_step(b):
        return sympy.Add(*[timer.seconds(b, 1, prompt + i) for i in range(steps)]) / steps

    if mean_step(1) > tpot:
        raise SymgptError(f"a TPOT of {tpot} s is below one decode step at batch 1 "
                          f"({float(mean_step(1)):.4g} s on this device)")
    lo, hi = 1, max(1, int(batch_cap))          # the step time grows with the batch: bisect
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mean_step(mid) <= tpot:
            lo = mid
        else:
            hi = mid - 1
    b, step = lo, mean_step(lo)
    serve = b / (steps * step)
    src = ("M/D/1 prefill queue (one prompt at a time, Poisson arrivals; DistServe, Zhong et al. 2024, Sec. 3.1): "
           f"mean TTFT D + λD²/(2(1 - λD)) with D = {float(D):.4g} s, one prefill of {prompt} tokens")
    dnote = (f"decode batch b = {b}: the largest up to {batch_cap} (the sequences that fit, or --set B) whose mean "
             f"step over contexts {prompt} .. {prompt + steps - 1} is within the TPOT target; a full batch at all "
             "times (continuous batching at saturation); means, not percentiles")
    return [_q("serving.disagg.prefill_rate", rate, "requests/s per prefill instance",
               [src + f"; the largest rate with a mean TTFT within {ttft} s"]),
            _q("serving.disagg.decode_batch", sympy.Integer(b), "sequences", [dnote]),
            _q("serving.disagg.decode_rate", serve, "requests/s per decode instance",
               [dnote + f"; b / ({steps} steps × the mean step)"]),
            _q("serving.disagg.prefill_per_decode", serve / rate, "prefill instances per decode instance",
               ["the decode instance's request rate over the prefill instance's at the targets: both pools "
                "meet them, instances of the same devices (--chips)"])]

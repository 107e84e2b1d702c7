"""What a simulation reports: throughput, and TTFT, TPOT and end-to-end latency percentiles.

* TTFT: first output token's time less the arrival; end-to-end: the last token's less the arrival;
* TPOT: (last token - first token) / (output - 1), of the requests with two output tokens or more
  (vLLM's benchmark_serving definition);
* throughput: tokens over the makespan, from the first arrival to the last token;
* percentiles by linear interpolation between the closest ranks (NumPy's default ``linear``
  method, Hyndman and Fan's type 7).
Times are floats in seconds (IEEE doubles); every step's time is the exact closed form evaluated
in floats.
"""

from __future__ import annotations

PERCENTILES = (50, 90, 99)
PERCENTILE_METHOD = ("linear interpolation between the closest ranks (NumPy's 'linear', "
                     "Hyndman and Fan type 7)")


def _stats(values) -> dict | None:
    import numpy as np

    if not len(values):
        return None
    a = np.asarray(values, dtype=float)
    out = {"mean": float(a.mean())}
    for q in PERCENTILES:
        out[f"p{q}"] = float(np.percentile(a, q))
    out["max"] = float(a.max())
    return out


def summary(o) -> dict:
    """The JSON-ready figures of an ``engine.Outcome``."""
    n = len(o.arrival)
    span = max(o.finish) - min(o.arrival)
    outputs, prompts = sum(o.output), sum(o.prompt)
    ttft = [f - a for f, a in zip(o.first_token, o.arrival)]
    e2e = [f - a for f, a in zip(o.finish, o.arrival)]
    tpot = [(f - t) / (g - 1) for f, t, g in zip(o.finish, o.first_token, o.output) if g > 1]
    per_s = (lambda x: x / span) if span > 0 else (lambda x: None)
    return {
        "requests": n,
        "prompt_tokens": prompts,
        "output_tokens": outputs,
        "makespan_s": span,
        "throughput": {"output_tokens_per_s": per_s(outputs), "total_tokens_per_s": per_s(outputs + prompts),
                       "requests_per_s": per_s(n)},
        "ttft_s": _stats(ttft),
        "tpot_s": _stats(tpot),
        "e2e_s": _stats(e2e),
        "steps": o.steps,
        "busy_fraction": o.busy / span if span > 0 else None,
        "peak_batch": o.peak_batch,
        "time": "float seconds (IEEE double)",
        "percentiles": PERCENTILE_METHOD,
    }


def _ms(x):
    return "-" if x is None else f"{1000 * x:,.2f} ms"


def render(result: dict) -> str:
    """``run``'s answer as text."""
    s = result["simulation"]
    lines = [f"simulation: {result['trace']}",
             f"  scheduler {result['config']['scheduler']}, max batch {result['config']['max_batch']}, "
             f"token budget {result['config']['token_budget'] or 'none'}, KV capacity "
             f"{result['config']['capacity_blocks'] or 'unlimited'} blocks of {result['config']['block_size']} tokens",
             f"  {s['requests']:,} requests, {s['prompt_tokens']:,} prompt and {s['output_tokens']:,} output "
             f"tokens in {s['makespan_s']:,.3f} s ({s['steps']:,} steps, busy {100 * (s['busy_fraction'] or 0):.1f}%, "
             f"at most {s['peak_batch']} sequences at once)"]
    if "preemptions" in s:  # KV blocks allocated as sequences grow
        lines.append(f"  preemptions (recomputed): {s['preemptions']:,}")
    t = s["throughput"]
    if t["output_tokens_per_s"] is not None:
        lines.append(f"  throughput: {t['output_tokens_per_s']:,.1f} output tokens/s, {t['total_tokens_per_s']:,.1f} "
                     f"tokens/s in all, {t['requests_per_s']:,.3f} requests/s")
    lines.append(f"  {'':8}{'mean':>13}{'p50':>13}{'p90':>13}{'p99':>13}{'max':>13}")
    for key, label in (("ttft_s", "TTFT"), ("tpot_s", "TPOT"), ("e2e_s", "E2E")):
        v = s[key]
        cells = ["-"] * 5 if v is None else [_ms(v[k]) for k in ("mean", "p50", "p90", "p99", "max")]
        lines.append(f"  {label:8}" + "".join(f"{c:>13}" for c in cells))
    lines.append(f"  times: {s['time']}; percentiles: {s['percentiles']}")
    st = result.get("steady")
    if st:
        lines.append("steady state (exact):")
        for k, v in st.items():
            if k != "notes":
                lines.append(f"  {k}: {v['value']}" + (f"  (= {v['approx']})" if v.get("approx") else ""))
    for note in result.get("notes", []):
        lines.append(f"  note: {note}")
    return "\n".join(lines) + "\n"

"""The request-mix simulation's speed: a 100,000-request trace on one core (the goal: under a
minute).

    python benchmarks/simulate.py [--requests 100000] [--out benchmarks/SIMULATE.md]

Draws a trace (Poisson arrivals, uniform prompts, exponential outputs, generator PCG64(0)),
derives llama-7b's step time on an H100 SXM once, and times ``symgpt.simulate.engine.simulate``
for each scheduler (prefill-first, chunked with a budget of 2048 tokens), max batch 256 and a KV
capacity of 20,000 blocks of 16 tokens. Prints a Markdown table; with ``--out`` writes it there.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--rate", default="30")
    ap.add_argument("--out")
    a = ap.parse_args()

    from symgpt.model.model import load
    from symgpt.simulate.engine import Config, simulate
    from symgpt.simulate.results import summary
    from symgpt.simulate.stepcost import step_cost
    from symgpt.simulate.trace import draw_trace

    t0 = time.perf_counter()
    trace = draw_trace(a.requests, a.rate, "uniform:100:1000", "exp:128", stream=0)
    t_trace = time.perf_counter() - t0
    t0 = time.perf_counter()
    cost = step_cost(load("llama-7b"), hardware="h100-sxm")
    t_cost = time.perf_counter() - t0
    rows = []
    for scheduler in ("prefill-first", "chunked"):
        t0 = time.perf_counter()
        o = simulate(trace, cost, Config(scheduler, max_batch=256, capacity_blocks=20_000, block_size=16))
        wall = time.perf_counter() - t0
        s = summary(o)
        rows.append(f"| {scheduler} | {len(trace):,} | {s['steps']:,} | {wall:.1f} s | "
                    f"{s['throughput']['output_tokens_per_s']:,.0f} | {1000 * s['ttft_s']['p50']:,.1f} / "
                    f"{1000 * s['ttft_s']['p99']:,.1f} ms | {1000 * s['tpot_s']['p50']:,.2f} / "
                    f"{1000 * s['tpot_s']['p99']:,.2f} ms |")
    text = "\n".join([
        "# The request-mix simulation's speed",
        "",
        "`python benchmarks/simulate.py` (" + f"{a.requests:,} requests, Poisson at {a.rate}/s, prompts "
        "uniform:100:1000, outputs exp:128, llama-7b on h100-sxm, max batch 256, 20,000 KV blocks of 16 tokens). "
        f"One core, Python {platform.python_version()}, {os.cpu_count()} CPUs on the machine, shared: load average "
        f"{os.getloadavg()[0]:.1f} at the end. "
        f"Drawing the trace: {t_trace:.1f} s; deriving the step time once: {t_cost:.1f} s.",
        "",
        "| scheduler | requests | steps | simulation wall time | output tokens/s | TTFT p50 / p99 | TPOT p50 / p99 |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "Goal: under a minute on one core for 100,000 requests. Times simulated as float seconds; "
        "percentiles by linear interpolation (NumPy's default).",
        ""])
    print(text)
    if a.out:
        Path(a.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()

"""How close a sweep's up-front estimate (``symgpt.sweep.estimate``) comes to what it then takes.

    nice -n 19 python benchmarks/sweep_estimate.py [--points 1e6 1e7] [--workers N] [--json FILE]

For each size: GPT-2 (V = 50257, T_max = 1024; tied head, biases) over L = 1..N/1000 ×
d = 64..64000 step 64, the CSV of params streamed to a file (``write_csv``, the path of
``symgpt sweep -o``). The estimate is measured exactly as the CLI measures it (timed samples of
the sweep's own grid, before any point is evaluated), then the sweep runs; reported: estimated
and actual seconds (evaluation and writing, after the estimate), their ratio, estimated and
actual CSV bytes, the sampling time, and the peak resident memory of this process and of its
children (Dask workers). Sizes 10**6 .. 10**9 are accepted; 10**8 and 10**9 run for minutes
and write 3 and 30 GB (run them on a quiet machine). Results: benchmarks/SWEEP_ESTIMATE.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZES = (10**6, 10**7, 10**8, 10**9)


def measure(points: int, workers: int | None = None) -> dict:
    import symgpt
    from symgpt.sweep import estimate
    from symgpt.sweep.run import write_csv

    if points not in SIZES:
        raise SystemExit(f"--points takes {', '.join(f'{s:.0e}' for s in SIZES)}")
    model = symgpt.load("gpt2", V=50257, T_max=1024)
    grid = [f"L=1:{points // 1000}", "d=64:64000:64"]
    got: dict = {}

    def before(plan):
        t = time.perf_counter()
        got["estimate"] = estimate.measure(plan, "csv")
        got["sampling_s"] = time.perf_counter() - t
        got["start"] = time.perf_counter()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sweep.csv"
        with open(path, "wb") as f:
            write_csv(f, model, grid, ["params"], workers=workers, before=before)
        actual = time.perf_counter() - got["start"]
        size = path.stat().st_size
    est = got["estimate"]
    return {
        "points": points, "workers": est.workers,
        "estimated_s": round(est.seconds, 2), "actual_s": round(actual, 2),
        "ratio": round(est.seconds / actual, 2) if actual else None,
        "estimated_bytes": est.bytes, "actual_bytes": size,
        "bytes_ratio": round(est.bytes / size, 4) if size else None,
        "sampled_points": est.sampled, "sampling_s": round(got["sampling_s"], 2),
        "peak_mb_self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "peak_mb_children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024,
        "load_average": os.getloadavg()[0],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", nargs="+", type=float, default=[1e6, 1e7])
    ap.add_argument("--workers", type=int, default=None,
                    help="local Dask workers (default: symgpt's, in-process below 2**24 points)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    rows = []
    for p in args.points:
        row = measure(int(p), args.workers)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| points | workers | estimated | actual | ratio | est. bytes | bytes | ratio | sampled | peak MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['points']:,} | {r['workers']} | {r['estimated_s']} s | {r['actual_s']} s | {r['ratio']} "
              f"| {r['estimated_bytes']:,} | {r['actual_bytes']:,} | {r['bytes_ratio']} "
              f"| {r['sampled_points']:,} in {r['sampling_s']} s | {r['peak_mb_self']} + {r['peak_mb_children']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()

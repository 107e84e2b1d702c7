"""A billion-point design-space search: ``symgpt sweep`` on Dask's local worker processes,
against a plain Python loop of the same closed forms (timed on a 10**6-point sample and
extrapolated).

    python benchmarks/billion.py [--points 1e9] [--workers N]

The search: GPT-2 shapes (tied head, h = 64, T = T_max = 1024, B = 1) over L = 1..1000 ×
d = 64..64000 step 64 × V = 32000 + 0..999 (10**9 points at the default), parameters and
training FLOPs (matmuls only), keeping the five largest by training FLOPs among those under
70 B parameters (``--where 'params < 7e10' --top 5 --by flops.train``). ``--points`` shrinks the
V axis (10**6 points per V value).

Measured: wall time of the whole command (interpreter, derivation, cluster start, evaluation),
points per second, peak memory of all its processes together (the resident sets of the command
and its worker processes, summed, sampled every 0.1 s with psutil) and of the largest one
(``getrusage(RUSAGE_CHILDREN)``), and the loop's extrapolated time. The loop's top rows on its
sample are checked against symgpt's on the same sample. ``measure()`` returns the figures;
run as a script, it prints them and a Markdown row. No test asserts a timing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
V0, T_MAX, B, T, H = 32000, 1024, 1, 1024, 64
LIMIT = 7 * 10**10
K = 5


def _args(vs: int, workers: int | None) -> list[str]:
    return ["sweep", "gpt2", "--set", f"T_max={T_MAX}", "--set", f"h={H}", "--set", f"B={B}",
            "--set", f"T={T}", "--grid", "L=1:1000", "--grid", "d=64:64000:64",
            "--grid", f"V={V0}:{V0 + vs - 1}", "--columns", "params,flops.train",
            "--where", f"params < {LIMIT}", "--top", str(K), "--by", "flops.train", "--no-progress",
            *(["--workers", str(workers)] if workers is not None else [])]


def _params(L, d, V):  # GPT-2 with a tied head and biases (Radford et al. 2019; nanoGPT)
    return 12 * L * d * d + 13 * L * d + V * d + T_MAX * d + 2 * d


def _train(L, d, V):  # 3 × forward, 2 FLOPs per multiply-add, matmuls only, full T × T, LM head in
    return 3 * (24 * B * T * L * d * d + 4 * B * T * T * L * d + 2 * B * T * V * d)


def _loop(Ls, ds, Vs):
    """The search by hand: every point, exact integers, the K best kept by sorting (ties in
    grid order)."""
    best, i = [], 0
    for L in Ls:
        for d in ds:
            for V in Vs:
                p = _params(L, d, V)
                if p < LIMIT:
                    best.append((-_train(L, d, V), i, [L, d, V, p, _train(L, d, V)]))
                i += 1
            best = sorted(best)[:K]
    return [row for _, _, row in sorted(best)[:K]]


def _run(args: list[str]) -> tuple[float, tuple[int, int], str]:
    """Wall seconds, the peaks of the summed resident sets of the process tree and of its largest
    process (sampled every 0.1 s: ``RUSAGE_CHILDREN`` would count every earlier child of this
    process, such as benchmarks/run.py's other sections), and stdout."""
    import psutil

    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "symgpt", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak, one, stop = [0], [0], threading.Event()

    def sample() -> None:
        root = psutil.Process(proc.pid)
        while not stop.is_set():
            try:
                sizes = [p.memory_info().rss for p in [root, *root.children(recursive=True)]]
            except psutil.Error:
                sizes = [0]
            peak[0], one[0] = max(peak[0], sum(sizes)), max(one[0], *sizes)
            stop.wait(0.1)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    stop.set()
    thread.join()
    if proc.returncode:
        raise RuntimeError(f"symgpt sweep failed: {err.decode()[-2000:]}")
    return wall, (peak[0], one[0]), out.decode()


def measure(points: int = 10**9, workers: int | None = None) -> dict:
    """Run the search over *points* (a multiple of 10**6) on *workers* local processes (None:
    symgpt's default, one per core) and the loop on a 10**6-point sample; the figures."""
    vs = max(1, points // 10**6)
    points = 10**6 * vs
    wall, (peak, biggest), out = _run(_args(vs, workers))
    rows = [[int(x) for x in line.split(",")] for line in out.splitlines()[1:]]
    # the loop, on the sample V = V0 (10**6 points: every L and d), extrapolated
    Ls, ds = range(1, 1001), range(64, 64001, 64)
    t0 = time.perf_counter()
    loop_rows = _loop(Ls, ds, [V0])
    loop_s = (time.perf_counter() - t0) * points / 10**6
    _, _, sample = _run(_args(1, 0))
    agree = [[int(x) for x in line.split(",")] for line in sample.splitlines()[1:]] == loop_rows
    return {
        "points": points, "workers": workers if workers is not None else len(os.sched_getaffinity(0)),
        "wall_s": wall, "points_per_s": points / wall, "peak_rss_all_mb": peak / 1e6,
        "peak_rss_one_mb": biggest / 1e6, "loop_s_extrapolated": loop_s, "speedup": loop_s / wall,
        "top": rows, "loop_agrees_on_sample": agree, "load": os.getloadavg()[0],
    }


def markdown(r: dict) -> str:
    return (f"| {r['points']:.0e}-point sweep, --where + --top {K} ({r['workers']} workers) "
            f"| {r['wall_s']:.1f} s ({r['points_per_s'] / 1e6:.1f} M points/s) "
            f"| {r['loop_s_extrapolated']:.0f} s (plain Python loop, extrapolated from 10⁶ points) "
            f"| {r['speedup']:.1f}× faster | peak memory {r['peak_rss_all_mb']:.0f} MB (all processes; "
            f"largest {r['peak_rss_one_mb']:.0f} MB) | loop agrees: {'yes' if r['loop_agrees_on_sample'] else 'NO'} |")


def rows(r: dict, ctx) -> list[tuple]:
    """The summary table's row (benchmarks/run.py)."""
    return [(f"{r['points']:,}-point sweep, --where + --top {K}, {r['workers']} Dask workers",
             f"{r['wall_s']:.1f} s ({r['points_per_s'] / 1e6:.1f} M points/s)",
             f"{r['loop_s_extrapolated']:.0f} s (plain Python loop, from 10⁶ points)",
             f"{r['speedup']:.1f}× faster", "< 500 MB, all processes",
             "yes" if r["peak_rss_all_mb"] < 500 and r["loop_agrees_on_sample"] else "**no**")]


def details(r: dict, ctx) -> list[str]:
    return [f"- Billion-point sweep (`benchmarks/billion.py`): peak memory {r['peak_rss_all_mb']:.0f} MB over all "
            f"processes (largest one {r['peak_rss_one_mb']:.0f} MB); the plain loop's best rows on its 10⁶-point "
            f"sample agree with symgpt's: {'yes' if r['loop_agrees_on_sample'] else 'NO'}."]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=float, default=1e9)
    ap.add_argument("--workers", type=int)
    a = ap.parse_args()
    r = measure(int(a.points), a.workers)
    for k, v in r.items():
        print(f"{k}: {v}")
    print(markdown(r))


if __name__ == "__main__":
    main()

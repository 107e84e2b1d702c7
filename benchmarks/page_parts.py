"""The report's HTML page (``symgpt.documents.html.page``) by part, timed in-process: the step times
(``_inference``), the memory closed forms (``_memory``, ``_total``), the plots and the whole page.

    python3 benchmarks/page_parts.py [--model gpt2-small] [--runs 7] [--against DIR]

Each run is a fresh process (SymPy's caches start empty, as in the report's forked child), timed
with ``time.perf_counter`` around each part; medians are printed. ``--against DIR`` (another
checkout of symgpt, e.g. ``git worktree add /tmp/base main``) runs it too, interleaved with this
one run for run, and prints both with their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
PARTS = ("_inference", "_memory", "_total", "_plots")

CHILD = """
import json, sys, time
from symgpt.documents import html
from symgpt.model.model import load
from symgpt.render import dot  # noqa: F401  (imported outside the timers, as in a report)
times = {}
def timed(name):
    f = getattr(html, name)
    def g(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            times[name] = times.get(name, 0.0) + time.perf_counter() - t
    setattr(html, name, g)
for name in %r:
    timed(name)
m = load(sys.argv[1])
t = time.perf_counter()
html.page(m)
times["page"] = time.perf_counter() - t
print(json.dumps(times))
""" % (PARTS,)


def run_once(root: Path, model: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", CHILD, model], cwd=root, env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="gpt2-small")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--against", type=Path, help="another checkout, timed interleaved with this one")
    args = ap.parse_args(argv)
    roots = {"this": HERE} | ({"against": args.against.resolve()} if args.against else {})
    res: dict[str, list[dict]] = {k: [] for k in roots}
    for i in range(args.runs):
        order = list(roots.items()) if i % 2 == 0 else list(reversed(roots.items()))
        for key, root in order:
            res[key].append(run_once(root, args.model))
    for part in (*PARTS, "page"):
        med = {k: statistics.median(r[part] for r in rs) for k, rs in res.items()}
        line = f"{part:11s} this {med['this'] * 1e3:7.1f} ms"
        if "against" in med:
            line += f"   against {med['against'] * 1e3:7.1f} ms   ratio {med['this'] / med['against']:.2f}"
        print(line)


if __name__ == "__main__":
    main()

"""The interactive page's MathML: SymPy's presentation printer vs ``symgpt.render.mathml``, interleaved.

    python benchmarks/mathml.py [--model gpt2-small] [--runs 15]

The page of the model is built once (``symgpt.documents.html.page``); the formulas it prints
(``symgpt.render.html.page_html`` calls ``mathml_expr`` on each: 175 for gpt2-small) are recorded,
then printed ``--runs`` times by each printer, alternately, in this one process: SymPy's
``mathml(expr, printer="presentation", order="grlex", mul_symbol="dot")`` and
``symgpt.render.mathml.presentation`` (its remembered sort keys cleared before every run). The
strings must be equal; the medians and their ratio are printed. SymPy's own caches are warm for
both after the first run, as they are in a report. No test asserts a timing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the checkout this file is in comes first
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="gpt2-small")
    ap.add_argument("--runs", type=int, default=15)
    opts = ap.parse_args(argv)

    import symgpt
    from symgpt.documents.html import page
    from symgpt.render import html, mathml

    p = page(symgpt.load(opts.model))
    exprs = []
    printer = html.mathml_expr
    html.mathml_expr = lambda e: exprs.append(e) or printer(e)
    try:
        html.page_html(p)
    finally:
        html.mathml_expr = printer
    sides = {"sympy": mathml.sympy_presentation, "symgpt.render.mathml": mathml.presentation}
    times: dict[str, list[float]] = {name: [] for name in sides}
    texts = {}
    for _ in range(opts.runs):
        for name, f in sides.items():
            mathml._KEYS.clear()
            start = time.perf_counter()
            texts[name] = [f(e) for e in exprs]
            times[name].append(time.perf_counter() - start)
    if texts["sympy"] != texts["symgpt.render.mathml"]:
        raise SystemExit("the two printers differ")
    med = {name: statistics.median(t) for name, t in times.items()}
    print(f"{opts.model}: {len(exprs)} formulas, {opts.runs} interleaved runs, identical output")
    for name, m in med.items():
        print(f"  {name:22} median {m * 1e3:7.1f} ms")
    print(f"  speed-up {med['sympy'] / med['symgpt.render.mathml']:.1f}x")


if __name__ == "__main__":
    main()

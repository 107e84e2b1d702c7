"""symgpt against the alternatives, side by side in one run; writes benchmarks/RESULTS.md.

    python benchmarks/run.py [--runs 5] [--heavy-runs 3] [--no-pdf] [--only peers,startup] [-o FILE]

Every figure is the median of several runs, each timed in a fresh interpreter unless said
otherwise; start-up (interpreter + imports) is reported separately from the work. The sections,
one module each in this folder, run in the order of ``SECTIONS`` below:

- ``derivation``: params + forward FLOPs of GPT-2-small and GPT-3-175B, symgpt vs a meta-device
  build counted by ``FlopCounterMode``;
- ``sweeps``: 1,000,000 configurations vs a plain Python loop and hand-written NumPy, below and
  past 2**63;
- ``unroll``: ``graph --unroll`` vs the rolled graph at L = 64;
- ``report``: ``symgpt report gpt2-small`` with and without the PDF;
- ``startup``: ``symgpt --help`` and ``symgpt params`` (derivation cache cold / warm / off);
- ``peers``: FlopCounterMode, calflops, fvcore, ptflops and llm-analysis, each in a virtual
  environment of its own (``benchmarks/.envs/``, created and installed into on first use,
  reused after), on GPT-2-small, GPT-3-175B and LLaMA-2-70B, each answer beside symgpt's exact
  count under the tool's own convention.

A section is a module ``benchmarks/NAME.py``, listed by name in ``SECTIONS``, with
``measure(opts)`` (or ``measure()``, its defaults) returning JSON-able results and, optionally,
``rows(results, ctx)`` (rows of the summary table: measurement, symgpt, alternative, ratio,
goal, met), ``details(results, ctx)`` (bullets under "Details") and
``section(results, ctx)`` (a Markdown section of its own). ``ctx`` holds ``opts``, the
``baseline`` timings (``pass``: ``python -c pass``; ``sympy``: ``python -c "import sympy"``,
measured on every run) and ``results`` (every section's, by name). A section without renderers
still has its results in the raw JSON at the end.

Children run as an installed package does: with compiled bytecode (``PYTHONPYCACHEPREFIX``, a
temporary folder; ``PYTHONDONTWRITEBYTECODE`` unset; one warm-up run compiles symgpt's modules),
as SymPy's own come compiled from its installation -- otherwise every run would recompile
symgpt's sources where the environment sets ``PYTHONDONTWRITEBYTECODE=1``.

Timings are wall-clock on a shared machine: other jobs add noise (the load average is recorded).
No test asserts a timing; the goals are checked here and reported, not enforced.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # run as a script: import this folder as the package ``benchmarks``
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]  # no top-level `report`, `envs`
    sys.path.insert(0, str(_here.parent))

from benchmarks.common import PY, ROOT, machine, say, wall  # noqa: E402

# The sections, in the order they run and are written: the modules benchmarks/NAME.py. Adding
# one is adding its name here (a module that is missing or fails to import stops the run).
SECTIONS = ("derivation", "sweeps", "unroll", "report", "startup", "plan", "billion", "peers")


def modules(names=SECTIONS) -> list:
    return [importlib.import_module(f"benchmarks.{n}") for n in names]


def name_of(mod) -> str:
    return mod.__name__.rsplit(".", 1)[-1]


def run_section(mod, opts):
    """``mod.measure(opts)``, or ``mod.measure()`` for a section that takes no options."""
    params = inspect.signature(mod.measure).parameters
    return mod.measure(opts) if "opts" in params else mod.measure()


def main(argv=None) -> int:
    names = list(SECTIONS)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs of the light measurements (default 5)")
    ap.add_argument("--heavy-runs", type=int, default=3, help="runs of meta-device tracing, the peers, the "
                    "PDF report and the Python loop (default 3)")
    ap.add_argument("--no-pdf", action="store_true", help="skip the report-with-PDF measurement")
    ap.add_argument("--only", default="", metavar="NAMES",
                    help=f"comma-separated sections to run (of: {', '.join(names)}); with --only the "
                    "Markdown goes to standard output unless -o is given")
    ap.add_argument("-o", "--output", default=None,
                    help="where to write the Markdown (default benchmarks/RESULTS.md for a full run)")
    opts = ap.parse_args(argv)
    chosen = [n.strip() for n in opts.only.split(",") if n.strip()] or names
    unknown = [n for n in chosen if n not in names]
    if unknown:
        ap.error(f"unknown section {', '.join(unknown)}; sections: {', '.join(names)}")
    output = opts.output or (None if opts.only else str(ROOT / "benchmarks" / "RESULTS.md"))

    info = machine()
    load_before = os.getloadavg()[0]
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)      # children: compiled bytecode, as installed
    os.environ["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="symgpt-bench-pyc-")
    for warm in (["-m", "symgpt", "params", "gpt2-small", "--no-cache"], ["-m", "symgpt", "--help"]):
        subprocess.run([PY, *warm], capture_output=True, cwd=ROOT, check=True)
    say("baseline ...")
    baseline = {"pass": wall([PY, "-c", "pass"], opts.runs), "sympy": wall([PY, "-c", "import sympy"], opts.runs)}
    results = {}
    for mod in modules([n for n in SECTIONS if n in chosen]):
        results[name_of(mod)] = run_section(mod, opts)
    info["load_after"] = f"{os.getloadavg()[0]:.2f}"
    ctx = {"opts": opts, "baseline": baseline, "results": results}
    text = render(info, ctx, load_before)
    if output:
        sys.path.insert(0, str(ROOT))
        from symgpt.core.io import write_atomic

        write_atomic(output, text)
        say(f"wrote {output}")
    print(text)
    return 0


def render(info, ctx, load_before) -> str:
    opts, results = ctx["opts"], ctx["results"]
    mods = modules(list(results))
    rows, details, sections = [], [], []
    for m in mods:
        res = results[name_of(m)]
        rows += m.rows(res, ctx) if hasattr(m, "rows") else []
        details += m.details(res, ctx) if hasattr(m, "details") else []
        sections += (m.section(res, ctx) + [""]) if hasattr(m, "section") else []
    only = f" --only {','.join(results)}" if opts.only else ""
    out = [
        "# Benchmarks",
        "",
        f"Generated by `python benchmarks/run.py --runs {opts.runs} --heavy-runs {opts.heavy_runs}{only}` on "
        f"{info['date']} (commit {info['commit']}). Sections: {', '.join(results)}. Medians of {opts.runs} "
        f"runs ({2 * opts.runs} for the derivations; {opts.heavy_runs} for meta-device tracing, the peers, the "
        "Python loop and the PDF report).",
        "",
        f"Machine: {info['cores']} cores ({info['cpu']}, {info['os']}), Python {info['python']}; "
        f"symgpt {info['symgpt']}, SymPy {info['sympy']}, NumPy {info['numpy']}, networkx {info['networkx']}, "
        f"torch {info['torch']}, transformers {info['transformers']}. Load average {info['load']} at the "
        f"start, {info['load_after']} at the end: **other jobs shared the CPUs**, so absolute times are "
        "noisy; the ratios, measured side by side in the same run, are the point.",
        "",
    ]
    if rows:
        out += ["| measurement | symgpt | alternative | ratio | goal | met |", "|---|---:|---:|---:|---|---|",
                *[f"| {' | '.join(r)} |" for r in rows], ""]
    if details:
        out += ["## Details", "", *details, ""]
    out += sections
    raw = {"machine": info, "baseline": ctx["baseline"], **results, "load_before": load_before}
    out += ["Raw results (seconds; counts as integers):", "", "```json", json.dumps(raw, indent=1, default=str),
            "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())

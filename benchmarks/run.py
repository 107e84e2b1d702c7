"""symgpt against the alternatives, side by side in one run; writes benchmarks/RESULTS.md.

    python benchmarks/run.py [--runs 5] [--heavy-runs 3] [--no-pdf] [-o benchmarks/RESULTS.md]

Every figure is the median of several runs, each timed in a fresh interpreter unless said
otherwise; start-up (interpreter + imports) is reported separately from the work. Measured:

1. counting parameters + forward FLOPs (B = 1, T = T_max) of GPT-2-small and GPT-3-175B:
   symgpt's derivation vs building the model with transformers on the meta device and counting
   with ``FlopCounterMode`` (both counts are checked to agree);
2. a sweep of 1,000,000 configurations (parameters + training FLOPs) vs a plain Python loop
   over the same closed form (and a hand-written NumPy version, for reference);
3. ``symgpt report gpt2-small`` end to end (``--no-pdf`` and with the PDF), ``symgpt --help``
   and ``symgpt params`` (derivation cache cold, warm, and ``--no-cache``) vs a bare
   ``python -c "import sympy"`` and ``python -c pass``;
4. the same sweep with B = 64, whose training FLOPs pass 2**63 (the float pre-screen with its
   exact re-check), vs the plain Python loop;
5. ``graph --unroll`` vs the rolled graph of GPT-2-small at L = 64 (the DOT text, in-process).

Timings are wall-clock on a shared machine: other jobs add noise (the load average is recorded).
No test asserts a timing; the goals below are checked here and reported, not enforced.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
MODELS = {"gpt2-small": dict(L=12, d=768, h=12, T=1024), "gpt3-175b": dict(L=96, d=12288, h=96, T=2048)}

# --- children (each prints one JSON line) -----------------------------------------------------
DERIVE = """
import json, time
import sympy, networkx, numpy, symgpt, symgpt.model, symgpt.ops, symgpt.families, symgpt.derive.flops
symgpt.ops.registered_kinds(), symgpt.families.families()  # every op and family (they load lazily)
name, T = {name!r}, {T}
t0 = time.perf_counter()
m = symgpt.load(name, B=1, T=T)
p, f = m.params.value, m.quantity("flops.forward").value
t1 = time.perf_counter()
m = symgpt.load(name, B=1, T=T)                     # again: the graph and breakdowns are cached
p2, f2 = m.params.value, m.quantity("flops.forward").value
t2 = time.perf_counter()
print(json.dumps(dict(params=int(p), flops=int(f), cold=t1 - t0, warm=t2 - t1)))
"""

META = """
import json, time
t0 = time.perf_counter()
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import GPT2Config, GPT2LMHeadModel
from transformers.utils import logging
logging.set_verbosity_error()
t1 = time.perf_counter()
times = []
for _ in range({runs}):
    s = time.perf_counter()
    cfg = GPT2Config(n_layer={L}, n_embd={d}, n_head={h}, n_positions={T}, vocab_size=50257,
                     attn_implementation="eager")       # SDPA's mask check calls .item(): not on meta
    with torch.device("meta"):
        model = GPT2LMHeadModel(cfg)
    n = sum(p.numel() for p in model.parameters())
    idx = torch.zeros((1, {T}), dtype=torch.long, device="meta")
    with FlopCounterMode(display=False) as fc, torch.no_grad():
        model(input_ids=idx, attention_mask=torch.ones_like(idx), use_cache=False)
    times.append(time.perf_counter() - s)
    del model
print(json.dumps(dict(params=int(n), flops=int(fc.get_total_flops()), imports=t1 - t0, times=times)))
"""

SWEEP = """
import json, time
import numpy as np, symgpt, symgpt.model
from symgpt.sweep import sweep
B = {B}
m = symgpt.load("gpt2", V=50257, T_max=1024, h=64, B=B, T=1024)
grid = ["L=1:1000", "d=64:64000:64"]                # 1000 x 1000 = 1,000,000 configurations
times = []
for _ in range(2):                                  # cold (derives flops.train, compiles), then warm
    s = time.perf_counter()
    r = sweep(m, grid, columns=["params", "flops.train"], top=1, by="flops.train")
    times.append(time.perf_counter() - s)
best = r.rows[0]

def loop():                                         # the same closed forms, one point at a time
    V, Tm, T = 50257, 1024, 1024
    top = None
    for L in range(1, 1001):
        for d in range(64, 64001, 64):
            p = 12 * L * d * d + 13 * L * d + V * d + Tm * d + 2 * d
            f = 72 * B * T * L * d * d + 12 * B * T * T * L * d + 6 * B * T * V * d
            if top is None or f > top[3]:
                top = (L, d, p, f)
    return top

loops, top = [], None
for _ in range({loop_runs}):
    s = time.perf_counter()
    top = loop()
    loops.append(time.perf_counter() - s)

def by_hand():                                      # hand-written NumPy, for reference
    L = np.arange(1, 1001, dtype=np.int64)[:, None]
    d = np.arange(64, 64001, 64, dtype=np.int64)[None, :]
    p = 12 * L * d * d + 13 * L * d + 50257 * d + 1024 * d + 2 * d
    f = 72 * B * 1024 * L * d * d + 12 * B * 1024 * 1024 * L * d + 6 * B * 1024 * 50257 * d
    return int(p.max()), int(f.max())

hand = []
for _ in range({runs}):
    s = time.perf_counter()
    by_hand()
    hand.append(time.perf_counter() - s)
print(json.dumps(dict(times=times, loop=loops, hand=hand, best=best, loop_best=list(top) if top else None)))
"""


UNROLL = """
import json, time
import symgpt, symgpt.model
from symgpt.render.dot import dot_text
m = symgpt.load("gpt2-small", L=64)
dot_text(m)                                         # derivations cached: both draw from them
rolled, unrolled = [], []
for _ in range({runs}):
    s = time.perf_counter(); a = dot_text(symgpt.load("gpt2-small", L=64)); rolled.append(time.perf_counter() - s)
    s = time.perf_counter(); b = dot_text(symgpt.load("gpt2-small", L=64), unroll=True)
    unrolled.append(time.perf_counter() - s)
print(json.dumps(dict(rolled=rolled, unrolled=unrolled, nodes=b.count("label=<"))))
"""


def child(code: str, timeout: float = 1800) -> dict:
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"benchmark child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def wall(args: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        s = time.perf_counter()
        out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=1800)
        times.append(time.perf_counter() - s)
        if out.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed:\n{out.stderr[-3000:]}")
    return times


def med(xs) -> float:
    return statistics.median(xs)


def secs(x: float) -> str:
    return f"{x * 1e3:.1f} ms" if x < 1 else f"{x:.2f} s"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}×" if a / b >= 10 else f"{a / b:.2f}×"


def machine() -> dict:
    def version(pkg):
        try:
            return metadata.version(pkg)
        except metadata.PackageNotFoundError:
            return "not installed"

    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "load": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "commit": sha.stdout.strip() or "?",
        **{p: version(p) for p in ("symgpt", "sympy", "numpy", "networkx", "torch", "transformers")},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs of the light measurements (default 5)")
    ap.add_argument("--heavy-runs", type=int, default=3, help="runs of meta-device tracing, the PDF report "
                    "and the Python loop (default 3)")
    ap.add_argument("--no-pdf", action="store_true", help="skip the report-with-PDF measurement")
    ap.add_argument("-o", "--output", default=str(ROOT / "benchmarks" / "RESULTS.md"))
    a = ap.parse_args()
    info = machine()
    load_before = os.getloadavg()[0]
    say = lambda *x: print(*x, file=sys.stderr, flush=True)  # noqa: E731

    say("start-up ...")
    cache_dir = Path(tempfile.mkdtemp(prefix="symgpt-bench-cache-"))  # never the user's cache
    os.environ["SYMGPT_CACHE_DIR"] = str(cache_dir)
    params = [PY, "-m", "symgpt", "params", "gpt2-small"]
    start = {
        "python -c pass": wall([PY, "-c", "pass"], a.runs),
        'python -c "import sympy"': wall([PY, "-c", "import sympy"], a.runs),
        "symgpt --help": wall([PY, "-m", "symgpt", "--help"], a.runs),
        "symgpt params gpt2-small --no-cache": wall([*params, "--no-cache"], a.runs),
        "symgpt params gpt2-small (cold cache)": [],
    }
    for _ in range(a.runs):
        subprocess.run([PY, "-m", "symgpt", "cache", "clear"], capture_output=True, cwd=ROOT, check=True)
        start["symgpt params gpt2-small (cold cache)"] += wall(params, 1)
    start["symgpt params gpt2-small (warm cache)"] = wall(params, a.runs)
    shutil.rmtree(cache_dir, ignore_errors=True)
    say("derivation ...")
    derive = {name: dict(cold=[], warm=[]) for name in MODELS}
    for _ in range(2 * a.runs):  # interleaved, so that a change of load hits both models alike
        for name, cfg in MODELS.items():
            r = child(DERIVE.format(name=name, T=cfg["T"]))
            derive[name]["cold"].append(r["cold"])
            derive[name]["warm"].append(r["warm"])
            derive[name].update(params=r["params"], flops=r["flops"])
    meta = {}
    for name, cfg in MODELS.items():
        say(f"meta-device tracing of {name} ...")
        meta[name] = child(META.format(runs=a.heavy_runs, **cfg))
    say("sweep ...")
    runs = [child(SWEEP.format(B=8, runs=a.runs if i == 0 else 0, loop_runs=a.heavy_runs if i == 0 else 0))
            for i in range(a.runs)]             # a fresh interpreter per run: the cold sweep is what a CLI call does
    sw = dict(runs[0], cold=[r["times"][0] for r in runs], warm=[r["times"][1] for r in runs])
    say("sweep past 2**63 ...")
    runs = [child(SWEEP.format(B=64, runs=0, loop_runs=a.heavy_runs if i == 0 else 0)) for i in range(a.runs)]
    big = dict(runs[0], cold=[r["times"][0] for r in runs], warm=[r["times"][1] for r in runs])
    say("graph --unroll ...")
    unroll = child(UNROLL.format(runs=a.runs))
    graph = [PY, "-m", "symgpt", "graph", "gpt2-small", "--set", "L=64", "--format", "dot", "-o", "-"]
    unroll["cli_rolled"] = wall(graph, a.runs)
    unroll["cli_unrolled"] = wall([*graph, "--unroll"], a.runs)
    cli_sweep = wall([PY, "-m", "symgpt", "sweep", "gpt2", "--set", "V=50257", "--set", "T_max=1024",
                      "--set", "h=64", "--set", "B=8", "--set", "T=1024", "--grid", "L=1:1000", "--grid",
                      "d=64:64000:64", "--columns", "params,flops.train", "--top", "1", "--by",
                      "flops.train", "--no-progress"], a.runs)
    say("report ...")
    tmp = Path(tempfile.mkdtemp(prefix="symgpt-bench-"))
    try:
        report = {"--no-pdf": wall([PY, "-m", "symgpt", "report", "gpt2-small", "-o", str(tmp / "r"), "--no-pdf"],
                                   a.runs)}
        if not a.no_pdf:
            report["with PDF"] = wall([PY, "-m", "symgpt", "report", "gpt2-small", "-o", str(tmp / "p")],
                                      a.heavy_runs)
            pdfs = sorted(p.name for p in (tmp / "p").rglob("*.pdf"))
            report_note = f"PDF files written: {', '.join(pdfs) or 'none (no TeX?)'}"
        else:
            report_note = "PDF not measured (--no-pdf)"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    info["load_after"] = f"{os.getloadavg()[0]:.2f}"
    text = render(info, a, start, derive, meta, sw, cli_sweep, report, report_note, load_before, big, unroll)
    Path(a.output).write_text(text)
    say(f"wrote {a.output}")
    print(text)
    return 0


def render(info, a, start, derive, meta, sw, cli_sweep, report, report_note, load_before, past, unroll) -> str:
    sympy_s = med(start['python -c "import sympy"'])
    small, big = med(derive["gpt2-small"]["cold"]), med(derive["gpt3-175b"]["cold"])
    trace = {n: med(meta[n]["times"]) for n in MODELS}
    agree = all(derive[n]["params"] == meta[n]["params"] and derive[n]["flops"] == meta[n]["flops"]
                for n in MODELS)
    sweep_s, loop_s, hand_s = med(sw["cold"]), med(sw["loop"]), med(sw["hand"])
    warm_s, big_s, big_loop = med(sw["warm"]), med(past["warm"]), med(past["loop"])
    pass_s = med(start["python -c pass"])
    p_warm = med(start["symgpt params gpt2-small (warm cache)"])
    p_cold = med(start["symgpt params gpt2-small (cold cache)"])
    p_none = med(start["symgpt params gpt2-small --no-cache"])
    rolled, unrolled = med(unroll["rolled"]), med(unroll["unrolled"])
    cli_ro, cli_un = med(unroll["cli_rolled"]), med(unroll["cli_unrolled"])
    same_best = sw["best"] == sw["loop_best"]
    rep = med(report["--no-pdf"])

    def met(ok):
        return "yes" if ok else "**no**"

    rows = [
        ("GPT-2-small: params + forward FLOPs", secs(med(derive["gpt2-small"]["cold"])),
         f"{secs(trace['gpt2-small'])} (meta build + FlopCounterMode)",
         ratio(trace["gpt2-small"], small) + " faster", "", ""),
        ("GPT-3-175B: params + forward FLOPs", secs(big),
         f"{secs(trace['gpt3-175b'])} (meta build + FlopCounterMode)",
         ratio(trace["gpt3-175b"], big) + " faster", "≥ 10× faster", met(trace["gpt3-175b"] >= 10 * big)),
        ("GPT-3-175B vs GPT-2-small derivation", secs(big), secs(small), ratio(big, small),
         "≤ 1.2×", met(big <= 1.2 * small)),
        ("sweep of 1,000,000 configs (params + training FLOPs)", secs(sweep_s),
         f"{secs(loop_s)} (plain Python loop)", ratio(loop_s, sweep_s) + " faster", "< 1 s beyond start-up",
         met(sweep_s < 1)),
        ("sweep, evaluation (warm call) vs hand-written NumPy", secs(warm_s), f"{secs(hand_s)} (NumPy by hand)",
         f"{100 * hand_s / warm_s:.0f} %", "≥ 50 % of NumPy", met(hand_s >= 0.5 * warm_s)),
        ("sweep past 2⁶³ (B = 64), warm call", secs(big_s), f"{secs(big_loop)} (plain Python loop)",
         ratio(big_loop, big_s) + " faster", "≥ 5× the loop", met(big_loop >= 5 * big_s)),
        ("`symgpt graph gpt2-small --set L=64 --unroll --format dot`", secs(cli_un),
         f"{secs(cli_ro)} (rolled)", ratio(cli_un, cli_ro), "≤ 1.3×", met(cli_un <= 1.3 * cli_ro)),
        ("the same, drawing only (in-process, derivations cached)", secs(unrolled), f"{secs(rolled)} (rolled)",
         ratio(unrolled, rolled), "", ""),
        ("`symgpt report gpt2-small --no-pdf`", secs(rep), f"{secs(sympy_s)} (`python -c \"import sympy\"`)",
         ratio(rep, sympy_s), "a few ×", met(rep <= 5 * sympy_s)),
    ]
    if "with PDF" in report:
        pdf = med(report["with PDF"])
        rows.append(("`symgpt report gpt2-small` (with PDF)", secs(pdf), secs(sympy_s), ratio(pdf, sympy_s),
                     "a few ×", met(pdf <= 5 * sympy_s)))
    rows += [
        ("`symgpt --help`", secs(med(start["symgpt --help"])), secs(sympy_s),
         ratio(med(start["symgpt --help"]), sympy_s), "no SymPy import", ""),
        ("`symgpt params gpt2-small`, warm cache", secs(p_warm), f"{secs(pass_s)} (`python -c pass`)",
         ratio(p_warm, pass_s), "≤ 4× `python -c pass`", met(p_warm <= 4 * pass_s)),
        ("`symgpt params gpt2-small`, cold cache", secs(p_cold), secs(sympy_s), ratio(p_cold, sympy_s),
         "≤ 1.5× `import sympy`", met(p_cold <= 1.5 * sympy_s)),
        ("`symgpt params gpt2-small --no-cache`", secs(p_none), secs(sympy_s), ratio(p_none, sympy_s), "", ""),
    ]
    out = [
        "# Benchmarks",
        "",
        f"Generated by `python benchmarks/run.py --runs {a.runs} --heavy-runs {a.heavy_runs}` on "
        f"{info['date']} (commit {info['commit']}). Medians of {a.runs} runs ({2 * a.runs} for the "
        f"derivations; {a.heavy_runs} for meta-device tracing, the Python loop and the PDF report).",
        "",
        f"Machine: {info['cores']} cores ({info['cpu']}, {info['os']}), Python {info['python']}; "
        f"symgpt {info['symgpt']}, SymPy {info['sympy']}, NumPy {info['numpy']}, networkx {info['networkx']}, "
        f"torch {info['torch']}, transformers {info['transformers']}. Load average {info['load']} at the "
        f"start, {info['load_after']} at the end: **other jobs shared the CPUs**, so absolute times are "
        "noisy; the ratios, measured side by side in the same run, are the point.",
        "",
        "| measurement | symgpt | alternative | ratio | goal | met |",
        "|---|---:|---:|---:|---|---|",
        *[f"| {' | '.join(r)} |" for r in rows],
        "",
        "## Details",
        "",
        f"- Derivation: {2 * a.runs} runs per model, interleaved (GPT-2-small, GPT-3-175B, GPT-2-small, "
        "...), each in a fresh interpreter; SymPy, networkx and symgpt are imported first, "
        "then `load(name, B=1, T=T_max)`, `.params.value` and `.quantity(\"flops.forward\").value` are timed "
        "(the cold first call: the graph is built and every rule derived). Warm (a second load in the same "
        f"process, cached graph): {secs(med(derive['gpt2-small']['warm']))} (GPT-2-small), "
        f"{secs(med(derive['gpt3-175b']['warm']))} (GPT-3-175B). The block is derived once and costed "
        "×L, so the sizes never enter the derivation.",
        f"- Meta-device tracing: `GPT2LMHeadModel(GPT2Config(n_layer, n_embd, n_head, n_positions, "
        f"vocab_size=50257))` built under `torch.device(\"meta\")`, `sum(p.numel())`, then one forward of "
        f"(1, T) ids under `FlopCounterMode` (eager attention). Imports of torch + transformers, not "
        f"counted above: {secs(meta['gpt2-small']['imports'])}. Runs after the first reuse one process "
        "(warm: favourable to tracing).",
        f"- The counts agree: {'yes' if agree else '**NO**'} — symgpt's params and default-convention "
        "forward FLOPs equal the traced ones: "
        + "; ".join(f"{n}: {derive[n]['params']:,} params, {derive[n]['flops']:,} FLOPs "
                    f"(traced: {meta[n]['params']:,}, {meta[n]['flops']:,})" for n in MODELS) + ".",
        f"- Sweep: `sweep(gpt2, L=1..1000, d=64..64000 step 64, V=50257, T_max=1024, h=64, B=8, "
        f"T=1024; columns params, flops.train; --top 1 --by flops.train)` in a fresh interpreter per run, "
        f"after the imports: the first (cold) call derives flops.train and compiles, {secs(sweep_s)} (the "
        f"figure above); a second call in the same process {secs(med(sw['warm']))}. Hand-written NumPy of "
        f"the same closed forms: {secs(hand_s)}. Plain Python loop: "
        f"{secs(loop_s)}. Same best row: {'yes' if same_best else '**NO**'} ({sw['best']}). The CLI "
        f"(`symgpt sweep ...`, start-up included): {secs(med(cli_sweep))}.",
        f"- Start-up: `python -c pass` {secs(med(start['python -c pass']))}; "
        f"`python -c \"import sympy\"` {secs(sympy_s)}; `symgpt --help` {secs(med(start['symgpt --help']))} "
        "(imports neither SymPy nor networkx); `symgpt params gpt2-small` "
        f"{secs(p_none)} with `--no-cache` (SymPy + networkx + the derivation), {secs(p_cold)} with an "
        f"empty cache (the same, and two entries written), {secs(p_warm)} warm (two JSON entries read, no "
        "SymPy, no networkx; the cache lives in a temporary folder here).",
        f"- Sweep past 2⁶³: the same grid with B = 64 (training FLOPs up to 1.9 × 10¹⁹): cold call "
        f"{secs(med(past['cold']))}, warm {secs(big_s)}; the plain Python loop {secs(big_loop)}; same best "
        f"row: {'yes' if past['best'] == past['loop_best'] else '**NO**'} ({past['best']}).",
        f"- `graph --unroll`: `dot_text` of GPT-2-small with L = 64, rolled {secs(rolled)}, unrolled "
        f"{secs(unrolled)} ({unroll['nodes']} labelled boxes), derivations cached for both: the unrolled "
        "text is 64 copies of the block, so drawing it is more string work, not more derivation.",
        f"- Report: `symgpt report gpt2-small -o DIR --no-pdf` {secs(rep)}"
        + (f"; with PDF {secs(med(report['with PDF']))}" if "with PDF" in report else "")
        + f". {report_note}. The PDF (one pdflatex pass, started before the other parts are "
        "written) adds the difference between the two.",
        "",
        "Raw timings (seconds):",
        "",
        "```json",
        json.dumps({"start": start, "derive": derive, "meta": meta, "sweep": sw, "cli_sweep": cli_sweep,
                    "sweep_past_2_63": past, "unroll": unroll, "report": report, "load_before": load_before}, indent=1, default=str),
        "```",
        "",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())

"""A sweep of 1,000,000 configurations (parameters + training FLOPs) vs a plain Python loop over
the same closed form (and a hand-written NumPy version, for reference); the same sweep with
B = 64, whose training FLOPs pass 2**63 (the float pre-screen with its exact re-check); and the
same sweep through the CLI."""

from __future__ import annotations

from .common import PY, child, med, met, ratio, say, secs, wall


SWEEP = """
import json, time
import numpy as np, symgpt, symgpt.model.model
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

CLI = ["sweep", "gpt2", "--set", "V=50257", "--set", "T_max=1024", "--set", "h=64", "--set", "B=8", "--set",
       "T=1024", "--grid", "L=1:1000", "--grid", "d=64:64000:64", "--columns", "params,flops.train", "--top", "1",
       "--by", "flops.train", "--no-progress"]


def measure(opts) -> dict:
    say("sweep ...")
    runs = [child(SWEEP.format(B=8, runs=opts.runs if i == 0 else 0, loop_runs=opts.heavy_runs if i == 0 else 0))
            for i in range(opts.runs)]    # a fresh interpreter per run: the cold sweep is what a CLI call does
    sw = dict(runs[0], cold=[r["times"][0] for r in runs], warm=[r["times"][1] for r in runs])
    say("sweep past 2**63 ...")
    runs = [child(SWEEP.format(B=64, runs=0, loop_runs=opts.heavy_runs if i == 0 else 0)) for i in range(opts.runs)]
    big = dict(runs[0], cold=[r["times"][0] for r in runs], warm=[r["times"][1] for r in runs])
    return {"sweep": sw, "sweep_past_2_63": big, "cli_sweep": wall([PY, "-m", "symgpt", *CLI], opts.runs)}


def rows(res, ctx) -> list[tuple]:
    sw, past = res["sweep"], res["sweep_past_2_63"]
    sweep_s, loop_s, hand_s = med(sw["cold"]), med(sw["loop"]), med(sw["hand"])
    warm_s, big_s, big_loop = med(sw["warm"]), med(past["warm"]), med(past["loop"])
    return [
        ("sweep of 1,000,000 configs (params + training FLOPs)", secs(sweep_s),
         f"{secs(loop_s)} (plain Python loop)", ratio(loop_s, sweep_s) + " faster", "< 1 s beyond start-up",
         met(sweep_s < 1)),
        ("sweep, evaluation (warm call) vs hand-written NumPy", secs(warm_s), f"{secs(hand_s)} (NumPy by hand)",
         f"{100 * hand_s / warm_s:.0f} %", "≥ 50 % of NumPy", met(hand_s >= 0.5 * warm_s)),
        ("sweep past 2⁶³ (B = 64), warm call", secs(big_s), f"{secs(big_loop)} (plain Python loop)",
         ratio(big_loop, big_s) + " faster", "≥ 5× the loop", met(big_loop >= 5 * big_s)),
    ]


def details(res, ctx) -> list[str]:
    sw, past = res["sweep"], res["sweep_past_2_63"]
    return [
        f"- Sweep: `sweep(gpt2, L=1..1000, d=64..64000 step 64, V=50257, T_max=1024, h=64, B=8, "
        f"T=1024; columns params, flops.train; --top 1 --by flops.train)` in a fresh interpreter per run, "
        f"after the imports: the first (cold) call derives flops.train and compiles, {secs(med(sw['cold']))} (the "
        f"figure above); a second call in the same process {secs(med(sw['warm']))}. Hand-written NumPy of "
        f"the same closed forms: {secs(med(sw['hand']))}. Plain Python loop: "
        f"{secs(med(sw['loop']))}. Same best row: {'yes' if sw['best'] == sw['loop_best'] else '**NO**'} "
        f"({sw['best']}). The CLI (`symgpt sweep ...`, start-up included): {secs(med(res['cli_sweep']))}.",
        f"- Sweep past 2⁶³: the same grid with B = 64 (training FLOPs up to 1.9 × 10¹⁹): cold call "
        f"{secs(med(past['cold']))}, warm {secs(med(past['warm']))}; the plain Python loop "
        f"{secs(med(past['loop']))}; same best row: {'yes' if past['best'] == past['loop_best'] else '**NO**'} "
        f"({past['best']}).",
    ]

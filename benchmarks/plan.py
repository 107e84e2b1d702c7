"""Times ``symgpt plan`` over three spaces of GPT-3 175B (T = 2,048, 80 GB devices, 989 TFLOP/s,
450 GB/s inside a node of 8, 50 GB/s between nodes), every recompute policy, ZeRO 0-3, SP on
and off:

* ``small``: 1,024 devices, global batch 1,536, micro-batch sizes 1, 2, 4, vp 1-3 (the space this
  benchmark timed before plan was vectorised: 20,280 strategies);
* ``realistic``: 8,192 devices, global batch 1,536, micro-batch sizes 1-16, vp 1-4, cp up to 8;
* ``million``: 6,144 devices, global batch 36,864, micro-batch sizes 1-192, vp 1-24, cp up to
  64 -- a stress space wider than anyone would sweep (1,042,080 strategies), to show the rate.

    python benchmarks/plan.py [small|realistic|million ...] [--schedules 1f1b,dualpipe]

Prints, per space, the strategies priced, how many fit, the seconds taken (deriving the closed
forms, then pricing), strategies per second, and the best strategy. No test asserts a timing.

Measured on the shared 2-core development machine on 2026-11-30, with other jobs running beside
it (load average 6-18, so the figures vary by about 2x between runs). "before" is the code this
replaced, run on the same inputs: one derivation of memory, time and comm per (recompute, ZeRO,
SP, vp) choice, evaluated with Fractions. Its top rows equal the new ones exactly.

=========  ==========  ========  ===============  ===================  ====================
space      strategies  fit       before           after                after, per second
=========  ==========  ========  ===============  ===================  ====================
small      20,280      14,360    18.1 s (124 s    1.0-2.6 s            7,700-21,000
                                 in an earlier
                                 run)
realistic  36,288      31,141    146.5 s          1.3-2.6 s            14,000-28,000
million    1,042,080   603,851   not run (576     2.4-3.7 s            280,000-440,000
                                 choices)
=========  ==========  ========  ===============  ===================  ====================

Re-run on 2026-12-02 (same shared machine, load average 10-14) after plan took a ``Cluster`` and
a ``Search``: ``small`` priced 20,280 strategies, 11,348 fit, in 5.4 s; with ``--schedules
1f1b,dualpipe`` 25,050 strategies, 13,270 fit, in 32.1 s. The fit count is lower than the table's
14,360: the memory answers changed since that table was measured and the table was not re-run in
full.

DualPipe, 2026-12-02 (load average 5-11; each space in its own process, "before" and "after"
alternated). "before": DualPipe's run built op by op in Python for every (pp, m) and run at every
strategy. "after": the run built with NumPy (``derive/dualpipe_run.py``), evaluated depth by depth
keeping only the ends still waited for (about 1.5·pp depths: touching fresh memory is slow on this
machine), and run only where a strategy fits and its floor -- the busiest device's own work,
(m/2)·(T_F + T_B + T_W) over its two stages, plus its communication -- could be among the fastest
(elsewhere it is offered as [floor, ∞), which the top rows never keep); exact spans in 64-bit
integers where they fit. Same strategies, fit counts and best rows, byte for byte (small and realistic;
million's "before" did not finish):

=========  ==============  ==================  ==================  ====================
space      schedules       before              after               with DualPipe / without
=========  ==============  ==================  ==================  ====================
small      1f1b            3.5-4.8 s           3.7-4.0 s
small      1f1b,dualpipe   18.1-21.7 s         4.9-6.8 s           1.2-1.8x (was 5x)
realistic  1f1b            2.5-3.0 s           3.1-3.4 s
realistic  1f1b,dualpipe   16.3-19.0 s         4.2-4.7 s           1.2-1.5x (was 6x)
million    1f1b            4.1 s               5.4 s
million    1f1b,dualpipe   > 300 s (stopped)   8.5 s               1.6x
=========  ==============  ==================  ==================  ====================

What is left of the extra time is mostly deriving DualPipe's own closed forms (its stage times
and the parts it changes), once per run.

Most of a run is a fixed cost: deriving and compiling the 78 closed forms, each part of memory
and step time once per setting of the structural options it reads. In the million run that
took 2.7 s cold and 0.65 s with the model's derivations already cached. Pricing itself ran at
about 1,000,000 strategies a second (0.9-1.1 s for the million).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SPACES = {
    "small": dict(devices=1024, batch=1536, vps=(1, 2, 3), microbatch_sizes=(1, 2, 4), max_cp=8),
    "realistic": dict(devices=8192, batch=1536, vps=range(1, 5), microbatch_sizes=range(1, 17), max_cp=8),
    "million": dict(devices=6144, batch=36864, vps=range(1, 25), microbatch_sizes=range(1, 193), max_cp=64),
}


#: the schedules searched (``--schedules 1f1b,dualpipe`` on the command line adds DualPipe)
SCHEDULES = ("1f1b",)


def _plan(name: str):
    import symgpt
    from symgpt.derive.options import Machine
    from symgpt.derive.steptime import Cluster
    from symgpt.sweep.plan import Search, plan

    s = SPACES[name]
    m = symgpt.load("gpt3-175b", T=2048)
    cluster = Cluster(machine=Machine(device_memory=80 * 10**9, peak=989 * 10**12, link_bandwidth=450 * 10**9,
                                      node_bandwidth=50 * 10**9, node_size=8))
    search = Search(zero=(0, 1, 2, 3), vps=tuple(s["vps"]), microbatch_sizes=tuple(s["microbatch_sizes"]),
                    max_cp=s["max_cp"], schedules=SCHEDULES)
    t0 = time.perf_counter()
    r = plan(m, s["devices"], s["batch"], cluster, search, top=3)
    return r, time.perf_counter() - t0


def measure() -> dict:
    """Each space once, in this process, in order (the first pays the derivations; later ones
    reuse what the model caches): strategies priced, fitting, seconds (benchmarks/run.py)."""
    out = {}
    for name in SPACES:
        r, dt = _plan(name)
        out[name] = {"strategies": r.considered, "fit": r.fitting, "seconds": dt}
    return out


def rows(res: dict, ctx) -> list[tuple]:
    m = res["million"]
    return [(f"`plan` GPT-3 175B, {m['strategies']:,} strategies (6,144 devices)", f"{m['seconds']:.1f} s",
             f"{m['strategies'] / m['seconds']:,.0f} strategies/s", "", "10⁶ strategies in seconds",
             "yes" if m["strategies"] >= 10**6 and m["seconds"] < 10 else "**no**")]


def details(res: dict, ctx) -> list[str]:
    return ["- `plan` (`benchmarks/plan.py`, GPT-3 175B, T = 2048, 80 GB devices, ZeRO 0-3, 3 recompute "
            "policies, SP on/off): " + "; ".join(
                f"{n}: {v['strategies']:,} strategies, {v['fit']:,} fit, {v['seconds']:.1f} s" for n, v in res.items())
            + " (the first space pays the derivations)."]


def run(name: str) -> None:
    r, dt = _plan(name)
    print(f"{name}: strategies priced: {r.considered:,}; fit in 80 GB: {r.fitting:,}; seconds: {dt:.1f} "
          f"({r.considered / dt:,.0f} strategies/s)")
    if r.rows:
        print("  best:", {k: (str(v) if not isinstance(v, (int, str, bool)) else v) for k, v in r.rows[0].items()})


def main() -> None:
    global SCHEDULES
    args = sys.argv[1:]
    if "--schedules" in args:
        i = args.index("--schedules")
        SCHEDULES = tuple(args[i + 1].split(","))
        del args[i:i + 2]
    for name in args or list(SPACES):
        if name not in SPACES:
            raise SystemExit(f"unknown space {name!r}; known: {', '.join(SPACES)}")
        run(name)


if __name__ == "__main__":
    main()

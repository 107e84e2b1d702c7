"""The closed forms ``symgpt plan`` prices strategies with: few derivations, shared across the
structural choices (recompute, ZeRO stage, SP, vp) that do not change them.

Per pipeline stage (first, last), memory and step time are sums of *parts*, each derived once
per setting of the structural options it reads, with the degrees as SymPy symbols:

==============  =========================================================  ==================
part            quantity (summed)                                          reads
==============  =========================================================  ==================
states          memory.weights + memory.gradients + memory.optimizer       zero
activations     memory.activations                                         recompute, sp, vp,
                                                                           schedule
compute         time.compute                                               recompute
dp              comm.dp (bytes) / the dp bandwidth                         zero
tp              comm.tp / the tp bandwidth                                 recompute, sp
pp              comm.pp / the pp bandwidth                                 sp, vp
ep, cp          comm.ep, comm.cp / their bandwidths                        recompute
weight          m · T_W: the weight-gradient seconds of a step (only when  --
                a zero-bubble schedule is searched)
==============  =========================================================  ==================

memory.total = states + activations (``derive.memory.total``), time.step = compute ·
(1 + (pp − 1)/(vp·m)) + Σ comm/bandwidth (``derive.steptime.step``: compute, exposed
communication, the bubble). "vp" is two derivations: vp = 1 (1F1B) and vp a symbol (the
interleaved schedule, every vp > 1). The other options are fixed at none / 0 / off for the
parts that do not read them. The zero-bubble schedules (Qi et al. 2023, Table 1) take k·(pp − 1)
weight-gradient passes out of 1F1B's bubble: ZB-H1's (pp − 1)(T_F + T_B − T_W) is compute ·
(1 + (pp − 1)/m) − 2(pp − 1)/m · weight, ZB-H2's the same with 3 for 2; GPipe's bubble is 1F1B's.

Each part is compiled (``sweep.compile.Compiled``) and evaluated two ways: as float64 with a
rigorous error bound (an *interval*: value v and e with |v − exact| <= e), to choose; and
exactly (int64 or Fractions), where the intervals cannot decide.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from itertools import product

import numpy as np
import sympy

from ..core.symbols import CANONICAL
from .compile import Compiled, spread

DEGREES = ("tp", "pp", "dp", "cp", "ep", "microbatches")
SYMBOLS = {n: sympy.Symbol(f"n_{n}", integer=True, positive=True) for n in (*DEGREES, "vp")}
NAMES = {**CANONICAL, **SYMBOLS}
DIMS = ("dp", "tp", "pp", "ep", "cp")
MEMORY = ("memory.weights", "memory.gradients", "memory.optimizer")
#: part -> (the quantities it sums, the structural options it reads)
PARTS = {"states": (MEMORY, ("zero",)),
         "activations": (("memory.activations",), ("recompute", "sp", "vp", "schedule")),
         "compute": (("time.compute",), ("recompute",)), "dp": (("comm.dp",), ("zero",)),
         "tp": (("comm.tp",), ("recompute", "sp")), "pp": (("comm.pp",), ("sp", "vp")),
         "ep": (("comm.ep",), ("recompute",)), "cp": (("comm.cp",), ("recompute",))}
#: DualPipe's parts that read more: its point-to-point part sums each stage's two copies of the
#: gradient, on this rank's ZeRO shard (``derive.comm``)
DUALPIPE_READS = {"pp": ("sp", "vp", "zero")}
FIXED = {"recompute": "none", "zero": 0, "sp": False, "vp": 1, "schedule": "1f1b"}
#: weight-gradient passes each zero-bubble schedule takes out of 1F1B's bubble, per pp − 1
WEIGHT_PASSES = {"zb-h1": 2, "zb-h2": 3}
U = 2.0 ** -52  # twice the unit roundoff: every float rounding below is bounded by U·|value|


# --- fine-tuning (derive.finetune): a frozen base is planned with tp = cp = ep = 1 ----------------
def frozen_degrees(model) -> dict:
    """The degrees held at 1 when *model* has a frozen base (the splits of adapters over tensor,
    context and expert ranks are not modelled: ``derive.memory_setup``, ``derive.comm``)."""
    from ..derive.walk import has_frozen

    return {"tp": sympy.Integer(1), "cp": sympy.Integer(1), "ep": sympy.Integer(1)} if has_frozen(model.arch) else {}


def vp_class(vp):
    """The vp derivation a strategy uses: 1 (1F1B), or the symbol (interleaved)."""
    return 1 if vp == 1 else SYMBOLS["vp"]


class Forms:
    """Every part's closed form for every setting it reads, at both stages, compiled over *axes*."""

    def __init__(self, model, axes, cluster, choices: dict):
        from ..derive.layout import layout
        from ..derive.options import Training
        from ..derive.steptime import Priced

        self.bound = {k: v for k, v in model.bindings.items() if k.name != "B"}
        self.exprs, self.compiled, self.bandwidth, self.reads = {}, {}, {}, {}
        degrees = {n: SYMBOLS[n] for n in DEGREES}
        degrees.update(frozen_degrees(model))  # fine-tuning: tp, cp and ep held at 1
        opts, memory_opts = cluster.options(), cluster.training.options()
        for part, (names, reads) in PARTS.items():
            for setting in product(*(choices[r] for r in reads)):
                chosen = {**FIXED, **dict(zip(reads, setting))}
                if chosen["schedule"] != "1f1b" and chosen["vp"] != 1:
                    continue   # interleaving is 1F1B's
                for stage in ("first", "last"):
                    o = {**(opts if part == "compute" else memory_opts), **chosen, **degrees, "stage": stage}
                    exprs = {n: model.quantity(n, **o).expr.xreplace(self.bound) for n in names}
                    key = (part, stage, setting)
                    self.exprs[key] = exprs
                    self.compiled[key] = Compiled(sympy.Add(*exprs.values()), axes, part, NAMES)
        if any(k in WEIGHT_PASSES for k in choices.get("schedule", ())):
            self._weight(model, cluster, degrees, axes)
        if "dualpipe" in choices.get("schedule", ()):
            self._dualpipe(model, cluster, choices, degrees, axes)
        priced = Priced(model, replace(cluster, training=Training(layout(**degrees))))
        for dim in DIMS:
            self.bandwidth[dim] = Compiled(1 / priced.bandwidth(dim), axes, f"{dim} bandwidth", NAMES)
        self.reads.update({part: reads for part, (_, reads) in PARTS.items()})

    def _weight(self, model, cluster, degrees, axes) -> None:
        """The ``weight`` part, m · T_W per stage, and the zero-bubble form's regime checked once:
        T_W at most T_F and T_B for every strategy (``derive.steptime.split_bubble``)."""
        from ..derive.steptime import Cluster, Priced, split_bubble

        for stage in ("first", "last"):
            o = {**cluster.options(), **FIXED, **degrees, "stage": stage, "schedule": "zb-h1"}
            priced = Priced(model, Cluster.from_options(**o))
            times = tuple(t.xreplace(self.bound) for t in priced.stage_times())
            split_bubble(priced.lay, times, {})
            e = {"weight": times[2] * degrees["microbatches"]}
            self.exprs[("weight", stage, ())] = e
            self.compiled[("weight", stage, ())] = Compiled(e["weight"], axes, "weight", NAMES)
        self.reads["weight"] = ()

    def _dualpipe(self, model, cluster, choices, degrees, axes) -> None:
        """DualPipe's parts (two stages per device: every part but the activations, which read the
        schedule already, derived again under it) and ``dptime``: T_F, T_B, T_W of one micro-batch
        through a stage at each end and in the middle, per recompute policy (its step is the run's
        length on the stages' times, ``dualpipe_span``)."""
        from ..derive.steptime import Cluster, Priced

        memory_opts = cluster.training.options()
        for part, (names, reads) in PARTS.items():
            if "schedule" in reads:
                continue
            reads = DUALPIPE_READS.get(part, reads)
            for setting in product(*(choices[r] for r in reads)):
                chosen = {**FIXED, **dict(zip(reads, setting)), "schedule": "dualpipe"}
                if chosen["vp"] != 1 or chosen["zero"] == 3:   # ZeRO-3 under DualPipe: not priced (plan.zeros)
                    continue
                for stage in ("first", "last"):
                    o = {**(cluster.options() if part == "compute" else memory_opts), **chosen, **degrees,
                         "stage": stage}
                    exprs = {n: model.quantity(n, **o).expr.xreplace(self.bound) for n in names}
                    key = (part, stage, setting, "dualpipe")
                    self.exprs[key] = exprs
                    self.compiled[key] = Compiled(sympy.Add(*exprs.values()), axes, part, NAMES)
        pp = degrees["pp"]
        for rc in choices["recompute"]:
            o = {**cluster.options(), **FIXED, **degrees, "recompute": rc}
            priced = Priced(model, Cluster.from_options(**o))
            for kind, pre, post in (("first", 1, 0), ("middle", 0, 0), ("last", 0, 1)):
                share = (lambda where, pre=pre, post=post: 1 / pp if where == "stack"
                         else sympy.Integer({"pre": pre, "post": post}.get(where, 0)))
                for k, t in enumerate(priced._times(share)):
                    key = ("dptime", kind, (rc,), k)
                    self.exprs[key] = {"time": t.xreplace(self.bound)}
                    self.compiled[key] = Compiled(self.exprs[key]["time"], axes, "dptime", NAMES)
        self.reads["dptime"] = ("recompute",)

    def key(self, part: str, stage: str, choice: dict) -> tuple:
        if choice.get("schedule") == "dualpipe" and "schedule" not in self.reads[part]:
            reads = DUALPIPE_READS.get(part, self.reads[part])
            return (part, stage, tuple(choice[r] for r in reads), "dualpipe")
        return (part, stage, tuple(choice[r] for r in self.reads[part]))

    def time_key(self, kind: str, recompute: str, k: int) -> tuple:
        """The key of DualPipe's T_F (k = 0), T_B (1) or T_W (2) through a stage of *kind*."""
        return ("dptime", kind, (recompute,), k)


def dualpipe_spans(jobs) -> list:
    """The interval of DualPipe's step length for each (p, m, times) of *jobs*: *times* maps (kind,
    k) to the interval of T_F, T_B or T_W (k = 0, 1, 2) through a stage of that kind (first, middle,
    last) over strategies of *p* stages and *m* micro-batches. The longest path is monotone in the
    times: its value on the lower and upper ends bounds the exact one, each widened by the rounding
    of a path of n ops (``derive.dualpipe_run.span_batch``: runs of one m evaluated together)."""
    from ..derive.dualpipe_run import run_arrays, span_batch

    keys = [(kind, k) for kind in ("first", "middle", "last") for k in range(3)]
    lo_his = []
    for p, m, times in jobs:
        n = len(times[keys[0]][0])
        lo_hi = np.empty((9, 2 * n))
        for j, key in enumerate(keys):
            v, e = times[key]
            lo_hi[j, :n], lo_hi[j, n:] = v - e, v + e
        lo_his.append(lo_hi)
    out = []
    for (p, m, _), both in zip(jobs, span_batch([(p, m, x) for (p, m, _), x in zip(jobs, lo_his)])):
        n = len(both) // 2
        lo, hi = both[:n], both[n:]
        slack = 4 * (len(run_arrays(p, m)[0]) + 9) * U
        lo, hi = lo - np.abs(lo) * slack, hi + np.abs(hi) * slack
        out.append(((lo + hi) / 2, (hi - lo) / 2 * (1 + 4 * U)))
    return out


def interval(c: Compiled, pts) -> tuple[np.ndarray, np.ndarray]:
    """(v, e): float64 values of *c* at *pts* and bounds |v − exact| <= e (``Compiled.estimate``;
    exact values rounded where floats cannot say)."""
    est = c.estimate(pts) if c.denominator < 2 ** 1000 else None
    if est is None:
        v = np.array([float(x) for x in c.evaluate(pts)], dtype=np.float64)
        return v, np.abs(v) * U
    F, E = est
    F = np.asarray(spread(np.asarray(F, dtype=np.float64), pts), dtype=np.float64)
    D = float(c.denominator)
    v = F / D
    return v, (E / D) * (1 + 4 * U) + np.abs(v) * 2 * U


def add(a, b):
    v = a[0] + b[0]
    return v, (a[1] + b[1]) * (1 + 4 * U) + np.abs(v) * U


def mul(a, b):
    v = a[0] * b[0]
    return v, (np.abs(a[0]) * b[1] + np.abs(b[0]) * a[1] + a[1] * b[1]) * (1 + 4 * U) + np.abs(v) * U


def exact_values(c: Compiled, pts) -> list:
    """The exact values of *c* at *pts*: Python ints and Fractions."""
    return [x if isinstance(x, Fraction) else int(x) for x in c.evaluate(pts)]


def bubble_factor(pp: np.ndarray, vp: np.ndarray, m: np.ndarray):
    """1 + (pp − 1)/(vp·m) as an interval (integers below 2**53: one rounding each)."""
    f = (pp - 1).astype(np.float64) / (vp * m).astype(np.float64)
    return 1 + f, np.abs(f) * U + (1 + f) * U


def weight_factor(pp: np.ndarray, m: np.ndarray, k: int):
    """−k·(pp − 1)/m as an interval: what a zero-bubble schedule takes per unit of the weight part."""
    f = -(k * (pp - 1)).astype(np.float64) / m.astype(np.float64)
    return f, np.abs(f) * U

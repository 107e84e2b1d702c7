"""``symgpt plan``: every way to train a model on N devices, priced in one vectorised pass.

The strategies -- (tp, pp, dp, cp, ep, micro-batch size B, micro-batch count m, vp) that divide
the model and the cluster (``sweep.plan_space``), each with every recompute policy, ZeRO stage
and SP setting asked for -- are priced from a few closed forms (``sweep.plan_price``): the
parts of memory and step time, each derived once per setting of the structural options it reads,
with the degrees as SymPy symbols. The parts are evaluated over all strategies at once in
float64 with rigorous error bounds, and exactly where the bounds cannot decide, so that:

* a strategy fits when the busier of its first and last pipeline stage fits in device memory --
  decided exactly for every strategy (``fitting`` counts them);
* the strategies are ranked by the slower stage's step time (then memory, then the choices):
  every strategy whose time could be among the *top* smallest is evaluated exactly, and those
  are sorted exactly. The numbers shown are exact rationals, the same as ``memory.total``,
  ``time.step``, ``comm.total`` and MFU derived for that one strategy.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from fractions import Fraction

import numpy as np
import sympy

from ..core.errors import SymgptError
from ..core.symbols import CANONICAL
from ..derive.options import DEFAULT_NODE_SIZE
from ..derive.steptime import Cluster
from .plan_price import (DIMS, SYMBOLS, WEIGHT_PASSES, Forms, add, bubble_factor, exact_values,
                         frozen_degrees, interval, mul, vp_class, weight_factor)
from .plan_schedules import _dualpipe_exact, _dualpipe_floor, _dualpipe_span, eligible, zeros
from .plan_space import Points, _keep, axes_of, strategies

MAX_STRATEGIES = 20_000_000
CHUNK = 1 << 18  # strategies evaluated at once (bounds the memory)
PRUNE = 100_000  # candidates kept past 4·top before they are pruned against the threshold
RECOMPUTE_RANK = {"none": 0, "selective": 1, "full": 2}
SCHEDULE_RANK = {"1f1b": 0, "gpipe": 1, "zb-h1": 2, "zb-h2": 3, "dualpipe": 4}


@dataclass
class PlanResult:
    devices: int
    global_batch: int
    T: int
    memory_limit: object
    considered: int
    fitting: int
    rows: list[dict]
    notes: list[str] = field(default_factory=list)
    schedules: tuple = ("1f1b",)


def _fraction(x) -> Fraction:
    return Fraction(int(x.p), int(x.q)) if isinstance(x, sympy.Rational) else Fraction(x)


def _rational(x) -> sympy.Rational:
    return sympy.Rational(x.numerator, x.denominator) if isinstance(x, Fraction) else sympy.Integer(x)


class _Top:
    """The strategies whose step time could be among the *k* smallest: the k smallest upper bounds
    seen give a threshold; a strategy stays while its lower bound is at most that."""

    def __init__(self, k: int):
        self.k, self.his, self.kept, self.count = k, np.empty(0), [], 0

    def threshold(self) -> float:
        return np.inf if len(self.his) < self.k else float(self.his.max())

    def offer(self, combo, positions, lo, hi) -> None:
        if not len(positions):
            return
        his = np.concatenate([self.his, hi])
        self.his = np.partition(his, self.k - 1)[:self.k] if len(his) > self.k else his
        keep = lo <= self.threshold()
        self.kept.append((combo, positions[keep], lo[keep]))
        self.count += int(keep.sum())
        if self.count > 4 * self.k + PRUNE:
            self.kept = self.survivors()
            self.count = sum(len(p) for _, p, _ in self.kept)

    def survivors(self) -> list:
        u = self.threshold()
        return [(c, p[lo <= u], lo[lo <= u]) for c, p, lo in self.kept if (lo <= u).any()]


@dataclass(frozen=True)
class Search:
    """The choices a plan tries for every split of the devices: recompute policies, ZeRO stages,
    sequence parallelism on or off, virtual stages, micro-batch sizes, and the largest
    context-parallel degree (repeats dropped, order kept; each checked once here)."""

    recompute: tuple = ("none", "selective", "full")
    zero: tuple = (1,)
    sp: tuple = (False, True)
    vps: tuple = (1, 2)
    microbatch_sizes: tuple = (1, 2, 4, 8)
    max_cp: int = 8
    # pipeline schedules beyond 1F1B (interleaving stays vp): searched only when listed
    schedules: tuple = ("1f1b",)

    def __post_init__(self):
        from ..core.conventions import check_choice
        from ..derive.checks import positive_int

        for f in fields(self):
            v = getattr(self, f.name)
            if f.name != "max_cp":
                object.__setattr__(self, f.name, tuple(dict.fromkeys(v)))
        for r in self.recompute:
            check_choice("recompute", r, tuple(RECOMPUTE_RANK))
        for k in self.schedules:
            check_choice("schedule", k, ("1f1b", "gpipe", *WEIGHT_PASSES, "dualpipe"))
        if not self.schedules:
            raise SymgptError("plan needs at least one schedule")
        for name, values in (("vp", self.vps), ("micro-batch size", self.microbatch_sizes)):
            for v in values:
                positive_int(name, v)
        positive_int("max cp", self.max_cp)


def plan(model, devices: int, global_batch: int, cluster: Cluster, search: Search = Search(), tokens=None,
         top: int = 10, parts: bool = False) -> PlanResult:
    """The *top* strategies that fit on *cluster* (its machine gives the device memory, peak and
    bandwidths; its training the precision, optimizer and convention), fastest first, among
    those *search* allows (each a dict: the degrees and choices, the per-device memory of the
    busier stage, bytes sent, bubble fraction, step time, MFU; with *parts*, that stage's
    weights, gradients, optimizer and activations too)."""
    if "T" not in model.sizes:
        raise SymgptError("plan needs the sequence length: --set T=...")
    if "B" in model.sizes:
        raise SymgptError("plan chooses the micro-batch size B itself: do not --set B (give --global-batch)")
    mach = cluster.machine
    missing = [f for f in ("device_memory", "peak", "link_bandwidth", "node_bandwidth") if getattr(mach, f) is None]
    if missing:
        raise SymgptError(f"plan needs the machine's {', '.join(f.replace('_', ' ') for f in missing)}")
    fixed = frozen_degrees(model)  # fine-tuning: a frozen base is planned with tp = cp = ep = 1
    if fixed:
        search = replace(search, sp=(False,))  # sequence parallelism needs tp > 1
    recompute, zero, sp = search.recompute, search.zero, search.sp
    cols = strategies(model, devices, global_batch, search.microbatch_sizes, search.vps, search.max_cp)
    if fixed:
        cols = _keep(cols, (cols["tp"] == 1) & (cols["cp"] == 1) & (cols["ep"] == 1))
    n = len(cols["tp"])
    if not n:
        raise SymgptError(f"no way to split {model.name} over {devices} devices with a global batch of "
                          f"{global_batch} (tp must divide the heads, pp the layers, dp the batch)")
    masks = {k: eligible(cols, search.schedules, k) for k in search.schedules}
    considered = len(recompute) * sum(len(zeros(zero, k)) * (int((mk & (cols["tp"] > 1)).sum()) if s else int(mk.sum()))
                                      for k, mk in masks.items() for s in sp)
    if considered > MAX_STRATEGIES:
        raise SymgptError(f"too many strategies ({considered:,}; at most {MAX_STRATEGIES:,}); narrow the choices")
    axes = axes_of(cols)
    classes = [c for c, present in ((1, (cols["vp"] == 1).any()), (SYMBOLS["vp"], (cols["vp"] > 1).any())) if present]
    forms = Forms(model, axes, cluster, {"recompute": recompute, "zero": zero, "sp": sp, "vp": classes,
                                         "schedule": search.schedules})
    limit = _fraction(mach.device_memory)
    top_k = _Top(max(top, 1))
    fitting = 0
    for start in range(0, n, CHUNK):
        fitting += _price_chunk(forms, axes, cols, np.arange(start, min(n, start + CHUNK)), limit,
                                search, classes, top_k)
    rows = _exact_rows(forms, axes, cols, top_k.survivors())
    rows.sort(key=lambda r: r["key"])
    where = _Where(model, forms, cluster, devices, global_batch, tokens, parts, search.schedules)
    rows = [_row(where, r) for r in rows[:top]]
    t = cluster.training
    node_size = DEFAULT_NODE_SIZE if mach.node_size is None else mach.node_size
    notes = [f"precision {t.precision or t.convention().precision}, optimizer {t.optimizer}; peak {mach.peak} FLOP/s "
             f"at efficiency {cluster.efficiency}; links {mach.link_bandwidth} B/s inside a node of {node_size}, "
             f"{mach.node_bandwidth} B/s between nodes",
             "memory: the busier of the first and last pipeline stage; time: the slower one; "
             "zero 1 = Megatron-LM's distributed optimizer"]
    if fixed:  # fine-tuning: what a frozen base changes in the plan
        ft = model.arch.flags.get("finetune")
        if ft is None:  # a frozen tower (derive.freeze)
            frozen, modules = model.arch.flags["freeze"]
            what, split = frozen.describe(modules), "a frozen part's collectives over those ranks are"
        else:
            what, split = ft.describe(), "the adapters' split over those ranks is"
        notes.append(f"{what}; tp, cp and ep held at 1 ({split} "
                     "not modelled); the data-parallel collectives carry the trainable parameters' "
                     "gradients (and, under ZeRO-1/2, their updated weights) only; under ZeRO-3 every weight, frozen "
                     "ones included, is sharded and gathered for forward and for backward (the ZeRO paper's stage 3), "
                     "the trainable gradients alone reduce-scattered (the backward gathers that FSDP's root unit and "
                     "DeepSpeed's modules without a gradient to pass back skip: not modelled, counted)")
    if "dualpipe" in search.schedules:
        notes.append("DualPipe (DeepSeek-V3 report, arXiv 2412.19437, Sec. 3.2.1 and Table 2): even pp, m even and at "
                     "least 2·pp; two stages' weights per device, pp + 1 micro-batches of activations; step time the "
                     "length of its run on each stage's T_F, T_B, T_W from the op graph (an F&B pair taking the "
                     "forward's and the full backward's times in turn), plus every byte of its communication "
                     "(its overlap of computation with communication not modelled); not searched at ZeRO-3")
    if search.schedules != ("1f1b",):
        notes.append("schedules: 1F1B and GPipe bubble (pp − 1)/(vp·m) of the compute; ZB-H1 (pp − 1)(T_F + T_B − T_W) "
                     "and ZB-H2 (pp − 1)(T_F + T_B − 2·T_W), T_W the weight-gradient time per micro-batch from the op "
                     "graph (Qi et al. 2023, Table 1); a pipeline of one stage is priced once, under the first")
    return PlanResult(devices, global_batch, int(model.sizes["T"]), mach.device_memory, considered, fitting, rows,
                      notes, search.schedules)


def _bounds(iv):
    v, e = iv
    lo, hi = v - e, v + e
    bad = ~(np.isfinite(lo) & np.isfinite(hi))
    return np.where(bad, -np.inf, lo), np.where(bad, np.inf, hi)


def _price_chunk(forms, axes, cols, chunk, limit, search: Search, classes, top_k) -> int:
    """Price the strategies at positions *chunk* under every structural choice *search* allows:
    count those that fit, offer them to *top_k*."""
    recompute, zero, sp = search.recompute, search.zero, search.sp
    whole = Points(axes, cols, chunk)
    memo = {}  # (part key, group or None) -> interval

    def at(key, group, pts, local):  # a part on the group (indexed from the chunk if it reads no sp, vp)
        if (key, group) not in memo:
            if "sp" in forms.reads[key[0]] or "vp" in forms.reads[key[0]]:
                memo[key, group] = interval(forms.compiled[key], pts)
            else:
                if (key, None) not in memo:
                    memo[key, None] = interval(forms.compiled[key], whole)
                memo[key, group] = tuple(a[local] for a in memo[key, None])
        return memo[key, group]

    bw = {d: interval(forms.bandwidth[d], whole) for d in DIMS}
    spans: dict = {}  # DualPipe's step lengths over the chunk, by recompute policy
    fitting = 0
    lim = float(limit)
    lim_lo, lim_hi = lim - abs(lim) * 2 ** -51, lim + abs(lim) * 2 ** -51
    for s, vc, sch in ((s, vc, k) for s in sp for vc in classes for k in search.schedules):
        if sch != "1f1b" and vc != 1:
            continue
        sub = {n: c[chunk] for n, c in cols.items()} if search.schedules != ("1f1b",) else None
        local = np.flatnonzero(((cols["vp"][chunk] > 1) == (vc != 1)) & ((cols["tp"][chunk] > 1) | (not s))
                               & (eligible(sub, search.schedules, sch) if sub else True))
        if not len(local):
            continue
        pos, group = chunk[local], (s, vc, sch)
        pts = Points(axes, cols, pos)
        bub = bubble_factor(cols["pp"][pos], cols["vp"][pos], cols["microbatches"][pos])
        cut = weight_factor(cols["pp"][pos], cols["microbatches"][pos], WEIGHT_PASSES[sch]) \
            if sch in WEIGHT_PASSES else None
        inv = {d: tuple(a[local] for a in bw[d]) for d in DIMS}
        for rc in recompute:
            for z in zeros(zero, sch):
                choice = {"recompute": rc, "zero": z, "sp": s, "vp": vc, "schedule": sch}
                def part(name, stage):
                    return at(forms.key(name, stage, choice), group, pts, local)

                mem = [_bounds(add(part("states", st), part("activations", st))) for st in ("first", "last")]
                lo, hi = np.maximum(mem[0][0], mem[1][0]), np.maximum(mem[0][1], mem[1][1])
                fits = hi <= lim_lo
                unsure = np.flatnonzero(~fits & ~(lo > lim_hi))
                if len(unsure):
                    fits[unsure] = [m <= limit for m in _exact_memory(forms, axes, cols, choice, pos[unsure])]
                fitting += int(fits.sum())
                time = []
                for stage in ("first", "last"):
                    comm = (np.zeros(len(local)), np.zeros(len(local)))
                    for d in DIMS:
                        comm = add(comm, mul(part(d, stage), inv[d]))
                    if sch == "dualpipe":  # the run's length (compute and bubble) on the stages' times
                        floor = _dualpipe_floor(forms, cols, chunk, whole, rc, spans)[local]
                        floor = _bounds(add((floor, np.zeros(len(local))), comm))[0]
                        # run only where the strategy fits and could be among the fastest (the floor, the
                        # busiest device's own work, at most the threshold); elsewhere [floor, inf)
                        wanted = fits & (floor <= top_k.threshold())
                        v, e = _dualpipe_span(forms, cols, chunk, whole, search.schedules, spans, local[wanted],
                                              (rc, recompute))
                        t = _bounds(add((v[local], e[local]), comm))
                        t = (np.where(wanted, t[0], floor), np.where(wanted, t[1], np.inf))
                    else:
                        t = mul(part("compute", stage), bub)
                        if cut is not None:
                            t = add(t, mul(part("weight", stage), cut))
                        t = _bounds(add(t, comm))
                    time.append(t)
                tlo, thi = np.maximum(time[0][0], time[1][0]), np.maximum(time[0][1], time[1][1])
                top_k.offer((rc, z, s, vc, sch), pos[fits], tlo[fits], thi[fits])
    return fitting


def _exact(forms, pts, part, stage, choice) -> list:
    return exact_values(forms.compiled[forms.key(part, stage, choice)], pts)


def _exact_memory(forms, axes, cols, choice, positions) -> list:
    pts = Points(axes, cols, positions)
    per = [[a + b for a, b in zip(_exact(forms, pts, "states", st, choice),
                                  _exact(forms, pts, "activations", st, choice))] for st in ("first", "last")]
    return [max(a, b) for a, b in zip(*per)]


def _exact_rows(forms, axes, cols, survivors) -> list[dict]:
    """The exact memory, time and bytes of every surviving strategy, with its sort key."""
    out = []
    for (rc, z, s, vc, sch), positions, _ in survivors:
        choice = {"recompute": rc, "zero": z, "sp": s, "vp": vc, "schedule": sch}
        pts = Points(axes, cols, positions)
        inv = {d: exact_values(forms.bandwidth[d], pts) for d in DIMS}
        stages = {}
        for st in ("first", "last"):
            mem = [a + b for a, b in zip(_exact(forms, pts, "states", st, choice),
                                         _exact(forms, pts, "activations", st, choice))]
            sent = [_exact(forms, pts, d, st, choice) for d in DIMS]
            time = _exact(forms, pts, "compute", st, choice)
            weight = _exact(forms, pts, "weight", st, choice) if sch in WEIGHT_PASSES else [0] * len(positions)
            stages[st] = (mem, sent, time, weight)
        if sch == "dualpipe":
            times = {(kind, k): exact_values(forms.compiled[forms.time_key(kind, rc, k)], pts)
                     for kind in ("first", "middle", "last") for k in range(3)}
        for j, p in enumerate(positions):
            v = {n: int(cols[n][p]) for n in cols}
            bubble = Fraction(v["pp"] - 1, v["vp"] * v["microbatches"])
            cut = Fraction(WEIGHT_PASSES.get(sch, 0) * (v["pp"] - 1), v["microbatches"])
            if sch == "dualpipe":
                span = _dualpipe_exact(v["pp"], v["microbatches"], {key: x[j] for key, x in times.items()})
            t, idle = {}, {}
            for st, (mem, sent, compute, weight) in stages.items():
                idle[st] = span - compute[j] if sch == "dualpipe" else compute[j] * bubble - cut * weight[j]
                t[st] = compute[j] + idle[st] + sum(sent[i][j] * inv[d][j] for i, d in enumerate(DIMS))
            memory = max(stages["first"][0][j], stages["last"][0][j])
            step = max(t.values())
            slow = "first" if t["first"] >= t["last"] else "last"
            key = (step, memory, RECOMPUTE_RANK[rc], z, s, v["tp"], v["pp"], v["vp"], v["dp"], v["cp"], v["ep"], v["B"],
                   SCHEDULE_RANK[sch])
            out.append({"key": key, "v": v, "choice": (rc, z, s, vc, sch), "memory": memory, "time": step,
                        "bubble": idle[slow] / stages[slow][2][j] if sch in (*WEIGHT_PASSES, "dualpipe") else bubble,
                        "comm": sum(x[j] for x in stages["first"][1]),
                        "stage": "first" if stages["first"][0][j] >= stages["last"][0][j] else "last"})
    return out


@dataclass(frozen=True)
class _Where:
    """What every row of a plan is priced under."""

    model: object
    forms: Forms
    cluster: Cluster
    devices: int
    global_batch: int
    tokens: object
    parts: bool
    schedules: tuple = ("1f1b",)


def _row(where: _Where, r) -> dict:
    model, forms, devices, peak = where.model, where.forms, where.devices, where.cluster.machine.peak
    v, (rc, z, s, vc, sch) = r["v"], r["choice"]
    t = _rational(r["time"])
    flops = model.quantity("flops.train", per="batch", hardware=False, **{
        **where.cluster.training.flops_options(), "recompute": rc}).expr
    flops = flops.xreplace(forms.bound).xreplace({CANONICAL["B"]: v["B"]})
    row = {"tp": v["tp"], "pp": v["pp"], "dp": v["dp"], "ep": v["ep"], "cp": v["cp"], "microbatch": v["B"],
           "microbatches": v["microbatches"], "vp": v["vp"], "recompute": rc, "zero": z, "sp": s,
           "memory": _rational(r["memory"]), "comm_bytes": _rational(r["comm"]),
           "bubble": _rational(r["bubble"]), "time": t,
           "mfu": flops * v["microbatches"] * v["dp"] / (devices * peak * t)}
    if where.parts:
        at = {SYMBOLS[n]: v[n] for n in ("tp", "pp", "dp", "cp", "ep", "microbatches", "vp")} | {CANONICAL["B"]: v["B"]}
        choice = {"recompute": rc, "zero": z, "sp": s, "vp": vc, "schedule": sch}
        exprs = {**forms.exprs[forms.key("states", r["stage"], choice)],
                 **forms.exprs[forms.key("activations", r["stage"], choice)]}
        row["parts"] = {part: exprs[f"memory.{part}"].xreplace(at)
                        for part in ("weights", "gradients", "optimizer", "activations")}
    if where.schedules != ("1f1b",):
        row["schedule"] = sch
    if where.tokens is not None:
        row["train_seconds"] = t * where.tokens / (where.global_batch * model.sizes["T"])
    return row

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

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import sympy

from ..core.errors import SymgptError
from ..core.symbols import CANONICAL
from .plan_price import (DIMS, SYMBOLS, Forms, add, bubble_factor, exact_values, interval, mul, vp_class)
from .plan_space import Points, axes_of, strategies

MAX_STRATEGIES = 20_000_000
CHUNK = 1 << 18  # strategies evaluated at once (bounds the memory)
PRUNE = 100_000  # candidates kept past 4·top before they are pruned against the threshold
RECOMPUTE_RANK = {"none": 0, "selective": 1, "full": 2}


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


def plan(model, devices: int, global_batch: int, memory_limit, peak, link_bandwidth, node_bandwidth,
         node_size: int = 8, efficiency=1, tokens=None, recompute=("none", "selective", "full"),
         zero=(1,), sp=(False, True), vps=(1, 2), microbatch_sizes=(1, 2, 4, 8), max_cp: int = 8,
         precision: str = "mixed-bf16", optimizer: str = "adamw", convention=None, top: int = 10,
         parts: bool = False) -> PlanResult:
    """The *top* strategies that fit, fastest first (each a dict: the degrees and choices, the
    per-device memory of the busier stage, bytes sent, bubble fraction, step time, MFU; with
    *parts*, that stage's weights, gradients, optimizer and activations too)."""
    if "T" not in model.sizes:
        raise SymgptError("plan needs the sequence length: --set T=...")
    if "B" in model.sizes:
        raise SymgptError("plan chooses the micro-batch size B itself: do not --set B (give --global-batch)")
    recompute, zero, sp = (tuple(dict.fromkeys(x)) for x in (recompute, zero, sp))
    cols = strategies(model, devices, global_batch, microbatch_sizes, vps, max_cp)
    n = len(cols["tp"])
    if not n:
        raise SymgptError(f"no way to split {model.name} over {devices} devices with a global batch of "
                          f"{global_batch} (tp must divide the heads, pp the layers, dp the batch)")
    multi_tp = int((cols["tp"] > 1).sum())
    considered = len(recompute) * len(zero) * sum(multi_tp if s else n for s in sp)
    if considered > MAX_STRATEGIES:
        raise SymgptError(f"too many strategies ({considered:,}; at most {MAX_STRATEGIES:,}); narrow the choices")
    axes = axes_of(cols)
    opts = {"precision": precision, "optimizer": optimizer, "peak": peak, "efficiency": efficiency,
            "link_bandwidth": link_bandwidth, "node_bandwidth": node_bandwidth, "node_size": node_size}
    if convention:
        opts["convention"] = convention
    classes = [c for c, present in ((1, (cols["vp"] == 1).any()), (SYMBOLS["vp"], (cols["vp"] > 1).any())) if present]
    forms = Forms(model, axes, opts, {"recompute": recompute, "zero": zero, "sp": sp, "vp": classes})
    limit = _fraction(memory_limit)
    top_k = _Top(max(top, 1))
    fitting = 0
    for start in range(0, n, CHUNK):
        fitting += _price_chunk(forms, axes, cols, np.arange(start, min(n, start + CHUNK)), limit,
                                recompute, zero, sp, classes, top_k)
    rows = _exact_rows(forms, axes, cols, top_k.survivors())
    rows.sort(key=lambda r: r["key"])
    rows = [_row(model, forms, r, devices, global_batch, peak, tokens, convention, parts) for r in rows[:top]]
    notes = [f"precision {precision}, optimizer {optimizer}; peak {peak} FLOP/s at efficiency {efficiency}; "
             f"links {link_bandwidth} B/s inside a node of {node_size}, {node_bandwidth} B/s between nodes",
             "memory: the busier of the first and last pipeline stage; time: the slower one; "
             "zero 1 = Megatron-LM's distributed optimizer"]
    return PlanResult(devices, global_batch, int(model.sizes["T"]), memory_limit, considered, fitting, rows, notes)


def _bounds(iv):
    v, e = iv
    lo, hi = v - e, v + e
    bad = ~(np.isfinite(lo) & np.isfinite(hi))
    return np.where(bad, -np.inf, lo), np.where(bad, np.inf, hi)


def _price_chunk(forms, axes, cols, chunk, limit, recompute, zero, sp, classes, top_k) -> int:
    """Price the strategies at positions *chunk* under every structural choice: count those
    that fit, offer them to *top_k*."""
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
    fitting = 0
    lim = float(limit)
    lim_lo, lim_hi = lim - abs(lim) * 2 ** -51, lim + abs(lim) * 2 ** -51
    for s in sp:
        for vc in classes:
            local = np.flatnonzero(((cols["vp"][chunk] > 1) == (vc != 1)) & ((cols["tp"][chunk] > 1) | (not s)))
            if not len(local):
                continue
            pos, group = chunk[local], (s, vc)
            pts = Points(axes, cols, pos)
            bub = bubble_factor(cols["pp"][pos], cols["vp"][pos], cols["microbatches"][pos])
            inv = {d: tuple(a[local] for a in bw[d]) for d in DIMS}
            for rc in recompute:
                for z in zero:
                    choice = {"recompute": rc, "zero": z, "sp": s, "vp": vc}
                    mem, time = [], []
                    for stage in ("first", "last"):
                        def part(name):
                            return at(forms.key(name, stage, choice), group, pts, local)

                        mem.append(_bounds(add(part("states"), part("activations"))))
                        t = mul(part("compute"), bub)
                        for d in DIMS:
                            t = add(t, mul(part(d), inv[d]))
                        time.append(_bounds(t))
                    lo, hi = np.maximum(mem[0][0], mem[1][0]), np.maximum(mem[0][1], mem[1][1])
                    fits = hi <= lim_lo
                    unsure = np.flatnonzero(~fits & ~(lo > lim_hi))
                    if len(unsure):
                        fits[unsure] = [m <= limit for m in _exact_memory(forms, axes, cols, choice, pos[unsure])]
                    fitting += int(fits.sum())
                    tlo, thi = np.maximum(time[0][0], time[1][0]), np.maximum(time[0][1], time[1][1])
                    top_k.offer((rc, z, s, vc), pos[fits], tlo[fits], thi[fits])
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
    for (rc, z, s, vc), positions, _ in survivors:
        choice = {"recompute": rc, "zero": z, "sp": s, "vp": vc}
        pts = Points(axes, cols, positions)
        inv = {d: exact_values(forms.bandwidth[d], pts) for d in DIMS}
        stages = {}
        for st in ("first", "last"):
            mem = [a + b for a, b in zip(_exact(forms, pts, "states", st, choice),
                                         _exact(forms, pts, "activations", st, choice))]
            sent = [_exact(forms, pts, d, st, choice) for d in DIMS]
            time = _exact(forms, pts, "compute", st, choice)
            stages[st] = (mem, sent, time)
        for j, p in enumerate(positions):
            v = {n: int(cols[n][p]) for n in cols}
            bubble = Fraction(v["pp"] - 1, v["vp"] * v["microbatches"])
            t = {}
            for st, (mem, sent, compute) in stages.items():
                t[st] = compute[j] * (1 + bubble) + sum(sent[i][j] * inv[d][j] for i, d in enumerate(DIMS))
            memory = max(stages["first"][0][j], stages["last"][0][j])
            step = max(t.values())
            key = (step, memory, RECOMPUTE_RANK[rc], z, s, v["tp"], v["pp"], v["vp"], v["dp"], v["cp"], v["ep"], v["B"])
            out.append({"key": key, "v": v, "choice": (rc, z, s, vc), "memory": memory, "time": step,
                        "comm": sum(x[j] for x in stages["first"][1]),
                        "stage": "first" if stages["first"][0][j] >= stages["last"][0][j] else "last"})
    return out


def _row(model, forms, r, devices, global_batch, peak, tokens, convention, parts) -> dict:
    v, (rc, z, s, vc) = r["v"], r["choice"]
    t = _rational(r["time"])
    conv = {"convention": convention} if convention else {}
    flops = model.quantity("flops.train", per="batch", hardware=False, recompute=rc, **conv).expr
    flops = flops.xreplace(forms.bound).xreplace({CANONICAL["B"]: v["B"]})
    row = {"tp": v["tp"], "pp": v["pp"], "dp": v["dp"], "ep": v["ep"], "cp": v["cp"], "microbatch": v["B"],
           "microbatches": v["microbatches"], "vp": v["vp"], "recompute": rc, "zero": z, "sp": s,
           "memory": _rational(r["memory"]), "comm_bytes": _rational(r["comm"]),
           "bubble": sympy.Rational(v["pp"] - 1, v["vp"] * v["microbatches"]), "time": t,
           "mfu": flops * v["microbatches"] * v["dp"] / (devices * peak * t)}
    if parts:
        at = {SYMBOLS[n]: v[n] for n in ("tp", "pp", "dp", "cp", "ep", "microbatches", "vp")} | {CANONICAL["B"]: v["B"]}
        choice = {"recompute": rc, "zero": z, "sp": s, "vp": vc}
        exprs = {**forms.exprs[forms.key("states", r["stage"], choice)],
                 **forms.exprs[forms.key("activations", r["stage"], choice)]}
        row["parts"] = {part: exprs[f"memory.{part}"].xreplace(at)
                        for part in ("weights", "gradients", "optimizer", "activations")}
    if tokens is not None:
        row["train_seconds"] = t * tokens / (global_batch * model.sizes["T"])
    return row

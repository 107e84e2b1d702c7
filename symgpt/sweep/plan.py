"""``symgpt plan``: every way to train a model on N devices, priced in one vectorised pass.

The memory, communication and step-time derivations (``derive.memory``, ``comm``, ``steptime``)
are run once per *structural* choice (recompute, ZeRO stage, sequence parallelism, virtual
stages) with the degrees tp, pp, dp, cp, ep and the micro-batch count as SymPy symbols, and B
(the micro-batch size) free: one closed form per choice. Those are compiled
(``sweep.compile.Compiled``: exact int64 or Fractions, never floats) and evaluated at every
strategy that divides the model -- tp | h (and h_kv), pp·vp | L, cp | T, ep | E and ep | dp,
tp·pp·dp·cp = N, B·m·dp = the global batch, m a multiple of pp when interleaved -- then kept
when the busier pipeline stage fits in device memory, and ranked by the slower stage's step time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

import numpy as np
import sympy

from ..errors import SymgptError
from ..symbols import CANONICAL
from .compile import Compiled
from .grid import Axis

DEGREES = ("tp", "pp", "dp", "cp", "ep", "microbatches")
SYMBOLS = {n: sympy.Symbol(f"n_{n}", integer=True, positive=True) for n in DEGREES}
NAMES = {**CANONICAL, **{n: s for n, s in SYMBOLS.items()}}
MAX_STRATEGIES = 2_000_000


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


def _exact(x) -> sympy.Rational:
    if hasattr(x, "denominator") and not isinstance(x, (int, np.integer)):
        return sympy.Rational(int(x.numerator), int(x.denominator))
    return sympy.Integer(int(x))


def _divisors(n: int) -> list[int]:
    return [i for i in range(1, n + 1) if n % i == 0]


class _Points:
    """A Chunk-like set of explicit points (``Compiled.evaluate`` reads ``n``, ``index`` and
    ``values``)."""

    def __init__(self, axes: list[Axis], columns: dict[str, list[int]]):
        self.n = len(next(iter(columns.values())))
        self.index = tuple(np.asarray([a.values.index(v) for v in columns[a.name]], dtype=np.int64) for a in axes)
        self._axes = axes

    def values(self, i: int, exact: bool = False) -> np.ndarray:
        return self._axes[i].take(self.index[i], exact)


def _strategies(model, devices: int, batch: int, microbatch_sizes, vps, max_cp: int) -> list[dict]:
    from .. import roles

    sizes = model.sizes
    h, h_kv, T = sizes.get("h"), sizes.get("h_kv"), sizes["T"]
    layers = [g.repeat.xreplace(model.bindings) for g in model.arch.stacks()]
    experts = [g.repeat.xreplace(model.bindings) for g in model.arch.groups_with(roles.EXPERTS)]
    out = []
    for tp in _divisors(devices):
        if (h is not None and h % tp) or (h_kv is not None and h_kv % tp):
            continue
        for pp in _divisors(devices // tp):
            for cp in _divisors(devices // (tp * pp)):
                if cp > max_cp or T % cp:
                    continue
                dp = devices // (tp * pp * cp)
                if batch % dp:
                    continue
                for ep in _divisors(dp):
                    if ep > 1 and (not experts or any(not e.is_Integer or e % ep for e in experts)):
                        continue
                    for b in microbatch_sizes:
                        if (batch // dp) % b:
                            continue
                        m = batch // (dp * b)
                        for vp in vps:
                            if vp > 1 and (pp == 1 or m % pp):
                                continue
                            if any(not n.is_Integer or n % (pp * vp) for n in layers):
                                continue
                            out.append({"tp": tp, "pp": pp, "dp": dp, "cp": cp, "ep": ep, "B": b,
                                        "microbatches": m, "vp": vp})
    return out


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
    points = _strategies(model, devices, global_batch, microbatch_sizes, vps, max_cp)
    if not points:
        raise SymgptError(f"no way to split {model.name} over {devices} devices with a global batch of "
                          f"{global_batch} (tp must divide the heads, pp the layers, dp the batch)")
    if len(points) * len(recompute) * len(zero) * len(sp) > MAX_STRATEGIES:
        raise SymgptError("too many strategies; narrow the choices")
    cols_all = {n: [p[n] for p in points] for n in ("B", *DEGREES)}
    axes = [Axis(n, values=tuple(sorted(set(v)))) for n, v in cols_all.items()]
    base = {"precision": precision, "optimizer": optimizer, "peak": peak, "efficiency": efficiency,
            "link_bandwidth": link_bandwidth, "node_bandwidth": node_bandwidth, "node_size": node_size}
    if convention:
        base["convention"] = convention
    bound = {k: v for k, v in model.bindings.items() if k.name != "B"}
    rows, fitting, considered = [], 0, 0
    for rc, z, s, vp in product(recompute, zero, sp, vps):
        idx = [i for i, p in enumerate(points) if p["vp"] == vp and (p["tp"] > 1 or not s)]
        if not idx:
            continue
        considered += len(idx)
        chunk = _Points(axes, {n: [cols_all[n][i] for i in idx] for n in cols_all})
        opts = {**base, "recompute": rc, "zero": z, "sp": s, "vp": vp,
                **{n: SYMBOLS[n] for n in DEGREES}}
        mem_opts = {k: v for k, v in opts.items() if k not in ("peak", "efficiency", "link_bandwidth",
                                                               "node_bandwidth", "node_size")}

        def ev(name, **extra):
            o = {**(mem_opts if name.startswith(("memory", "comm")) else opts), **extra}
            return Compiled(model.quantity(name, **o).expr.xreplace(bound), axes, name, NAMES).evaluate(chunk)

        first, last = ev("memory.total"), ev("memory.total", stage="last")
        mem = np.maximum(first, last)
        ok = mem <= memory_limit
        fitting += int(ok.sum())
        if not ok.any():
            continue
        step = np.maximum(ev("time.step"), ev("time.step", stage="last"))
        comm = ev("comm.total")
        conv = {"convention": convention} if convention else {}
        model_flops = model.quantity("flops.train", per="batch", hardware=False, recompute=rc, **conv).expr
        flops = Compiled(model_flops.xreplace(bound), axes, "flops.train", NAMES).evaluate(chunk)
        for j in np.nonzero(ok)[0]:
            p = points[idx[j]]
            t = _exact(step[j])
            mfu = _exact(flops[j]) * p["microbatches"] * p["dp"] / (devices * peak * t)
            row = {"tp": p["tp"], "pp": p["pp"], "dp": p["dp"], "ep": p["ep"], "cp": p["cp"],
                   "microbatch": p["B"], "microbatches": p["microbatches"], "vp": vp, "recompute": rc,
                   "zero": z, "sp": s, "memory": _exact(mem[j]), "comm_bytes": _exact(comm[j]),
                   "bubble": sympy.Rational(p["pp"] - 1, vp * p["microbatches"]), "time": t,
                   "mfu": mfu}
            if parts:
                stage = "first" if first[j] >= last[j] else "last"
                row["parts"] = {}
                for part in ("weights", "gradients", "optimizer", "activations"):
                    e = model.quantity(f"memory.{part}", **{**mem_opts, "stage": stage}).expr.xreplace(bound)
                    row["parts"][part] = e.xreplace({SYMBOLS[n]: p[n] for n in DEGREES} | {CANONICAL["B"]: p["B"]})
            if tokens is not None:
                row["train_seconds"] = row["time"] * tokens / (global_batch * model.sizes["T"])
            rows.append(row)
    order = ["recompute", "zero", "sp", "tp", "pp", "vp", "dp", "cp", "ep", "microbatch"]
    rank = {"none": 0, "selective": 1, "full": 2}
    rows.sort(key=lambda r: (r["time"], r["memory"], *[rank.get(r[k], r[k]) for k in order]))
    notes = [f"precision {precision}, optimizer {optimizer}; peak {peak} FLOP/s at efficiency {efficiency}; "
             f"links {link_bandwidth} B/s inside a node of {node_size}, {node_bandwidth} B/s between nodes",
             "memory: the busier of the first and last pipeline stage; time: the slower one; "
             "zero 1 = Megatron-LM's distributed optimizer"]
    return PlanResult(devices, global_batch, int(model.sizes["T"]), memory_limit, considered, fitting,
                      rows[:top], notes)

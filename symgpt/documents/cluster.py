"""The cluster figures of a report: pipeline schedules (1F1B and interleaved) for an example split,
per-device memory across a handful of named strategies, and the bytes each device sends per step
by collective, with the step time on a named hardware profile.

Every number is the engine's: ``derive.pipeline`` runs the schedules, ``memory.*``, ``comm.*`` and
``time.step`` (``derive.steptime``) price each strategy under one precision policy and optimizer,
on the datasheet figures of ``hardware.hardware(HARDWARE)``. :func:`figures` computes them once
per model (the LaTeX section and the report's files share them).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import sympy

from ..derive.layout import larger_stage
from ..core.errors import SymgptError

PRECISION, OPTIMIZER = "mixed-bf16", "adamw"
#: the device profile the step times are priced on (a node of its ``devices_per_node``)
HARDWARE = "h100-sxm"
DEVICES = 8
MICROBATCHES = 8
MEMORY = ("weights", "gradients", "optimizer", "activations")


@dataclass(frozen=True)
class Strategy:
    name: str           # as a reader says it: "ZeRO-3 over DP 8"
    short: str          # a bar's label
    options: dict       # memory.* / comm.* / time.* options


@dataclass
class Priced:
    strategy: Strategy
    memory: dict            # part -> Quantity (memory.weights, ...)
    total: object           # memory.total
    comm: object            # comm.total
    dp: object              # comm.dp
    step: object            # time.step (parts compute/, comm/, bubble)
    sequences: sympy.Expr   # sequences per step: B · m · dp


@dataclass(frozen=True)
class Schedule:
    title: str
    p: int
    m: int
    v: int
    slots: tuple
    bubble: sympy.Rational      # idle / busy, from the run of the schedule
    paper: sympy.Rational       # (p − 1)/m, or (p − 1)/(v·m) interleaved
    formula: str                # the paper's formula, as text


@dataclass
class Figures:
    model: object
    hardware: object
    machine: dict                           # time.* options: peak, bandwidths, node size, efficiency
    split: tuple | None                     # (p, m, v) of the example pipeline, None if none fits
    schedules: list = field(default_factory=list)
    rows: list = field(default_factory=list)        # Priced, in the order of ``strategies``
    skipped: list = field(default_factory=list)     # (strategy name, why)
    numbers: list | None = None                     # ``summary``'s rows, computed once


def _fits(model, **options) -> bool:
    from ..derive.memory import setup

    try:
        setup(model, precision=PRECISION, optimizer=OPTIMIZER, **options)
    except SymgptError:
        return False
    return True


def split(model) -> tuple[int, int, int] | None:
    """The example pipeline: p = 4 stages (else 2) of m = 8 micro-batches, and the fewest chunks
    per device v > 1 that divide each stack's layers (None where no pipeline divides the model)."""
    for p in (4, 2):
        if not _fits(model, pp=p, microbatches=MICROBATCHES):
            continue
        for v in (2, 3, 4):
            if _fits(model, pp=p, vp=v, microbatches=MICROBATCHES):
                return p, MICROBATCHES, v
        return p, MICROBATCHES, 1
    return None


def strategies(model, pipeline) -> list[Strategy]:
    """Eight ways to train on one node of 8 devices: data parallel under each ZeRO stage, with
    full recomputation, tensor + sequence parallel, and the example pipeline (1F1B, interleaved)."""
    n = DEVICES
    out = [Strategy(f"DP {n}", f"DP {n}", {"dp": n})]
    out += [Strategy(f"DP {n}, ZeRO-{z}", f"ZeRO-{z}", {"dp": n, "zero": z}) for z in (1, 2, 3)]
    out.append(Strategy(f"DP {n}, full recompute", "recompute", {"dp": n, "recompute": "full"}))
    out.append(Strategy(f"TP 4 + SP, DP {n // 4}", "TP 4", {"tp": 4, "sp": True, "dp": n // 4}))
    if pipeline is not None:
        p, m, v = pipeline
        out.append(Strategy(f"PP {p} (1F1B, m = {m}), DP {n // p}", f"PP {p}", {"pp": p, "microbatches": m, "dp": n // p}))
        if v > 1:
            out.append(Strategy(f"PP {p} interleaved (v = {v}, m = {m}), DP {n // p}", f"PP {p}×{v}",
                                {"pp": p, "vp": v, "microbatches": m, "dp": n // p}))
    return out


def _schedules(pipeline) -> list[Schedule]:
    from ..derive.pipeline import bubble_fraction, schedule

    if pipeline is None:
        return []
    p, m, v = pipeline
    out = []
    for vv, title, paper, formula in ((1, "1F1B", sympy.Rational(p - 1, m), "(p - 1)/m"),
                                      (v, "interleaved 1F1B", sympy.Rational(p - 1, v * m), "(p - 1)/(v m)")):
        if vv == 1 and title != "1F1B":
            continue
        out.append(Schedule(title, p, m, vv, tuple(schedule(p, m, vv)), bubble_fraction(p, m, vv), paper, formula))
    return out


def _machine(hw) -> dict:
    return {"peak": sympy.Integer(hw.peak("bf16")), "efficiency": sympy.Integer(1),
            "link_bandwidth": sympy.Integer(hw.link_bandwidth), "node_bandwidth": sympy.Integer(hw.node_bandwidth),
            "node_size": hw.devices_per_node}


def _larger(stages: tuple, quantities: list):
    """The stage of ``derive.layout.larger_stage`` (by value where the sizes are bound, else by
    the sign of the closed forms' difference); where that sign is left open, the first."""
    if len(stages) == 1:
        return stages[0]
    first, last = (q.value if q.value is not None else q.expr for q in quantities)
    return larger_stage(first, last) or "first"


def _price(model, s: Strategy, machine: dict) -> Priced:
    from ..core.symbols import B
    from ..derive.steptime import Cluster

    o = {"precision": PRECISION, "optimizer": OPTIMIZER, **s.options}
    # a pipeline is as big as its busier stage and as slow as its slower one: the first stage
    # holds the most micro-batches in flight, the last the head (plan ranks strategies the same way)
    stages = ("first", "last") if o.get("pp", 1) > 1 else (None,)
    at = lambda stage: {**o, "stage": stage} if stage else o  # noqa: E731
    mem_stage = _larger(stages, [model.quantity("memory.total", **at(st)) for st in stages])
    on = lambda stage: Cluster.from_options(**at(stage), **machine)  # noqa: E731  (the step's options, once)
    time_stage = _larger(stages, [model.quantity("time.step", cluster=on(st)) for st in stages])
    memory = {part: model.quantity(f"memory.{part}", **at(mem_stage)) for part in MEMORY}
    seqs = B * o.get("microbatches", 1) * o.get("dp", 1)
    return Priced(s, memory, model.quantity("memory.total", **at(mem_stage)),
                  model.quantity("comm.total", **at(time_stage)), model.quantity("comm.dp", **at(time_stage)),
                  model.quantity("time.step", cluster=on(time_stage)), seqs.subs(model.bindings))


_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def figures(model) -> Figures:
    """The schedules and the priced strategies of *model* (computed once per model)."""
    if model in _CACHE:
        return _CACHE[model]
    from ..core.hardware import hardware

    hw = hardware(HARDWARE)
    pipeline = split(model)
    f = Figures(model, hw, _machine(hw), pipeline, _schedules(pipeline))
    for s in strategies(model, pipeline):
        try:
            f.rows.append(_price(model, s, f.machine))
        except SymgptError as e:
            f.skipped.append((s.name, str(e)))
    _CACHE[model] = f
    return f


def by_collective(q) -> dict:
    """A ``comm.*`` quantity's bytes summed by collective (``derive.comm.COLLECTIVES`` order)."""
    sums: dict = {}
    for kind, e in _collectives(q):
        sums[kind] = sums.get(kind, 0) + e
    return _in_order(sums)


def _collectives(q) -> list:
    """(collective, bytes) of each entry of a ``comm.*`` quantity."""
    from ..derive.comm import collective

    return [(collective(path), e) for path, e in q.breakdown if path != "none"]


def _in_order(by_kind: dict) -> dict:
    from ..derive.comm import COLLECTIVES

    return {k: by_kind[k] for k in COLLECTIVES if k in by_kind}


def exact_sums(model, pairs) -> dict | None:
    """{key: the exact value of the sum of its expressions} for (key, expression) *pairs*, at
    *model*'s sizes: each expression's value added (the number the expanded sum evaluates to,
    without expanding it); None where an expression's value is not a rational number."""
    out: dict = {}
    for key, e in pairs:
        v = model.value(e)
        if v is None or not v.is_Rational:
            return None
        out[key] = out.get(key, sympy.Integer(0)) + v
    return out


def zero_volume(model, row: Priced):
    """The data-parallel traffic in units of Ψ·(n − 1)/n elements (Ψ the parameters, n = dp; the
    ZeRO paper's 2Ψ and 3Ψ at large n), where a device holds every parameter (no TP, PP); else None."""
    from ..derive.comm import ring
    from ..derive.memory import setup

    o = row.strategy.options
    if o.get("tp", 1) != 1 or o.get("pp", 1) != 1 or row.dp.value is None:
        return None
    s = setup(model, precision=PRECISION, optimizer=OPTIMIZER, **o)
    if s.bytes.grad != s.bytes.weight:
        return None
    n = o.get("dp", 1)
    return sympy.Rational(row.dp.value) / (ring(n) * model.params.value * s.bytes.grad)


def summary(f: Figures) -> list[dict]:
    """Per priced strategy, its exact numbers (None where a size is unbound): memory by part and
    total (bytes), bytes sent by collective and in all, the ZeRO volume, the step time's compute,
    communication and bubble (seconds) and the sequences per step (computed once per figures)."""
    if f.numbers is not None:
        return f.numbers
    model = f.model
    count = sympy.expand(model.params.expr).as_coefficients_dict()
    out = []
    for r in f.rows:
        step = exact_sums(model, [(p.split("/")[0], e) for p, e in r.step.breakdown])
        if step is None:
            step = {p: model.value(e) for p, e in r.step.grouped(1)}
        comm = exact_sums(model, _collectives(r.comm))
        comm = _in_order(comm) if comm is not None else {k: model.value(e) for k, e in by_collective(r.comm).items()}
        out.append({"name": r.strategy.name, "short": r.strategy.short, "options": r.strategy.options,
                    "memory": {p: r.memory[p].value for p in MEMORY}, "memory_total": r.total.value,
                    "per_param": per_param(model, r, count),
                    "comm": comm, "comm_total": r.comm.value,
                    "zero_volume": zero_volume(model, r),
                    "time": {p: step.get(p, sympy.Integer(0)) for p in ("compute", "comm", "bubble")},
                    "step": r.step.value, "sequences": r.sequences})
    f.numbers = out
    return out


def per_param(model, row: Priced, count=None):
    """The weights, gradients and optimizer states in bytes per parameter, where each is a
    multiple of the parameter count (else None): expanded, a multiple c of the count has the
    count's terms, each c times the count's coefficient. (*count*: the count's terms, as
    ``expand(params).as_coefficients_dict()`` gives them, where the caller has them.)"""
    if count is None:
        count = sympy.expand(model.params.expr).as_coefficients_dict()
    ratios = []
    for part in MEMORY[:3]:
        terms = sympy.expand(row.memory[part].expr).as_coefficients_dict()
        found = {terms[t] / c for t, c in count.items()} if terms.keys() == count.keys() else ()
        if len(found) != 1:
            return None
        ratios.append(sympy.Rational(found.pop()))
    return ratios

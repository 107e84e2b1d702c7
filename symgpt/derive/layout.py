"""A parallel layout: how one training step is split over a cluster of devices.

Degrees (Megatron-LM's names): ``tp`` tensor parallel, ``pp`` pipeline stages, ``vp`` virtual
stages per device (the interleaved schedule), ``dp`` data parallel, ``cp`` context parallel (the
sequence split), ``ep`` expert parallel (carved out of the data-parallel ranks: ``ep`` divides
``dp``), ``microbatches`` per step (B is the micro-batch size). Devices = tp · cp · pp · dp. Where the
optimizer states live: ``zero`` (the ZeRO stage, Rajbhandari et al. 2020: 0 none, 1 optimizer
states, 2 + gradients, 3 + weights, sharded over the data-parallel ranks),
``distributed_optimizer`` (Megatron-LM's name for ZeRO-1) and ``offload`` (ZeRO-Offload).

Each degree is a positive integer -- or, inside ``symgpt plan``, a SymPy symbol, so that one
derivation is a closed form over every strategy. Hence the decisions that depend on a degree
are written as SymPy functions, not Python ``if``: :func:`several` is 0 at 1 and 1 above, and
``sympy.Min`` counts the micro-batches in flight; with integers they evaluate at once.

Where a pipeline puts things (the convention of Megatron-LM and of Narayanan et al. 2021):
each device of the pipeline holds L/pp layers of every stack (interleaved: vp chunks of
L/(pp·vp)); whatever comes before the first stack (the embeddings) sits on the first stage,
whatever comes after the last (final norm, head, loss) on the last. A tied head on pp > 1 keeps
a copy of the embedding matrix on the last stage (its gradient is summed between the two).
DualPipe (DeepSeek-V3 report, Sec. 3.2.1) puts stage r and stage pp − 1 − r on rank r: 2·L/pp
layers, and on both end ranks the embedding and the head (a tied head: one matrix serves both).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache

import sympy

from ..core.errors import SymgptError
from ..core.symbols import as_expr

STAGES = ("first", "last")
#: pipeline schedules (interleaved is 1f1b with vp > 1; the last three split the backward: derive.pipeline_zb)
SCHEDULES = ("1f1b", "gpipe", "zb-h1", "zb-h2", "dualpipe")
DEGREES = ("dp", "tp", "pp", "vp", "cp", "ep", "microbatches")
#: what can be offloaded to host memory -> the layout field that says so (derive.offload)
OFFLOAD = {"optimizer": "offload", "activations": "offload_activations"}
#: ZeRO stages (Rajbhandari et al. 2020): 0 none, 1 optimizer states, 2 + gradients, 3 + weights
ZERO_STAGES = (0, 1, 2, 3)


def degree(name: str, v) -> sympy.Expr:
    """A positive integer (or a plan's symbol) as a SymPy expression; anything else raises."""
    from .checks import positive_int

    return positive_int(name, v, symbolic=True)


@lru_cache(maxsize=1024)
def several(n) -> sympy.Expr:
    """1 when *n* > 1, 0 when *n* = 1 (n a positive integer or symbol)."""
    return sympy.Min(n - 1, 1)


def known(v) -> bool:
    return isinstance(v, sympy.Integer)


@dataclass(frozen=True)
class Layout:
    dp: sympy.Expr = sympy.Integer(1)
    tp: sympy.Expr = sympy.Integer(1)
    pp: sympy.Expr = sympy.Integer(1)
    vp: sympy.Expr = sympy.Integer(1)
    cp: sympy.Expr = sympy.Integer(1)
    ep: sympy.Expr = sympy.Integer(1)
    microbatches: sympy.Expr = sympy.Integer(1)
    sp: bool = False
    stage: str = "first"
    schedule: str = "1f1b"  # 1f1b | gpipe (interleaved: vp > 1)
    zero: int = 0
    distributed_optimizer: bool = False
    offload: bool = False
    # activation offloading (derive.offload): the saved activations of every layer but those in flight on the host
    offload_activations: bool = False
    # MoE load imbalance (derive.moe_load): the busiest expert-parallel rank's load, the experts' capacity
    imbalance: sympy.Expr = sympy.Integer(1)   # routed token copies it receives / the balanced share
    capacity_factor: sympy.Expr | None = None  # each expert takes at most C·k·tokens/E copies (None: no limit)

    @property
    def expert_load(self) -> sympy.Expr:
        """The busiest rank's expert work over the balanced share: min(imbalance, capacity factor)."""
        c = self.capacity_factor
        return self.imbalance if c is None else sympy.Min(self.imbalance, c)

    def routing_note(self, arch) -> str:
        """The MoE routing an answer on *arch* is priced under ('' for a model without experts)."""
        from ..graph import roles

        if not arch.groups_with(roles.EXPERTS):
            return ""
        if self.imbalance == 1 and self.capacity_factor is None:
            return ("MoE routing balanced (the default): every expert-parallel rank runs k·B·T/cp token copies "
                    "per MoE layer")
        cap = ("no capacity limit" if self.capacity_factor is None else f"capacity factor C = {self.capacity_factor} "
               "(capacity C·k·tokens/E per expert as in Fedus et al. 2021, Switch Transformer)")
        return (f"MoE routing imbalanced: the busiest expert-parallel rank receives X = {self.imbalance} × the "
                f"balanced k·B·T/cp token copies, {cap}; it runs min(X, C) = {self.expert_load} × the balanced "
                "expert work")

    @property
    def zero_stage(self) -> int:
        """The ZeRO stage the states are sharded at (Megatron-LM's distributed optimizer shards
        what ZeRO-1 shards)."""
        return max(self.zero, 1) if self.distributed_optimizer else self.zero

    @property
    def devices(self) -> sympy.Expr:
        return self.tp * self.cp * self.pp * self.dp

    @property
    def interleaved(self) -> bool:
        return self.vp != 1

    @property
    def dp_group(self) -> sympy.Expr:
        """The ranks a dense parameter is replicated over (its gradient is summed over them)."""
        return self.dp * self.cp

    @property
    def expert_dp_group(self) -> sympy.Expr:
        """The ranks an expert's parameter is replicated over (ep of the dp·cp hold other experts)."""
        return self.dp * self.cp / self.ep

    # --- where things sit -------------------------------------------------------------------
    @lru_cache(maxsize=4096)
    def share(self, where: str) -> sympy.Expr:
        """The fraction of a part (``stack``, ``pre``: before the stacks, ``post``: after them,
        ``copy``: a tied head's copy of the embedding) that this stage holds."""
        multi = several(self.pp)
        if self.schedule == "dualpipe" and self.pp != 1:
            # DualPipe (DeepSeek-V3 report, Sec. 3.2.1): rank r holds stage r and stage pp − 1 − r, so
            # both end devices hold the embedding and the head (a tied head: one matrix serves both)
            return {"stack": 2 / self.pp, "pre": sympy.Integer(1), "post": sympy.Integer(1),
                    "copy": sympy.Integer(0)}[where]
        if where == "stack":
            return 1 / self.pp
        first = self.stage == "first"
        if where == "pre":
            return sympy.Integer(1) if first else 1 - multi
        if where == "post":
            return 1 - multi if first else sympy.Integer(1)
        if where == "copy":
            return sympy.Integer(0) if first else multi
        raise AssertionError(where)

    @lru_cache(maxsize=4096)
    def in_flight(self, where: str) -> sympy.Expr:
        """Micro-batches whose activations this stage holds at its peak, per part: for a stack,
        in units of one micro-batch of *all* L layers (so × L/pp · count); for the embedding and
        head, a count of micro-batches.

        1F1B (PipeDream-Flush, Narayanan et al. 2021 Sec. 2.2.1): rank r runs pp − r − 1 warm-up
        forwards and one more before its first backward: min(pp − r, m) in flight. GPipe: all m.
        Interleaved (Sec. 2.2.2, Megatron-LM's schedule): rank r warms up with 2(pp − r − 1) +
        (vp − 1)·pp chunk forwards, plus one: min(that, vp·m) chunks of L/(pp·vp) layers; its
        first chunk (the embedding's, on rank 0) holds min(2·pp, m) micro-batches, the last
        chunk of rank pp − 1 (the head's) one -- as the run of the schedule shows
        (``derive.pipeline``); Megatron-LM's estimate scales the embedding by the stack's factor.
        ZB-H1 holds what 1F1B holds (its W passes keep only the smaller inputs of the weight
        gradients, which Qi et al. 2023 leave out as well); ZB-H2 min(2(pp − r) − 1, m), as the run of
        ``derive.pipeline_zb`` shows."""
        p, v, m = self.pp, self.vp, self.microbatches
        r = 0 if self.stage == "first" else p - 1
        if self.schedule == "dualpipe" and p != 1:
            if known(p) and known(m):
                return dualpipe_in_flight(int(p), int(m), r)[where]
            # a plan's degrees as symbols: the run's count on either end rank, Table 2's pp + 1 (pp of
            # them through the embedding's stage, one through the head's) -- what the run gives for every
            # even pp and m >= 2·pp tried (tests), and checked by the plan for each pp, m it prices
            return {"stack": (p + 1) / p, "pre": p, "post": sympy.Integer(1)}[where]
        if self.schedule == "gpipe":
            chunks, per = m, 1 / p
        elif self.schedule == "zb-h2":   # Qi et al. 2023: 2(pp − r) − 1 forwards before the first B
            chunks, per = sympy.Min(2 * (p - r) - 1, m), 1 / p
        elif self.interleaved:
            chunks, per = sympy.Min(2 * (p - r - 1) + (v - 1) * p + 1, v * m), 1 / (p * v)
        else:
            chunks, per = sympy.Min(p - r, m), 1 / p
        if where == "stack":
            return chunks * per
        if self.interleaved:  # the embedding is chunk 0 of the first device, the head the last
            return sympy.Min(2 * p, m) if where == "pre" else sympy.Integer(1)  # chunk of the last
        return chunks

    def describe(self) -> str:
        out = []
        for n in ("tp", "pp", "vp", "dp", "cp", "ep"):
            v = getattr(self, n)
            if v != 1:
                out.append(f"{n} = {v}")
        if self.sp:
            out.append("sequence parallel")
        if self.imbalance != 1 or self.capacity_factor is not None:
            out.append(f"MoE load: busiest rank {self.imbalance} × balanced"
                       + ("" if self.capacity_factor is None else f", capacity factor {self.capacity_factor}"))
        if self.pp != 1:
            out.append(f"{self.microbatches} micro-batches, "
                       f"{'interleaved' if self.interleaved else self.schedule} schedule, {self.stage} stage")
        elif self.microbatches != 1:
            out.append(f"{self.microbatches} micro-batches (gradient accumulation)")
        return ", ".join(out)


#: the fields of :class:`Layout` and their defaults (one device)
_FIELDS = {f.name: f.default for f in fields(Layout)}


def layout(**options) -> Layout:
    """A checked :class:`Layout` from keyword *options* named as its fields (``dp``, ``tp``,
    ``pp``, ``vp``, ``cp``, ``ep``, ``microbatches``, ``sp``, ``stage``, ``schedule``, ``zero``,
    ``distributed_optimizer``, ``offload``, ``offload_activations``), each not given at its default (one device).
    Model-independent checks; the model's are :func:`check_model`."""
    from ..core.conventions import check_choice

    unknown = [k for k in options if k not in _FIELDS]
    if unknown:
        raise SymgptError(f"unknown layout option {unknown[0]!r}")
    o = {**_FIELDS, **options}
    zero, sp, stage, schedule = o["zero"], o["sp"], o["stage"], o["schedule"]
    if isinstance(zero, bool) or not isinstance(zero, (int, sympy.Integer)) or zero not in ZERO_STAGES:
        raise SymgptError(f"zero must be an integer {ZERO_STAGES[0]}..{ZERO_STAGES[-1]}, got {zero!r}")

    vals = {n: degree(n, o[n]) for n in ("dp", "tp", "pp", "vp", "cp", "ep", "microbatches")}
    check_choice("stage", stage, STAGES)
    check_choice("schedule", schedule, SCHEDULES)
    load = _moe_load(o["imbalance"], o["capacity_factor"], vals["ep"])
    lay = Layout(**vals, sp=bool(sp), stage=stage, schedule=schedule, zero=int(zero),
                 distributed_optimizer=bool(o["distributed_optimizer"]), offload=bool(o["offload"]),
                 offload_activations=bool(o["offload_activations"]), **load)
    if lay.sp and known(lay.tp) and lay.tp == 1:
        raise SymgptError("sequence parallelism (sp) shards along the tensor-parallel group: set tp > 1")
    if lay.interleaved:
        if known(lay.pp) and lay.pp == 1:
            raise SymgptError("virtual stages (vp > 1) interleave a pipeline: set pp > 1")
        if schedule == "gpipe":
            raise SymgptError("the interleaved schedule (vp > 1) is a 1F1B schedule, not GPipe")
        if known(lay.pp) and known(lay.microbatches) and lay.microbatches % lay.pp:
            raise SymgptError(f"the interleaved schedule needs micro-batches ({lay.microbatches}) "
                              f"to be a multiple of pp ({lay.pp}) (Megatron-LM's requirement)")
    # the schedules that split the backward (zero-bubble, DualPipe): one chunk per stage, their sizes
    if schedule in ("zb-h1", "zb-h2", "dualpipe"):
        if lay.interleaved:
            raise SymgptError(f"--vp interleaves 1F1B; {schedule} runs one chunk per stage")
        if known(lay.pp) and known(lay.microbatches) and (lay.pp > 1 or schedule == "dualpipe"):
            from .pipeline_zb import check

            check(int(lay.pp), int(lay.microbatches), schedule)
    if lay.offload_activations and not (known(lay.pp) and lay.pp == 1):
        raise SymgptError("activation offloading is priced without a pipeline (pp = 1): under a pipeline the "
                          "micro-batches in flight decide what leaves the device, not modelled")
    if known(lay.ep) and known(lay.dp) and lay.dp % lay.ep:
        raise SymgptError(f"ep={lay.ep} must divide dp={lay.dp} (expert-parallel ranks are data-parallel ranks)")
    return lay


@lru_cache(maxsize=256)
def dualpipe_in_flight(p: int, m: int, r: int) -> dict:
    """Micro-batches rank *r* of a DualPipe run holds activations for at its peak, read from the run
    (``derive.pipeline_zb``, unit times): ``stack`` in units of one micro-batch of all L layers
    (its two stages' in-flight micro-batches × 1/pp each), ``pre`` those of the stage holding the
    embedding, ``post`` those of the stage holding the head. Counted at one moment: the run's
    peaks of the two directions fall together (checked; refused otherwise)."""
    from .pipeline_zb import schedule

    slots = [s for s in schedule(p, m, "dualpipe") if s.device == r]
    held, best, at = [0, 0], -1, (0, 0)
    for s in sorted(slots, key=lambda s: (s.start, s.kind != "F")):
        held[s.chunk] += 1 if s.kind == "F" else (-1 if s.kind in ("B", "BW") else 0)
        if sum(held) > best:
            best, at = sum(held), tuple(held)
    tops = [0, 0]
    for d in (0, 1):
        h = 0
        for s in sorted((s for s in slots if s.chunk == d), key=lambda s: (s.start, s.kind != "F")):
            h += 1 if s.kind == "F" else (-1 if s.kind in ("B", "BW") else 0)
            tops[d] = max(tops[d], h)
    if tuple(tops) != at:
        raise SymgptError(f"dualpipe on pp={p}, {m} micro-batches: the two directions' peaks fall apart on rank {r}; "
                          "its memory is not priced")
    first = 0 if r < p // 2 else 1            # the direction in which rank r holds stage 0 (the embedding)
    if min(r, p - 1 - r) != 0:
        first = None
    pre = at[first] if first is not None else 0
    post = at[1 - first] if first is not None else 0
    return {"stack": sympy.Rational(best, p), "pre": sympy.Integer(pre), "post": sympy.Integer(post)}


def _moe_load(imbalance, capacity, ep) -> dict:
    """The checked MoE load options: imbalance in [1, ep] (the busiest rank cannot receive more than
    every rank's tokens), a positive capacity factor."""
    from .checks import positive

    x = positive("imbalance", imbalance)
    if x < 1:
        raise SymgptError(f"imbalance is the busiest rank's load over the balanced share: at least 1, got {x}")
    if known(ep) and x > ep:
        raise SymgptError(f"imbalance {x} exceeds ep = {ep}: the busiest of {ep} expert-parallel ranks receives at "
                          f"most every rank's tokens")
    c = None if capacity is None else positive("capacity factor", capacity)
    return {"imbalance": x, "capacity_factor": c}


def check_model(lay: Layout, model) -> None:
    """The checks that need the model: whole heads per tensor-parallel rank, whole layers per
    stage, whole experts per expert-parallel rank, whole tokens per context-parallel rank."""
    from ..graph import roles

    sizes = model.sizes
    h = sizes.get("h")
    if known(lay.tp) and lay.tp > 1 and h is not None and h % lay.tp:
        raise SymgptError(f"tp={lay.tp} must divide the number of heads h={h} "
                          "(tensor parallelism gives each rank whole heads)")
    h_kv = sizes.get("h_kv")
    if known(lay.tp) and lay.tp > 1 and h_kv is not None and h_kv % lay.tp:
        raise SymgptError(f"tp={lay.tp} must divide the key/value heads h_kv={h_kv}")
    from .tensor_parallel_ssm import tp_refusal  # state-space layers: Megatron-LM's Mamba-2 mixer

    if known(lay.tp):
        why = tp_refusal(model, int(lay.tp))
        if why:
            raise SymgptError(why)
    arch = model.arch
    for g in arch.stacks():
        n = g.repeat.xreplace(model.bindings)
        split = lay.pp * lay.vp
        if known(split) and split > 1 and n.is_Integer and n % split:
            raise SymgptError(f"pp·vp = {split} must divide the {n} layers of {g.name} "
                              "(each pipeline stage holds whole layers)")
    if known(lay.ep) and lay.ep > 1:
        groups = arch.groups_with(roles.EXPERTS)
        if not groups:
            raise SymgptError(f"{model.name} has no experts: expert parallelism (ep={lay.ep}) needs a mixture of experts")
        for g in groups:
            n = g.repeat.xreplace(model.bindings)
            if n.is_Integer and n % lay.ep:
                raise SymgptError(f"ep={lay.ep} must divide the {n} experts of {g.name}")
    if (lay.imbalance != 1 or lay.capacity_factor is not None) and not arch.groups_with(roles.EXPERTS):
        raise SymgptError(f"{model.name} has no experts: --imbalance and --capacity-factor describe MoE routing")
    T = sizes.get("T")
    if known(lay.cp) and lay.cp > 1 and T is not None and T % lay.cp:
        raise SymgptError(f"cp={lay.cp} must divide the sequence length T={T}")


def larger_stage(first, last) -> str | None:
    """Which end stage of a pipeline has the larger *first* / *last* value or closed form (the
    busier stage's memory, the slower stage's step): ``"last"`` when the difference is positive
    for every positive size, ``"first"`` when it is never positive (ties: the first), None where
    its sign depends on the sizes. The middle stages hold only their layers, which both ends
    hold too, so one of the two ends is the pipeline's."""
    gap = sympy.expand(as_expr(last) - as_expr(first))
    if gap.is_positive:
        return "last"
    if gap.is_nonpositive:
        return "first"
    return None


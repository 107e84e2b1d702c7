"""Step time on a cluster: compute, exposed communication and the pipeline bubble; MFU and HFU;
time to train on D tokens and device-hours.

* ``time.compute``: the FLOPs this device runs per step (hardware FLOPs: recomputation counted),
  over ``peak · efficiency``. Every op's FLOPs are split over the tp·cp ranks and the device's
  pipeline stage takes its share (``derive.layout``): L/pp of each stack, the embedding on the
  first stage, the head on the last; × the micro-batches of a step. An expert-parallel rank runs
  the experts its tokens are routed to (balanced routing: the same FLOPs as without EP).
* ``time.comm``: each dimension's bytes (``comm.*``) over the bandwidth its group uses: the
  link inside a node (``link_bandwidth``, bytes/s per device) when the group fits in a node of
  ``node_size`` devices, else ``node_bandwidth``. Groups are laid out Megatron-LM's way, tp
  innermost, then cp, ep (inside dp), dp, pp: a group spans tp, tp·cp, tp·cp·ep, tp·cp·dp or
  all devices. Nothing is overlapped except, with ``overlap_dp``, the data-parallel collectives
  (hidden behind backward, Megatron-LM's --overlap-grad-reduce); DualPipe's overlap of computation
  with communication is not modelled either (its bytes are ``comm.*``'s, added in full).
* ``time.bubble``: the idle time of a pipeline, (pp − 1)/m of the compute for GPipe and 1F1B,
  (pp − 1)/(vp·m) interleaved (Narayanan et al. 2021 Sec. 2.2; ``derive.pipeline`` derives these
  fractions from the schedules themselves).
* ``time.step`` = compute + comm + bubble (``derive.time.step`` given ``cluster=``, or at its
  keyword edge the options of a :class:`Cluster`: a layout, a bandwidth, ...).
* ``time.mfu_cluster``, ``time.hfu``: model (hardware) FLOPs of the whole step / (devices · peak ·
  step time); ``time.to_train``: seconds to train on D tokens, D/(B·m·dp·T) steps;
  ``time.device_hours``: that × devices / 3600.
"""

from __future__ import annotations

import sympy

from dataclasses import dataclass, replace

from ..core.errors import SymgptError
from .checks import DEFAULT_PEAK, positive
from .quantity import Quantity
from ..core.symbols import T, as_expr
from .comm import DIMS, PARTS
from .flops import label
from .layout import Layout, larger_stage
from .memory_setup import build
from .options import DEFAULT_NODE_SIZE, Machine, Training, names, split
from .pipeline_zb import SPLIT
from .tensor_parallel import place


@dataclass(frozen=True)
class Cluster:
    """What a step on a cluster is priced under: the machine (peak, the bandwidths inside and
    between nodes, devices per node), the kernels' efficiency, whether the data-parallel
    collectives hide behind backward, and the training (layout, convention, precision, ...)."""

    machine: Machine = Machine()
    efficiency: object = 1
    overlap_dp: bool = False
    # offloading: the host-link transfers overlapped with compute (max), else added to it (sum)
    overlap_offload: bool = False
    training: Training = Training()

    def __post_init__(self):
        eff = positive("efficiency", self.efficiency, symbolic=True)
        if isinstance(eff, sympy.Rational) and eff > 1:
            raise SymgptError(f"efficiency must be at most 1, got {eff}")
        object.__setattr__(self, "efficiency", eff)
        object.__setattr__(self, "overlap_dp", bool(self.overlap_dp))
        object.__setattr__(self, "overlap_offload", bool(self.overlap_offload))

    @classmethod
    def from_options(cls, **options) -> "Cluster":
        """The keyword options of a ``time.*`` cluster quantity: the machine's, this class's own,
        and the rest the training's (``Training.from_options``)."""
        mach, rest = split(options, Machine)
        own, rest = split(rest, cls)
        for k in ("machine", "training"):
            if k in own:
                raise SymgptError(f"unknown option {k!r}")
        return cls(Machine(**mach), **own, training=Training.from_options(**rest))

    def options(self) -> dict:
        """The keyword options that make this cluster (:meth:`from_options` inverted)."""
        out = {**self.machine.options(), "efficiency": self.efficiency}
        if self.overlap_dp:
            out["overlap_dp"] = True
        if self.overlap_offload:
            out["overlap_offload"] = True
        return {**out, **self.training.options()}

    @classmethod
    def option_names(cls) -> frozenset:
        """The keyword options that only a cluster's step takes: the fields of the machine, of
        this class, of the layout and of the training (the counting convention's choices are
        the single device's too)."""
        return frozenset((*names(Machine), *names(cls), *names(Layout), *names(Training)))


class Priced:
    """A step-time derivation under a :class:`Cluster`: its setup resolved once."""

    def __init__(self, model, cluster: Cluster):
        self.cluster = cluster
        mach = cluster.machine
        self.peak = DEFAULT_PEAK if mach.peak is None else mach.peak
        self.efficiency = cluster.efficiency
        self.link, self.node = mach.link_bandwidth, mach.node_bandwidth
        self.node_size = sympy.Integer(DEFAULT_NODE_SIZE) if mach.node_size is None else mach.node_size
        self.overlap_dp = cluster.overlap_dp
        self.s = build(model, cluster.training)
        self.flops_options = cluster.training.flops_options()
        # a precision recipe's low-precision GEMMs (the linears whose inputs it casts) at that dtype's peak
        self.low_dtype, self.low_peak = self.s.bytes.gemm_dtype, mach.low_peak
        if self.low_dtype and self.low_peak is None:
            raise SymgptError(f"precision {self.s.precision} runs the linears' GEMMs in {self.low_dtype}: give a "
                              f"hardware profile with an {self.low_dtype} peak (--hardware) or --low-precision-peak")

    def rate(self, node) -> sympy.Expr:
        """FLOP/s op *node* runs at: the low-precision peak for a linear the precision recipe casts
        (``memory_activations.low_precision_linear``), else the peak; × the efficiency."""
        from .memory_activations import low_precision_linear

        if self.low_dtype and node is not None and low_precision_linear(self.s.model.arch, node):
            return self.low_peak * self.efficiency
        return self.peak * self.efficiency

    @property
    def lay(self):
        return self.s.lay

    def extent(self, dim: str) -> sympy.Expr:
        lay = self.lay
        return {"tp": lay.tp, "cp": lay.tp * lay.cp, "ep": lay.tp * lay.cp * lay.ep,
                "dp": lay.tp * lay.cp * lay.dp, "pp": lay.devices}[dim]

    def bandwidth(self, dim: str) -> sympy.Expr:
        if self.link is None or self.node is None:
            raise SymgptError(f"{dim} communication needs bandwidths: give --link-bandwidth and --node-bandwidth "
                              "(bytes/s per device inside a node and between nodes)")
        return sympy.Piecewise((self.link, self.extent(dim) <= self.node_size), (self.node, True))

    def notes(self, what: str) -> tuple[str, ...]:
        from ..core.numtext import sci

        bw = "" if self.link is None else (f"; link {sci(self.link)} B/s inside a node of {self.node_size}, "
                                           f"{sci(self.node)} B/s between nodes")
        host = self.cluster.machine.host_bandwidth
        if host is not None and (self.lay.offload or self.lay.offload_activations):
            bw += f"; host link {sci(host)} B/s per direction"
        routing = self.lay.routing_note(self.s.model.arch)  # MoE load imbalance: the routing priced
        low = (f" ({self.s.precision}: the linears it casts at the {self.low_dtype} peak {sci(self.low_peak)} "
               "FLOP/s, the other ops at the peak)") if self.low_dtype else ""
        return (f"{what}; seconds per step, per device ({self.lay.describe() or 'one device'}); peak "
                f"{sci(self.peak)} FLOP/s{low} at efficiency {self.efficiency}{bw}",
                f"convention {self.s.conv.name}: {self.s.conv.summary} [{self.s.conv.source}]") + \
            ((routing,) if routing else ()) + self.dualpipe_note()

    def dualpipe_note(self) -> tuple[str, ...]:
        """DualPipe's communication as priced (not overlapped with computation), where it runs."""
        if self.lay.schedule != "dualpipe" or self.lay.pp == 1:
            return ()
        from .comm import DUALPIPE_NOTE

        return (DUALPIPE_NOTE,)

    def quantity(self, name, parts, what, unit="s") -> Quantity:
        parts = [(p, sympy.expand(e)) for p, e in parts]
        parts = [(p, e) for p, e in parts if e != 0] or [("none", sympy.Integer(0))]
        return Quantity(name, tuple(parts), self.s.model.bindings, unit, label(self.s.conv, self.s.conv.name),
                        self.notes(what))

    # --- FLOPs ------------------------------------------------------------------------------
    def device_flops(self, hardware=True):
        """(op, FLOPs) this device runs per step."""
        m, lay = self.s.model, self.lay
        opts = {**self.flops_options, "per": "batch", "hardware": hardware}
        q = m.quantity("flops.train", **opts)
        arch = m.arch
        out = []
        for path, e in q.breakdown:
            node = path if path in arch.graph else None
            share = lay.share(place(arch, node)[0]) if node else 1 / lay.pp
            if node and lay.expert_load != 1 and place(arch, node)[1]:  # the busiest rank's experts (moe_load)
                share = share * lay.expert_load
            out.append((path, e * share * lay.microbatches / (lay.tp * lay.cp)))
        if lay.schedule == "dualpipe" and lay.pp != 1:  # two stages per device, m/2 micro-batches through each
            out = [(path, e / 2) for path, e in out]
        return out

    def step_flops(self, hardware=False) -> sympy.Expr:
        """The FLOPs of the whole step on every device (B·m·dp sequences)."""
        opts = {**self.flops_options, "per": "batch", "hardware": hardware}
        return self.s.model.quantity("flops.train", **opts).expr * self.lay.microbatches * self.lay.dp

    # --- time -------------------------------------------------------------------------------
    def compute(self):
        """(op, seconds) of this device's compute (made once: the bubble is a share of it)."""
        if "_compute" not in self.__dict__:
            arch = self.s.model.arch
            self._compute = [(p, e / self.rate(p if p in arch.graph else None)) for p, e in self.device_flops()]
        return list(self._compute)

    def comm(self):
        out = []
        for dim in DIMS:
            parts = PARTS[dim](self.s)
            if not parts or (dim == "dp" and self.overlap_dp):
                continue
            bw = self.bandwidth(dim)
            out += [(p, e / bw) for p, e in parts]
        return out

    def bubble_fraction(self) -> sympy.Expr:
        lay = self.lay
        if lay.schedule in SPLIT:
            return self.bubble()[0][1] / sympy.Add(*[e for _, e in self.compute()]) if lay.pp != 1 else sympy.Integer(0)
        return (lay.pp - 1) / (lay.vp * lay.microbatches)

    def bubble(self):
        c = sympy.Add(*[e for _, e in self.compute()])
        if self.lay.schedule == "dualpipe" and self.lay.pp != 1:
            return [("bubble", self.dualpipe_bubble())]
        if self.lay.schedule in SPLIT and self.lay.pp != 1:
            return [("bubble", split_bubble(self.lay, self.stage_times(), self.s.model.bindings))]
        return [("bubble", self.bubble_fraction() * c)] if self.lay.pp != 1 else []

    def host(self):
        """(part, seconds) on the host link of what is offloaded (``derive.offload``), not overlapped."""
        if not (self.lay.offload or self.lay.offload_activations):
            return []
        from .offload import traffic_parts

        bw = self.cluster.machine.host_bandwidth
        if bw is None:
            raise SymgptError("offloading crosses the host link: give --host-bandwidth (bytes/s per direction, "
                              "e.g. the PCIe link's)")
        parts = [(f"host/{p}", e / bw) for p, e in traffic_parts(self.s)]
        if not self.cluster.overlap_offload:
            return parts
        # overlapped: the step takes max(compute, transfers); what the transfers add beyond compute
        compute = sympy.Add(*[e for _, e in self.compute()])
        return [("host/transfers beyond compute", sympy.Max(0, sympy.Add(*[e for _, e in parts]) - compute))]

    # --- the zero-bubble schedules: a backward in two ---------------------------------------
    def stage_times(self):
        """(T_F, T_B, T_W): seconds of one micro-batch's forward, input gradient (with the
        recomputed forward, which runs before it) and weight gradient on this device, op by op
        (``flops.op_weight_backward``: the weight-gradient work of each op's backward rule)."""
        from .flops import op_backward, op_forward, op_weight_backward, resolve
        from .walk import recomputed

        return self._times(self.lay.share)

    def _times(self, share):
        """(T_F, T_B, T_W) of one micro-batch through the parts *share* ('pre', 'stack', 'post') gives."""
        from .flops import op_backward, op_forward, op_weight_backward, resolve
        from .walk import recomputed

        opts = {**self.flops_options, "per": "batch", "hardware": True}
        conv = resolve(opts.pop("convention", None), **opts)
        arch, lay = self.s.model.arch, self.lay
        again = recomputed(arch, conv.recompute)
        tf = tb = tw = sympy.Integer(0)
        for node, _ in arch.ops():
            k = arch.activity(node) * share(place(arch, node)[0]) / (lay.tp * lay.cp)
            if lay.expert_load != 1 and place(arch, node)[1]:  # the busiest rank's experts (moe_load)
                k = k * lay.expert_load
            f, w = op_forward(arch, node, conv), op_weight_backward(arch, node, conv)
            k = k / self.rate(node)
            tf += k * f
            tw += k * w
            tb += k * (op_backward(arch, node, conv) - w + (conv.recompute_passes * f if node in again else 0))
        return tuple(sympy.expand(x) for x in (tf, tb, tw))


    def dualpipe_times(self):
        """(T_F, T_B, T_W) of each of the pp stages: stage 0 with the embeddings, stage pp − 1 with
        the final norm, head and loss, each L/pp layers of every stack."""
        p = int(self.lay.pp)
        parts = {0: ("pre",), p - 1: ("post",)}
        return [self._times(lambda where, r=r: 1 / self.lay.pp if where == "stack"
                            else sympy.Integer(where in parts.get(r, ()))) for r in range(p)]

    def dualpipe_bubble(self) -> sympy.Expr:
        """This device's idle time in the run of DualPipe (``derive.pipeline_zb``) on the stages'
        own times: the step (first op to last, every device) less its own ops."""
        from .pipeline_zb import schedule

        lay, bind = self.lay, self.s.model.bindings
        times = [tuple(as_expr(x).xreplace(bind) for x in t) for t in self.dualpipe_times()]
        if any(not x.is_Rational for t in times for x in t):
            raise SymgptError("dualpipe's bubble is read from its run on the stages' times: bind every size "
                              "(e.g. --set B=1 --set T=1024)")
        slots = schedule(int(lay.pp), int(lay.microbatches), "dualpipe", stage_times=times)
        r = 0 if lay.stage == "first" else int(lay.pp) - 1
        span = max(x.end for x in slots) - min(x.start for x in slots)
        return span - sum((x.end - x.start for x in slots if x.device == r), sympy.Integer(0))


def split_bubble(lay: Layout, times, bindings) -> sympy.Expr:
    """The bubble of ZB-H1 or ZB-H2 (Qi et al. 2023, Table 1) from this device's stage times, where
    the paper's form holds: T_W at most T_F and T_B (the run of ``derive.pipeline_zb`` leaves more
    otherwise)."""
    from .pipeline_zb import paper_bubble

    tf, tb, tw = times
    for gap, what in ((tf - tw, "forward"), (tb - tw, "input-gradient backward")):
        g = sympy.expand(as_expr(gap).xreplace(bindings))
        if g.is_nonnegative is not True:
            raise SymgptError(f"{lay.schedule}: the paper's bubble needs the weight gradient W to take at most "
                              f"the {what}'s time; here that is "
                              f"{'false' if g.is_negative else 'open until the sizes are set'}")
    return paper_bubble(lay.schedule, lay.pp, tf, tb, tw)


def on_cluster(cluster: Cluster | None, options: dict) -> Cluster:
    """The edge of every ``time.*`` cluster quantity: *cluster* as given (a :class:`Cluster`,
    then no other option), or the keyword *options* made into one, once
    (:meth:`Cluster.from_options`)."""
    if cluster is None:
        return Cluster.from_options(**options)
    if not isinstance(cluster, Cluster):
        raise SymgptError(f"cluster must be a Cluster, got {type(cluster).__name__}")
    if options:
        raise SymgptError(f"a cluster's step takes its options in the Cluster, not beside it: {next(iter(options))}")
    return cluster


def _priced(model, cluster, options) -> Priced:
    return Priced(model, on_cluster(cluster, options))


def compute(model, cluster: Cluster | None = None, **options) -> Quantity:
    c = _priced(model, cluster, options)
    return c.quantity("time.compute", c.compute(), "compute: this device's FLOPs / (peak · efficiency)")


def comm(model, cluster: Cluster | None = None, **options) -> Quantity:
    c = _priced(model, cluster, options)
    what = "communication not overlapped: bytes / bandwidth per dimension" + \
        (" (data-parallel overlapped with backward)" if c.overlap_dp else "")
    return c.quantity("time.comm", c.comm(), what)


def bubble(model, cluster: Cluster | None = None, **options) -> Quantity:
    c = _priced(model, cluster, options)
    if c.lay.schedule == "dualpipe" and c.lay.pp != 1:
        from .pipeline_zb import SOURCES

        return c.quantity("time.bubble", c.bubble(),
                          f"pipeline bubble of DualPipe ({SOURCES['dualpipe']}): this device's idle time in the run "
                          "of the schedule (the order of DeepSeek's public implementation), each stage's T_F, T_B, "
                          "T_W from the op graph (stage 0 with the embeddings, stage pp − 1 with the head), an "
                          "overlapped F&B pair taking the forward's and the full backward's times in turn (no "
                          "overlap of computation with computation); compute: m/2 micro-batches through each of "
                          "the device's two stages")
    if c.lay.schedule in SPLIT and c.lay.pp != 1:
        from .pipeline_zb import SOURCES

        form = {"zb-h1": "(pp − 1)(T_F + T_B − T_W)", "zb-h2": "(pp − 1)(T_F + T_B − 2·T_W)"}[c.lay.schedule]
        return c.quantity("time.bubble", c.bubble(),
                          f"pipeline bubble of {c.lay.schedule} ({SOURCES[c.lay.schedule]}): {form}, T_F, T_B, T_W "
                          "this device's forward, input-gradient (with recomputation) and weight-gradient seconds per "
                          "micro-batch from the op graph, the paper's stages alike"
                          + (", the optimizer step without a synchronisation (its post-validation)"
                             if c.lay.schedule == "zb-h2" else ""))
    return c.quantity("time.bubble", c.bubble(), f"pipeline bubble: {c.bubble_fraction()} of the compute")


def step(model, cluster: Cluster | None = None, **options) -> Quantity:
    return step_on(model, on_cluster(cluster, options))


def step_on(model, cluster: Cluster) -> Quantity:
    """``time.step`` on *cluster*: compute + exposed communication + bubble."""
    c = Priced(model, cluster)
    parts = [(f"compute/{p}", e) for p, e in c.compute()] + [(f"comm/{p}", e) for p, e in c.comm()] + c.bubble()
    host = c.host()
    how = (" + max(0, host-link transfers − compute): the transfers overlapped with compute" if c.cluster.overlap_offload
           else " + host-link transfers of what is offloaded (not overlapped)")
    return c.quantity("time.step", parts + host, "step time = compute + exposed communication + bubble"
                      + (how if host else ""))


def _utilisation(model, hardware, cluster, options) -> Quantity:
    c = _priced(model, cluster, options)
    st = sympy.Add(*[e for _, e in pipeline_step_parts(model, c)])
    u = c.step_flops(hardware) / (c.lay.devices * c.peak * st)
    name = "time.hfu" if hardware else "time.mfu_cluster"
    return c.quantity(name, [("utilisation", u)],
                      f"{'hardware' if hardware else 'model'} FLOPs of the step / (devices · peak · step time "
                      "of the slower pipeline stage)", "")


def step_parts(c: Priced):
    return c.compute() + c.comm() + c.bubble() + c.host()


def at_stage(cluster: Cluster, stage: str) -> Cluster:
    """*cluster* with the device of pipeline stage *stage* (``first`` or ``last``) priced."""
    t = cluster.training
    return replace(cluster, training=replace(t, layout=replace(t.layout, stage=stage)))


def pipeline_step_parts(model, c: Priced) -> list:
    """The step parts of the pipeline as a whole: a step ends when its slowest stage does, and
    only the first and the last stage carry more than their layers (the embedding; the head),
    so the slower of those two. Whichever stage *c* prices, the MFU and the time to train are
    the pipeline's. Where the sizes leave the slower stage open, one part, Max(first, last)."""
    parts = step_parts(c)
    if c.lay.pp == 1:
        return parts
    other = "last" if c.lay.stage == "first" else "first"
    by_stage = {c.lay.stage: parts, other: step_parts(Priced(model, at_stage(c.cluster, other)))}
    total = {st: sympy.Add(*[e for _, e in ps]) for st, ps in by_stage.items()}
    slower = larger_stage(total["first"], total["last"])
    if slower is None:
        return [("step (the slower of the first and last stage)", sympy.Max(total["first"], total["last"]))]
    return by_stage[slower]


def mfu(model, cluster: Cluster | None = None, **options) -> Quantity:
    return _utilisation(model, False, cluster, options)


def hfu(model, cluster: Cluster | None = None, **options) -> Quantity:
    return _utilisation(model, True, cluster, options)


def to_train(model, tokens, cluster: Cluster | None = None, **options) -> Quantity:
    return _to_train(_priced(model, cluster, options), model, tokens)


def _to_train(c: Priced, model, tokens) -> Quantity:
    tokens = positive("tokens", tokens)
    lay = c.lay
    from ..core.symbols import B

    steps = tokens / (B * lay.microbatches * lay.dp * T)
    return c.quantity("time.to_train", [(p, e * steps) for p, e in pipeline_step_parts(model, c)],
                      f"seconds to train on D = {tokens} tokens: D / (B·m·dp·T) steps × step time "
                      "(of the slower pipeline stage)")


def device_hours(model, tokens, cluster: Cluster | None = None, **options) -> Quantity:
    c = _priced(model, cluster, options)
    q = _to_train(c, model, tokens)
    return c.quantity("time.device_hours", [(p, e * c.lay.devices / 3600) for p, e in q.breakdown],
                      "device-hours: time to train × devices / 3600", "device-hours")

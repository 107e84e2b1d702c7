"""Time from FLOPs: step time, throughput, MFU, training time, and the initial loss ln V.

All arithmetic is exact: a peak of 300·10¹² FLOP/s and an MFU of 2/5 are Rationals, so a step
time is an exact number of seconds (printers round it).

Quantities registered here (``flops.train`` options pass through: convention, recompute, ...):

* ``time.step``        [peak, mfu]          seconds per training step = FLOPs / (peak · MFU); given
  ``cluster=`` (a ``derive.steptime.Cluster``), the step on that cluster (see :func:`step`)
* ``time.throughput``  [peak, mfu]          tokens per second = B·T / step time
* ``time.mfu``         [peak, measured]     model FLOPs utilisation from a measured step time
* ``time.training``    [peak, mfu, tokens]  seconds to train on D tokens (FLOPs per token × D)
* ``loss.initial``     []                   ln V, the cross-entropy of a uniform guess (nats)

MFU uses model FLOPs (no recomputation counted, PaLM Appendix B); a step time at a given MFU
uses the same model FLOPs, so ``time.mfu`` inverts ``time.step``.
"""

from __future__ import annotations

import sympy

from .checks import DEFAULT_PEAK, positive  # noqa: F401  (DEFAULT_PEAK: part of this API)
from .quantity import Quantity
from ..core.errors import SymgptError
from ..core.numtext import sci
from ..core.symbols import B, T, V
from .walk import tokens


def _train(model, **flops_options) -> Quantity:
    flops_options.setdefault("per", "batch")
    flops_options["hardware"] = False  # model FLOPs: MFU, not HFU
    return model.quantity("flops.train", **flops_options)


def _scaled(q: Quantity, name: str, factor, unit: str, notes) -> Quantity:
    return Quantity(name, tuple((p, e * factor) for p, e in q.breakdown), q.bindings, unit,
                    q.convention, tuple(notes) + q.notes)


def step(model, peak=None, mfu=None, cluster=None, **flops_options) -> Quantity:
    """Seconds per training step.

    * One device (*cluster* None): ``flops.train`` model FLOPs / (*peak* · *mfu*); *peak*
      defaults to ``DEFAULT_PEAK``, *mfu* to 1; *flops_options* are ``flops.train``'s.
    * A cluster: *cluster*, a ``derive.steptime.Cluster`` (machine, efficiency, layout,
      training), priced as compute + exposed communication + pipeline bubble
      (``steptime.step_on``); it holds the peak and the efficiency, so *peak*, *mfu* and other
      options beside it are refused.

    The keyword edge (``model.quantity("time.step", tp=2, link_bandwidth=...)``, the option API):
    options that only a cluster takes (``steptime.Cluster.option_names()``: a layout field, a
    bandwidth, ``node_size``, ``efficiency``, ``overlap_dp``, ``precision``, ``optimizer``, ...)
    are turned into a ``Cluster`` once, here, with *peak* as its peak and *mfu* as its efficiency
    unless ``efficiency`` is given; past this line the choice is the *cluster* argument."""
    from . import steptime

    if cluster is None and steptime.Cluster.option_names() & set(flops_options):
        cluster = steptime.Cluster.from_options(**{"peak": DEFAULT_PEAK if peak is None else peak,
                                                   "efficiency": 1 if mfu is None else mfu, **flops_options})
    elif cluster is not None:
        given = [k for k, v in (("peak", peak), ("mfu", mfu)) if v is not None] + list(flops_options)
        if given:
            raise SymgptError(f"time.step on a cluster takes its options in the Cluster, not beside it: {given[0]}")
    if cluster is not None:
        return steptime.step_on(model, cluster)
    peak = positive("peak", DEFAULT_PEAK if peak is None else peak)
    mfu = positive("mfu", 1 if mfu is None else mfu, 1)
    q = _train(model, **flops_options)
    return _scaled(q, "time.step", 1 / (peak * mfu), "s",
                   ["seconds per step = flops.train / (peak · MFU)", f"peak {sci(peak)} FLOP/s, MFU {mfu}"])


def throughput(model, peak=None, mfu=None, **flops_options) -> Quantity:
    """Tokens per second: B·T over ``time.step`` at *peak* and *mfu* (one device)."""
    s = step(model, peak, mfu, **flops_options)
    n = tokens(model.arch)  # B·T; B·(T_enc + T_dec) for an encoder--decoder
    shown = "B·T" if n == B * T else "B·(" + " + ".join(str(g.length) for g in model.arch.stacks()) + ")"
    return Quantity("time.throughput", (("tokens", n / s.expr),), s.bindings, "tokens/s",
                    s.convention, (f"tokens per second = {shown} / step time",) + s.notes)


def mfu(model, measured, peak=DEFAULT_PEAK, **flops_options) -> Quantity:
    measured, peak = positive("measured step time", measured), positive("peak", peak)
    q = _train(model, **flops_options)
    return _scaled(q, "time.mfu", 1 / (measured * peak), "",
                   ["model FLOPs utilisation = flops.train / (measured step time · peak)",
                    f"measured step time {measured} s, peak {sci(peak)} FLOP/s"])


def training(model, tokens, peak=DEFAULT_PEAK, mfu=1, **flops_options) -> Quantity:
    tokens, peak, mfu = positive("tokens", tokens), positive("peak", peak), positive("mfu", mfu, 1)
    flops_options["per"] = "token"
    q = _train(model, **flops_options)
    return _scaled(q, "time.training", tokens / (peak * mfu), "s",
                   ["seconds to train on D tokens = flops.train per token · D / (peak · MFU)",
                    f"D = {sci(tokens)} tokens, peak {sci(peak)} FLOP/s, MFU {mfu}"])


def initial_loss(model) -> Quantity:
    vocab = [a["op"] for _, a in model.arch.ops() if a["op"].kind == "embedding"]
    size = vocab[0].num if vocab else V
    return Quantity("loss.initial", (("loss", sympy.log(size)),), model.bindings, "nats", "",
                    ("ln V: the cross-entropy of a uniform guess over the vocabulary",))


mfu.needs = ("a measured step time in seconds: 'symgpt time MODEL --measured SECONDS', or "
              "--option measured=SECONDS where the command takes --option")
training.needs = ("the number of training tokens D: 'symgpt time MODEL --tokens D', or "
                  "--option tokens=D where the command takes --option")

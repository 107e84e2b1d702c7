"""The options of every ``memory.*`` quantity, resolved once: the precision policy (bytes per
element of weights, gradients, activations, master copy, optimizer moments), the optimizer, ZeRO
stage and the parallel layout (``derive.layout``); and the Quantity every memory derivation returns.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.conventions import Convention, check_choice
from ..core.errors import SymgptError
from .quantity import Quantity
from .flops import label, resolve
from .layout import Layout, check_model, layout
from .shortcuts import expanded


@dataclass(frozen=True)
class Precision:
    """Bytes per element of each kind of state under a precision policy."""

    weight: int
    grad: int
    act: int
    master: int  # an fp32 master copy kept by the optimizer (mixed precision)
    state: int   # one optimizer moment


PRECISIONS = {
    "fp32": Precision(4, 4, 4, 0, 4),
    "bf16": Precision(2, 2, 2, 0, 2),
    "fp16": Precision(2, 2, 2, 0, 2),
    "mixed-bf16": Precision(2, 2, 2, 4, 4),
    "mixed-fp16": Precision(2, 2, 2, 4, 4),
    # Megatron-LM's bf16 training: gradients accumulated and all-reduced in fp32 (main_grad)
    "mixed-bf16-fp32grad": Precision(2, 4, 2, 4, 4),
}

#: optimizer -> its per-parameter states and the bytes of each (None: the policy's state bytes)
OPTIMIZERS = {
    "sgd": (),
    "momentum": (("momentum", None),),
    "adam": (("m", None), ("v", None)),
    "adamw": (("m", None), ("v", None)),
    "adam8bit": (("m", 1), ("v", 1)),
}


#: ZeRO stages (Rajbhandari et al. 2020): 0 none, 1 optimizer states, 2 + gradients, 3 + weights
ZERO_STAGES = (0, 1, 2, 3)


@dataclass(frozen=True)
class Setup:
    """Resolved options of one memory derivation."""

    model: object
    conv: Convention
    precision: str
    optimizer: str
    zero: int
    lay: Layout
    offload: bool = False

    @property
    def bytes(self) -> Precision:
        return PRECISIONS[self.precision]

    @property
    def dp(self):
        return self.lay.dp

    @property
    def tp(self):
        return self.lay.tp

    @property
    def sp(self) -> bool:
        return self.lay.sp


def _int(name, v, lo, hi=None) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, sympy.Integer)) or v < lo or (hi is not None and v > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise SymgptError(f"{name} must be an integer {rng}, got {v!r}")
    return int(v)


def setup(model, convention=None, precision=None, optimizer="adamw", zero=0, dp=1, tp=1, sp=False,
          pp=1, vp=1, cp=1, ep=1, microbatches=1, stage="first", schedule="1f1b",
          distributed_optimizer=False, offload=False, **overrides) -> Setup:
    conv = resolve(convention, **overrides)
    precision = precision or conv.precision
    check_choice("precision", precision, tuple(PRECISIONS))
    check_choice("optimizer", optimizer, tuple(OPTIMIZERS))
    zero = _int("zero", zero, ZERO_STAGES[0], ZERO_STAGES[-1])
    if distributed_optimizer:
        zero = max(zero, 1)  # Megatron-LM's distributed optimizer shards what ZeRO-1 shards
    lay = layout(dp=dp, tp=tp, pp=pp, vp=vp, cp=cp, ep=ep, microbatches=microbatches, sp=sp,
                 stage=stage, schedule=schedule)
    check_model(lay, model)
    if conv.dropout is not None and "dropout" in model.flags and model.flags["dropout"] != conv.dropout:
        model = model.with_(dropout=bool(conv.dropout))
    return Setup(model, conv, precision, optimizer, zero, lay, bool(offload))


def _notes(s: Setup, what: str) -> tuple[str, ...]:
    par = []
    if s.zero:
        over = f"dp = {s.dp}" if s.lay.cp == 1 else f"dp·cp = {s.lay.dp_group}"
        par.append(f"ZeRO stage {s.zero} over {over}")
    desc = s.lay.describe()
    if desc:
        par.append(desc)
    if s.offload:
        par.append("optimizer states offloaded to the host")
    where = ("per device: " + ", ".join(par)) if par else "one device"
    return (f"{what}; bytes, {where}; precision {s.precision}, optimizer {s.optimizer}",
            f"convention {s.conv.name}: {s.conv.summary} [{s.conv.source}]")


def _q(s: Setup, name: str, breakdown, what: str) -> Quantity:
    return Quantity(name, tuple((p, expanded(e)) for p, e in breakdown), s.model.bindings, "bytes",
                    label(s.conv, s.conv.name), _notes(s, what))

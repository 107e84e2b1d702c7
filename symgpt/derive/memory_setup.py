"""The options of every ``memory.*`` quantity, resolved once: the precision policy (bytes per
element of weights, gradients, activations, master copy, optimizer moments), the optimizer, ZeRO
stage and the parallel layout (``derive.layout``); and the Quantity every memory derivation returns.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.conventions import Convention
from .quantity import Quantity
from .flops import label
from .layout import ZERO_STAGES, Layout, check_model
from .memory_kernels import KERNELS  # a named kernel library's note: whose source its saved tensors are read from
from .options import OPTIMIZER_SOURCES, OPTIMIZERS, PRECISIONS, Precision, Training
from .shortcuts import expanded


__all__ = ["OPTIMIZERS", "PRECISIONS", "ZERO_STAGES", "Precision", "Setup", "Training", "build", "memory_quantity",
           "setup"]


@dataclass(frozen=True)
class Setup:
    """Resolved options of one memory derivation."""

    model: object
    conv: Convention
    precision: str
    optimizer: str
    lay: Layout

    @property
    def bytes(self) -> Precision:
        return PRECISIONS[self.precision]

    @property
    def zero(self) -> int:
        return self.lay.zero_stage

    @property
    def offload(self) -> bool:
        return self.lay.offload

    @property
    def dp(self):
        return self.lay.dp

    @property
    def tp(self):
        return self.lay.tp

    @property
    def sp(self) -> bool:
        return self.lay.sp


def setup(model, **options) -> Setup:
    """The setup of a memory derivation from its keyword options (the edge: they become a
    :class:`~symgpt.derive.options.Training` here, once)."""
    return build(model, Training.from_options(**options))


def build(model, t: Training) -> Setup:
    """The setup of a memory derivation under *t*: the convention resolved, the precision policy
    named (the convention's when *t* names none), the layout checked against the model."""
    conv = t.convention()
    precision = Precision.named(t.precision or conv.precision)
    check_model(t.layout, model)
    if t.layout.tp != 1 and model.arch.flags.get("finetune") is not None:
        from ..core.errors import SymgptError

        raise SymgptError("tensor parallelism of LoRA adapters is not modelled (how a framework splits "
                          "lora_A and lora_B varies); size fine-tuning with --tp 1")
    if conv.dropout is not None and "dropout" in model.flags and model.flags["dropout"] != conv.dropout:
        model = model.with_(dropout=bool(conv.dropout))
    return Setup(model, conv, precision.name, t.optimizer, t.layout)


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
    if s.lay.offload_activations:
        par.append("activations offloaded to the host per layer")
    where = ("per device: " + ", ".join(par)) if par else "one device"
    out = (f"{what}; bytes, {where}; precision {s.precision}, optimizer {s.optimizer}",
           f"convention {s.conv.name}: {s.conv.summary} [{s.conv.source}]")
    if s.lay.schedule == "dualpipe" and s.lay.pp != 1 and s.lay.pp.is_Integer and s.lay.microbatches.is_Integer:
        from .layout import dualpipe_in_flight

        r = 0 if s.lay.stage == "first" else int(s.lay.pp) - 1
        n = dualpipe_in_flight(int(s.lay.pp), int(s.lay.microbatches), r)
        out += (f"DualPipe (DeepSeek-V3 report, arXiv 2412.19437, Sec. 3.2.1 and Table 2): rank r holds stage r and "
                f"stage pp − 1 − r, so 2·L/pp layers' weights, gradients and optimizer states (Table 2's 2× "
                f"parameters); both end ranks hold the embedding and the head (a tied head: one matrix on the "
                f"device serves both); activations: {n['stack'] * s.lay.pp} micro-batches of L/pp layers in flight "
                f"at this rank's peak in the run of the schedule (Table 2: pp + 1), {n['pre']} of them through "
                f"the embedding's stage and {n['post']} through the head's",)
    if s.conv.implementation in KERNELS:
        out += (KERNELS[s.conv.implementation],)
    if s.optimizer in OPTIMIZER_SOURCES:  # a named optimizer with its source (paged AdamW)
        out += (OPTIMIZER_SOURCES[s.optimizer],)
    if s.bytes.source:  # a named precision recipe: its source
        out += (f"precision {s.precision}: {s.bytes.source}",)
    routing = s.lay.routing_note(s.model.arch)  # MoE load imbalance: the routing priced
    return out + ((routing,) if routing else ())


def memory_quantity(s: Setup, name: str, breakdown, what: str) -> Quantity:
    return Quantity(name, tuple((p, expanded(e)) for p, e in breakdown), s.model.bindings, "bytes",
                    label(s.conv, s.conv.name), _notes(s, what))

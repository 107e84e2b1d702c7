"""What every inference quantity is priced under: the convention, the bytes of each dtype
(quantization), the hardware (peak, bandwidth), and tensor parallelism.

Options (keyword arguments of every ``inference.*`` quantity; ``--option`` on the queries):

* ``convention``: ``default`` (a roofline per op: each op of the step takes max(FLOPs / peak,
  bytes / bandwidth), summed) or ``scaling-book`` (Austin et al., *How to Scale Your Model*,
  "All About Transformer Inference": 2 FLOPs per parameter per token, every parameter read,
  step time = KV-cache bytes / bandwidth + max(FLOPs / peak, parameter bytes / bandwidth));
* ``weight_bits`` 32|16|8|4 (the weights of the dense matmuls; default 16), ``group_size`` (a
  16-bit scale per group of that many weights, int8/int4 schemes), ``kv_bits`` 32|16|8|4
  (default: the activations'), ``act_bits`` 32|16|8 (8: int8 activations, the int8 peak),
  ``fp8`` (weights and activations in fp8, the fp8 peak);
* ``hardware`` (a profile of ``symgpt.core.hardware``), or ``peak`` (FLOP/s), ``bandwidth``
  (bytes/s), ``device_memory`` (bytes) given directly -- left out, the times stay symbolic in
  F_peak and BW_mem; ``chips`` (tensor parallelism), ``link_bandwidth`` (bytes/s per
  direction; default the profile's);
* ``attention`` eager|flash (flash: the attention core is one kernel, its intermediates never
  reach memory), ``causal`` (halve the prefill's attention matmuls);
* ``mla`` expanded|absorbed: how a multi-latent attention layer's decode step is priced
  (``derive.mla_absorbed``; default expanded, as transformers runs it);
* ``prompt``, ``generate``: P and G of ``inference.generate.time``, ``ttft``, ``tpot``, ...
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from ..graph import roles
from ..core.conventions import check_choice
from ..core.errors import SymgptError
from ..core.hardware import Hardware, hardware as get_hardware
from ..core.symbols import BW_link, BW_mem, F_peak
from .checks import optional, positive, positive_int
from .mla_absorbed import FORMS as MLA_FORMS, NOTES as MLA_NOTES
from .options import Machine, split

CONVENTIONS = {
    "default": ("a roofline per op: each op of the step reads its weights and inputs and writes its "
                "output (bytes exact per dtype), takes max(FLOPs / peak, bytes / bandwidth); the step "
                "is the sum; FLOPs are the default training convention's (matmuls, 2 per multiply-add)",
                "symgpt; FLOPs as torch.utils.flop_counter.FlopCounterMode"),
    "scaling-book": ("2 FLOPs per parameter per token; every parameter read once per step; the KV "
                     "cache read whole; step time = KV bytes / bandwidth + max(FLOPs / peak, "
                     "parameter bytes / bandwidth); activations and attention FLOPs left out",
                     "Austin et al., How to Scale Your Model, Part 7 (All About Transformer Inference)"),
}
BITS = (32, 16, 8, 4)          # weights and the KV cache
ACT_BITS = (32, 16, 8)         # activations (8: int8, the int8 peak)


def _bits(name, v, allowed=BITS):
    if isinstance(v, bool) or v not in allowed:
        raise SymgptError(f"{name} takes one of {', '.join(map(str, allowed))}, got {v!r}")
    return int(v)


@dataclass(frozen=True)
class Setup:
    model: object
    convention: str
    weight: sympy.Rational          # bytes per quantized weight (scales included)
    act: sympy.Rational             # bytes per activation (and unquantized parameter)
    kv: sympy.Rational              # bytes per cached key/value element
    dtype: str                      # the dtype whose peak prices the FLOPs
    chips: int
    device: Hardware | None
    attention: str
    causal: bool
    bindings: dict = field(default_factory=dict)
    labels: tuple[str, ...] = ()
    mla: str = "expanded"           # multi-latent attention's decode form (derive.mla_absorbed)

    @property
    def summary(self) -> str:
        return CONVENTIONS[self.convention][0]

    @property
    def source(self) -> str:
        return CONVENTIONS[self.convention][1]

    def notes(self, what: str) -> tuple[str, ...]:
        out = [f"{what}; convention {self.convention}: {self.summary} [{self.source}]",
               "bytes: " + ", ".join(self.labels)]
        if self.device is not None:
            out.append(f"hardware {self.device.title}: {self.dtype} peak, HBM bandwidth [{self.device.source}]")
        if any(self.model.arch.role(n) == roles.KV_UP for n in self.model.arch.order):
            out.append(MLA_NOTES[self.mla])
        if self.chips > 1:
            out.append(f"tensor parallel over {self.chips} devices: attention heads, FFN, LM head and token "
                       "table split; norms, residuals and position tables replicated; values per device (with "
                       "fewer KV heads than devices, engines replicate them: not modelled)")
            if any(self.model.arch.role(n) in roles.TP_REPLICATED for n in self.model.arch.order):
                out.append("multi-latent attention: the down-projections, latent norms and shared rotary key "
                           "replicated on every device, whole (vLLM's ReplicatedLinear, Megatron-Core's "
                           "duplicated linears); the up-projections, attention and output projection split")
        return tuple(out)


@dataclass(frozen=True)
class InferenceOptions:
    """The options of every ``inference.*`` quantity (see the module docstring), checked once
    here: the convention, the bits of weights, KV cache and activations, fp8, tensor
    parallelism over *chips*, the attention kernel, the hardware profile's name and the
    machine's numbers given directly (``derive.options.Machine``), and a generation's prompt
    and new tokens."""

    convention: str = "default"
    weight_bits: int = 16
    group_size: int | None = None
    kv_bits: int | None = None
    act_bits: int = 16
    fp8: bool = False
    chips: int = 1
    attention: str = "eager"
    causal: bool = False
    hardware: str | None = None
    machine: Machine = Machine()
    prompt: int | None = None
    generate: int | None = None
    mla: str = "expanded"

    def __post_init__(self):
        check_choice("inference convention", self.convention, tuple(CONVENTIONS))
        check_choice("multi-latent attention decode form", self.mla, MLA_FORMS)
        check_choice("attention", self.attention, ("eager", "flash"))
        if not isinstance(self.causal, bool) or not isinstance(self.fp8, bool):
            raise SymgptError("causal and fp8 take true or false")
        weight_bits = _bits("weight bits", self.weight_bits)
        act_bits = _bits("activation bits", self.act_bits, ACT_BITS)
        if self.fp8 and (act_bits != 16 or weight_bits not in (16, 8)):
            raise SymgptError("fp8 sets the weights and activations to 8 bits: give it without "
                              "--act-bits, and with --weight-bits 8 or none")
        if self.kv_bits is not None:
            _bits("KV-cache bits", self.kv_bits)
        if self.group_size is not None:
            positive_int("group size", self.group_size)
            if (8 if self.fp8 else weight_bits) >= 16:
                raise SymgptError("a group size applies to quantized weights (--weight-bits 8 or 4)")
        positive_int("chips", self.chips)
        for name in ("prompt", "generate"):
            optional(positive_int, name, getattr(self, name))
        if self.hardware is not None:
            get_hardware(self.hardware)

    @classmethod
    def from_options(cls, **options) -> "InferenceOptions":
        """The keyword options of an ``inference.*`` quantity: the machine's (``peak``,
        ``bandwidth``, ``device_memory``, ``link_bandwidth``) and the rest this class's."""
        mach, rest = split(options, Machine)
        if "machine" in rest:
            raise SymgptError("unknown option 'machine'")
        return cls(**rest, machine=Machine(**mach))

    @property
    def bits(self) -> tuple[int, int, int]:
        """(weight, activation, KV-cache) bits, fp8 applied."""
        w, a = (8, 8) if self.fp8 else (int(self.weight_bits), int(self.act_bits))
        return w, a, a if self.kv_bits is None else int(self.kv_bits)

    @property
    def dtype(self) -> str:
        """The dtype whose peak prices the FLOPs."""
        return "fp8" if self.fp8 else {32: "fp32", 16: "bf16", 8: "int8"}[self.bits[1]]


def setup(model, **options) -> Setup:
    """The pricing of every ``inference.*`` quantity from its keyword options (the edge: they
    become an :class:`InferenceOptions` here, once)."""
    from ..families.fields import NO_GENERATION
    from .recurrent import unruled_refusal

    unruled_refusal(model.arch)  # before any part is derived: no partial answer for such a layer
    if any(NO_GENERATION in n for n in getattr(model, "notes", ())):
        raise SymgptError(f"inference is not modelled for {model.name}: {NO_GENERATION} for it "
                          "(its parameters and FLOPs are)")
    return build(model, InferenceOptions.from_options(**options))


def build(model, o: InferenceOptions) -> Setup:
    """The pricing of every ``inference.*`` quantity under *o*: the bytes of each dtype, and the
    machine's numbers (given, else the profile's) bound to F_peak, BW_mem and BW_link."""
    weight_bits, act_bits, kv_bits = o.bits
    weight = sympy.Rational(weight_bits, 8)
    labels = [f"weights {weight_bits}-bit" + (" (fp8)" if o.fp8 else "")]
    if o.group_size is not None:
        weight += sympy.Rational(2, o.group_size)
        labels[0] += f", a 16-bit scale per {o.group_size} weights"
    labels += [f"activations {act_bits}-bit", f"KV cache {kv_bits}-bit"]
    device = get_hardware(o.hardware) if o.hardware is not None else None
    mach = o.machine
    if device is not None:
        mach = Machine.from_profile(device, o.dtype, **mach.options())
    bindings = dict(model.bindings)
    for sym, v in ((F_peak, mach.peak), (BW_mem, mach.bandwidth), (BW_link, mach.link_bandwidth)):
        if v is not None:
            bindings[sym] = v
    return Setup(model, o.convention, weight, sympy.Rational(act_bits, 8), sympy.Rational(kv_bits, 8), o.dtype,
                 int(o.chips), device, o.attention, o.causal, bindings, tuple(labels), o.mla)


def device_memory(s: Setup, given=None):
    """The device's memory in bytes (given, or the profile's), or None."""
    if given is not None:
        return positive("device memory", given)
    return sympy.Integer(s.device.memory) if s.device is not None else None

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


def _rational(name, v, allow_none=True):
    if v is None and allow_none:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, sympy.Rational, sympy.Integer, float)):
        raise SymgptError(f"{name} must be a positive number, got {v!r}")
    v = sympy.nsimplify(v, rational=True) if isinstance(v, float) else sympy.Rational(v)
    if v <= 0:
        raise SymgptError(f"{name} must be positive, got {v}")
    return v


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
        if self.chips > 1:
            out.append(f"tensor parallel over {self.chips} devices: attention heads, FFN, LM head and token "
                       "table split; norms, residuals and position tables replicated; values per device (with "
                       "fewer KV heads than devices, engines replicate them: not modelled)")
            if any(self.model.arch.role(n) in roles.TP_REPLICATED for n in self.model.arch.order):
                out.append("multi-latent attention: the down-projections, latent norms and shared rotary key "
                           "replicated on every device, whole (vLLM's ReplicatedLinear, Megatron-Core's "
                           "duplicated linears); the up-projections, attention and output projection split")
        return tuple(out)


def setup(model, convention="default", weight_bits=16, group_size=None, kv_bits=None, act_bits=16,
          fp8=False, hardware=None, peak=None, bandwidth=None, device_memory=None, chips=1,
          link_bandwidth=None, attention="eager", causal=False, prompt=None, generate=None) -> Setup:
    """The pricing of every ``inference.*`` quantity (see the module docstring)."""
    check_choice("inference convention", convention, tuple(CONVENTIONS))
    check_choice("attention", attention, ("eager", "flash"))
    if not isinstance(causal, bool) or not isinstance(fp8, bool):
        raise SymgptError("causal and fp8 take true or false")
    weight_bits = _bits("weight bits", weight_bits)
    act_bits = _bits("activation bits", act_bits, ACT_BITS)
    if fp8:
        if act_bits != 16 or weight_bits not in (16, 8):
            raise SymgptError("fp8 sets the weights and activations to 8 bits: give it without "
                              "--act-bits, and with --weight-bits 8 or none")
        weight_bits, act_bits = 8, 8
    kv_bits = act_bits if kv_bits is None else _bits("KV-cache bits", kv_bits)
    weight = sympy.Rational(weight_bits, 8)
    labels = [f"weights {weight_bits}-bit" + (" (fp8)" if fp8 else "")]
    if group_size is not None:
        if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1:
            raise SymgptError(f"group size must be a positive integer, got {group_size!r}")
        if weight_bits >= 16:
            raise SymgptError("a group size applies to quantized weights (--weight-bits 8 or 4)")
        weight += sympy.Rational(2, group_size)
        labels[0] += f", a 16-bit scale per {group_size} weights"
    labels += [f"activations {act_bits}-bit", f"KV cache {kv_bits}-bit"]
    dtype = "fp8" if fp8 else {32: "fp32", 16: "bf16", 8: "int8"}[act_bits]
    if isinstance(chips, bool) or not isinstance(chips, int) or chips < 1:
        raise SymgptError(f"chips must be a positive integer, got {chips!r}")
    device = get_hardware(hardware) if hardware is not None else None
    bindings = dict(model.bindings)
    p = _rational("peak", peak) or (sympy.Integer(device.peak(dtype)) if device else None)
    bw = _rational("bandwidth", bandwidth) or (sympy.Integer(device.hbm_bandwidth) if device else None)
    link = _rational("link bandwidth", link_bandwidth) or (sympy.Integer(device.link_bandwidth) if device else None)
    _rational("device memory", device_memory)
    for s, v in ((F_peak, p), (BW_mem, bw), (BW_link, link)):
        if v is not None:
            bindings[s] = v
    for name, v in (("prompt", prompt), ("generate", generate)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise SymgptError(f"{name} must be a positive number of tokens, got {v!r}")
    return Setup(model, convention, weight, sympy.Rational(act_bits, 8), sympy.Rational(kv_bits, 8), dtype,
                 chips, device, attention, causal, bindings, tuple(labels))


def device_memory(s: Setup, given=None):
    """The device's memory in bytes (given, or the profile's), or None."""
    if given is not None:
        return _rational("device memory", given)
    return sympy.Integer(s.device.memory) if s.device is not None else None

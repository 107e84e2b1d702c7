"""The options a derivation is priced under, as small frozen dataclasses, each checked once when
it is made (the checks of ``derive.checks``) and passed whole:

* :class:`Precision`: a named precision policy and the bytes of each kind of state under it;
* :class:`Machine`: a device and its links -- peak FLOP/s, memory bandwidth, memory, the
  bandwidth inside a node and between nodes, devices per node -- from a hardware profile
  (:meth:`Machine.from_profile`) or given;
* :class:`Training`: what a training derivation (``memory.*``, ``comm.*``, ``time.*`` on a
  cluster) is priced under -- the parallel layout (``derive.layout.Layout``), the counting
  convention and its choices, the precision policy, the optimizer, dropout;
* ``derive.inference_setup.InferenceOptions``: what an ``inference.*`` quantity is priced under.

Quantities are asked for with keyword options (``model.quantity("memory.total", tp=2)``); each
provider turns them into these dataclasses once, at that edge (``from_options``), splitting them
by the dataclasses' own field names (:func:`split`)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Mapping

import sympy

from ..core.errors import SymgptError
from .checks import optional, positive, positive_int
from .layout import Layout, layout


def names(cls) -> tuple[str, ...]:
    """The field names of the dataclass *cls* (the keyword options it takes)."""
    return tuple(f.name for f in fields(cls))


def split(options: Mapping, cls) -> tuple[dict, dict]:
    """(*options* that are fields of *cls*, the rest), each in the order given."""
    own = set(names(cls))
    return ({k: v for k, v in options.items() if k in own},
            {k: v for k, v in options.items() if k not in own})


# --- precision --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Precision:
    """Bytes per element of each kind of state under a precision policy."""

    weight: int
    grad: int
    act: int
    master: int  # an fp32 master copy kept by the optimizer (mixed precision)
    state: int   # one optimizer moment
    name: str = ""
    # precision recipes as data: a linear's saved input cast for a low-precision GEMM, with its scales
    gemm_input: int = 0   # bytes per element of that input (0: the activation bytes, no cast)
    tile: int = 0         # elements per scale of that input (1 x tile along the last dimension)
    scale: int = 0        # bytes per scale
    source: str = ""
    # low-precision GEMMs priced at the hardware's own peak: the dtype of that peak (fp8, fp4; '' none)
    gemm_dtype: str = ""

    @classmethod
    def named(cls, name: str) -> "Precision":
        """The policy called *name* (one of ``PRECISIONS``), or a one-line error."""
        from ..core.conventions import check_choice

        check_choice("precision", name, tuple(PRECISIONS))
        return PRECISIONS[name]


PRECISIONS = {n: Precision(*b, name=n) for n, b in (
    ("fp32", (4, 4, 4, 0, 4)),
    ("bf16", (2, 2, 2, 0, 2)),
    ("fp16", (2, 2, 2, 0, 2)),
    ("mixed-bf16", (2, 2, 2, 4, 4)),
    ("mixed-fp16", (2, 2, 2, 4, 4)),
    # Megatron-LM's bf16 training: gradients accumulated and all-reduced in fp32 (main_grad)
    ("mixed-bf16-fp32grad", (2, 4, 2, 4, 4)),
)}
# precision recipes as data: low-precision GEMM training as a public recipe defines it
PRECISIONS["fp8-deepseek-v3"] = Precision(
    2, 4, 2, 4, 2, "fp8-deepseek-v3", gemm_input=1, tile=128, scale=4, gemm_dtype="fp8",
    source="DeepSeek-V3 technical report, arXiv 2412.19437, Sec. 3.3: E4M3 GEMM inputs, 1x128 activation tiles "
           "and 128x128 weight blocks each with a scale (fp32, as DeepSeek's DeepGEMM kernels take them); linear "
           "inputs cached in FP8 for the backward; FP32 master weights and gradients (accumulated over the "
           "batch), BF16 AdamW moments; the embedding, output head, MoE gating, norms and attention operators in "
           "BF16/FP32; working weights taken as BF16, each GEMM's FP8 copy of them (and its weight-block scales) "
           "transient, not counted")
# OCP Microscaling (MX) formats: 32 elements share one E8M0 (8-bit) scale, so 8 + 8/32 = 8.25 bits per
# MXFP8 element and 4 + 8/32 = 4.25 per MXFP4 element (OCP Microscaling Formats (MX) Specification v1.0;
# Rouhani et al. 2023, arXiv 2310.10537)
_MX = ("OCP Microscaling Formats (MX) Specification v1.0 (blocks of k = 32 elements, one shared E8M0 scale of 8 "
       "bits each; {elem} elements, {bits} bits per element with the scale); compute flow of Rouhani et al. "
       "2023 (Microscaling Data Formats for Deep Learning, arXiv 2310.10537): every linear's GEMM inputs (weights, activations, gradients) "
       "quantized to MX in forward and backward, the other operators and the optimizer in higher precision, "
       "FP32 master weights; {recipe}. Counted here: each linear's input cached for the weight gradient in "
       "MX ({bits} bits: 1 x 32 blocks along its last dimension, one 1-byte scale per started block), the "
       "output head and MoE routers in BF16 as in fp8-deepseek-v3; model states as mixed-bf16 (BF16 working "
       "weights and gradients, FP32 master and AdamW moments), each GEMM's MX copy of a weight transient, "
       "not counted; the linears' GEMMs at the hardware's {dtype} peak")
PRECISIONS["mxfp8"] = Precision(
    2, 2, 2, 4, 4, "mxfp8", gemm_input=1, tile=32, scale=1, gemm_dtype="fp8",
    source=_MX.format(elem="FP8 E4M3", bits="8.25", dtype="fp8",
                      recipe="MXFP8-E4M3 for every GEMM input as in Mishra et al. 2025, Recipes for Pre-training "
                             "LLMs with MXFP8 (arXiv 2506.08027)"))
PRECISIONS["mxfp4"] = Precision(
    2, 2, 2, 4, 4, "mxfp4", gemm_input=sympy.Rational(1, 2), tile=32, scale=1, gemm_dtype="fp4",
    source=_MX.format(elem="FP4 E2M1", bits="4.25", dtype="fp4",
                      recipe="MXFP4 for every GEMM input of the linears, forward and backward, as Castro et al. "
                             "2025, Quartet (arXiv 2505.14669) train (Rouhani et al.'s own sub-8-bit runs keep "
                             "activations and gradients in MXFP6, weights in MXFP4)"))

#: optimizer -> its per-parameter states and the bytes of each (None: the policy's state bytes)
OPTIMIZERS = {
    "sgd": (),
    "momentum": (("momentum", None),),
    "adam": (("m", None), ("v", None)),
    "adamw": (("m", None), ("v", None)),
    "adam8bit": (("m", 1), ("v", 1)),
    # paged optimizers (QLoRA): two fp32 states per trained parameter whatever the weights' precision
    "paged-adamw-32bit": (("m", 4), ("v", 4)),
}
#: optimizer -> what its states are and where the convention comes from (a note on every memory answer)
OPTIMIZER_SOURCES = {
    "paged-adamw-32bit": (
        "optimizer paged-adamw-32bit: bitsandbytes' PagedAdamW32bit (transformers' optim='paged_adamw_32bit', "
        "Dettmers et al. 2023, Sec. 3 'Paged Optimizers'): AdamW's two states in fp32 for each trained "
        "parameter, in unified memory; counted on the device (paging moves them to host memory only when "
        "the device runs out, which the answer does not model)"),
}


# --- the machine ------------------------------------------------------------------------------
#: devices per node where neither a flag nor a profile says (an 8-GPU server: DGX, HGX)
DEFAULT_NODE_SIZE = 8


@dataclass(frozen=True)
class Machine:
    """One device and its links; None where not given (a derivation then keeps a symbol, takes
    its default, or says what it needs). Numbers are exact positive Rationals (``node_size`` a
    positive integer); a plan's SymPy symbols pass as they are."""

    peak: object = None            # FLOP/s
    bandwidth: object = None       # memory (HBM) bytes/s
    device_memory: object = None   # bytes
    link_bandwidth: object = None  # bytes/s per device inside a node
    node_bandwidth: object = None  # bytes/s per device between nodes
    node_size: object = None       # devices per node
    # offloading (derive.offload): the host link (PCIe), bytes/s per direction per device
    host_bandwidth: object = None
    # a precision recipe's low-precision GEMMs (fp8, fp4): FLOP/s of the device in that dtype
    low_peak: object = None

    def __post_init__(self):
        for f in fields(self):
            check = positive_int if f.name == "node_size" else positive
            v = optional(check, f.name.replace("_", " "), getattr(self, f.name), symbolic=True)
            object.__setattr__(self, f.name, v)

    def options(self) -> dict:
        """The keyword options that make this machine (those given)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    @classmethod
    def from_profile(cls, hw, dtype: str, **given) -> "Machine":
        """The datasheet figures of the hardware profile *hw* (the peak in *dtype*), each
        replaced by a *given* one that is not None."""
        profile = {"peak": lambda: hw.peak(dtype), "bandwidth": lambda: hw.hbm_bandwidth,
                   "device_memory": lambda: hw.memory, "link_bandwidth": lambda: hw.link_bandwidth,
                   "node_bandwidth": lambda: hw.node_bandwidth, "node_size": lambda: hw.devices_per_node}
        made = {k: given[k] if given.get(k) is not None else read() for k, read in profile.items()}
        return cls(**made, host_bandwidth=given.get("host_bandwidth"))  # no profile gives a host link


# --- training ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Training:
    """What a training derivation is priced under: the layout, the precision policy (None: the
    convention's), the optimizer, dropout (None: the convention's), and ``counting``: the counting
    convention and its choices overridden (``convention``, ``recompute``, ``attention``, ...;
    checked when the convention is resolved), as (name, value) pairs -- the options of
    ``flops.train``."""

    layout: Layout = Layout()
    precision: str | None = None
    optimizer: str = "adamw"
    dropout: bool | None = None
    counting: tuple = ()

    def __post_init__(self):
        from ..core.conventions import check_choice

        check_choice("optimizer", self.optimizer, tuple(OPTIMIZERS))

    @classmethod
    def from_options(cls, **options) -> "Training":
        """The keyword options of a training quantity: the layout's (``derive.layout.layout``
        checks them), this class's own, and the rest the counting convention's."""
        lay, rest = split(options, Layout)
        own, counting = split(rest, cls)
        nested = [k for k in own if k in ("layout", "counting")]
        if nested:
            raise SymgptError(f"unknown option {nested[0]!r}")
        return cls(layout(**lay), **own, counting=tuple(counting.items()))

    def options(self) -> dict:
        """The keyword options that make this training (the layout's that differ from one device)."""
        default = Layout()
        out = {f.name: getattr(self.layout, f.name) for f in fields(Layout)
               if getattr(self.layout, f.name) != getattr(default, f.name)}
        out.update({k: getattr(self, k) for k in ("precision", "optimizer", "dropout") if getattr(self, k) is not None})
        return {**out, **dict(self.counting)}

    def flops_options(self) -> dict:
        """The options of ``flops.train`` under this training: the convention and its choices."""
        return dict(self.counting)

    def convention(self):
        """The counting convention resolved, with dropout among its choices."""
        from .flops import resolve

        choices = dict(self.counting)
        return resolve(choices.pop("convention", None), **choices, dropout=self.dropout)

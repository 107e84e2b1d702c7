"""Model states in bytes: ``memory.weights``, ``memory.gradients``, ``memory.optimizer`` (the fp32
master copy under mixed precision and the optimizer's moments) and ``memory.host`` (what
ZeRO-Offload moves to host memory), per device under tp, pp, ep and ZeRO.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import sympy

from ..ops.base import numel
from .quantity import Quantity
from .memory_setup import OPTIMIZERS, Setup, memory_quantity, setup
from .tensor_parallel import divisor_for_param, place
from .walk import has_frozen


def param_bytes(s: Setup, per_param: int, zero_from: int, trainable_only: bool = False, stored: bool = False):
    """(owner path, bytes) of every parameter tensor this device holds: its stage's share (pp),
    sharded by tp, experts by ep, and (at ZeRO >= zero_from) over the data-parallel ranks that
    replicate it. A tied head on pp > 1 holds a copy of the embedding on the last stage.
    *trainable_only*: the parameters that get a gradient (a fine-tuned graph freezes the others);
    *stored*: a weight quantized in storage (QLoRA's base) at its own bits per element."""
    return list(_param_bytes(s.model.arch, s.lay, per_param, s.zero >= zero_from, trainable_only, stored))


@lru_cache(maxsize=256)  # a report asks the same (model, layout) for every precision and optimizer
def _param_bytes(arch, lay, per_param, sharded: bool, trainable_only: bool = False,
                 stored: bool = False) -> tuple[tuple[str, sympy.Expr], ...]:
    from .params import parameter_list, tied_uses

    out: dict[str, sympy.Expr] = {}
    for e in parameter_list(arch):
        pa = arch.graph.nodes[e.node]
        if trainable_only and pa.get("frozen"):
            continue  # frozen (fine-tuning): no gradient, no optimizer state
        if stored and "storage_bits" in pa:  # a quantized base (QLoRA): its own bits per element
            e = replace(e, count=e.count * pa["storage_bits"] / 8 / per_param)
        where, expert = place(arch, e.owner)
        group = lay.expert_dp_group if expert else lay.dp_group
        shard = divisor_for_param(arch, e.owner, e.local, lay.tp) * (lay.ep if expert else 1)
        if sharded:
            shard = shard * group
        if lay.share(where) == 0:
            continue  # on another stage
        out[e.owner] = out.get(e.owner, sympy.Integer(0)) + e.total * per_param * lay.share(where) / shard
    for op, local, pnode in tied_uses(arch):
        if place(arch, op)[0] == "post" and lay.share("copy") != 0:
            owner = arch.graph.nodes[pnode]["owner"]
            shard = divisor_for_param(arch, owner, local, lay.tp) * (lay.dp_group if sharded else 1)
            n = numel(arch.graph.nodes[pnode]["shape"]) * arch.multiplicity(pnode)
            out[f"{op}/tied copy"] = n * per_param * lay.share("copy") / shard
    return tuple(out.items())


def zero3_quantized(s) -> None:
    """One line where ZeRO-3 would shard a quantized base (QLoRA): PyTorch FSDP and DeepSpeed shard
    and gather the packed 4-bit (or 8-bit) data, but the quantization constants sit outside the
    sharded parameters, on every rank; not modelled."""
    if s.zero < 3 or s.lay.dp_group == 1:
        return
    if any("storage_bits" in a for _, a in s.model.arch.graph.nodes.data() if a["kind"] == "param"):
        from ..core.errors import SymgptError

        raise SymgptError("ZeRO-3 with a quantized base (QLoRA) is not modelled (the quantization constants are "
                          "not sharded with the packed weights); use --zero 0, 1 or 2")


def weights(model, **options) -> Quantity:
    s = setup(model, **options)
    if has_frozen(s.model.arch):  # ZeRO-3 of a quantized base: refused
        zero3_quantized(s)
    return memory_quantity(s, "memory.weights", param_bytes(s, s.bytes.weight, 3, stored=True), "model weights")


def gradients(model, **options) -> Quantity:
    s = setup(model, **options)
    frozen = has_frozen(s.model.arch)
    return memory_quantity(s, "memory.gradients", param_bytes(s, s.bytes.grad, 2, trainable_only=frozen),
                           "gradients (one per trainable parameter)" if frozen else "gradients (one per parameter)")


def _optimizer_parts(s: Setup):
    n = _parameter_count(s.model.arch, s.lay, s.zero >= 1, has_frozen(s.model.arch))  # sharded, trainable
    parts = [("optimizer/master", s.bytes.master * n)] if s.bytes.master else []
    parts += [(f"optimizer/{state}", (s.bytes.state if b is None else b) * n) for state, b in OPTIMIZERS[s.optimizer]]
    return parts or [("optimizer", sympy.Integer(0))]


@lru_cache(maxsize=256)
def _parameter_count(arch, lay, sharded: bool, trainable_only: bool = False) -> sympy.Expr:
    return sympy.Add(*[e for _, e in _param_bytes(arch, lay, 1, sharded, trainable_only)])


def optimizer(model, **options) -> Quantity:
    s = setup(model, **options)
    what = f"optimizer state of {s.optimizer}" + (" with an fp32 master copy" if s.bytes.master else "")
    if s.offload:
        return memory_quantity(s, "memory.optimizer", [("optimizer (offloaded to the host)", sympy.Integer(0))],
                  what + ", offloaded to host memory (ZeRO-Offload, Ren et al. 2021): none on the device")
    return memory_quantity(s, "memory.optimizer", _optimizer_parts(s), what)


def host(model, **options) -> Quantity:
    """Host memory per device: the optimizer states moved there by ``offload`` (else 0)."""
    s = setup(model, **options)
    parts = _optimizer_parts(s) if s.offload else []
    if s.lay.offload_activations:  # the saved activations of the layers not in flight (derive.offload)
        from .memory_activations import activation_split

        parts += [(f"activations/{p}", e) for p, e in activation_split(s)[1].items()]
    what = "host (CPU) memory per device: the offloaded optimizer states and fp32 master copy (ZeRO-Offload, Ren et al. 2021)"
    if s.lay.offload_activations:
        what += " and the saved activations of the layers not in flight"
    return memory_quantity(s, "memory.host", parts or [("nothing offloaded", sympy.Integer(0))], what)

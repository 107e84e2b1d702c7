"""Offloading to host memory: what leaves the device, what crosses the host link (PCIe) per step,
and the seconds that takes.

* **Optimizer** (``offload``): ZeRO-Offload (Ren et al. 2021, arXiv 2101.06840, Sec. 4.1): the
  optimizer states and the fp32 master weights live in host memory and the CPU runs the update;
  the device keeps the 16-bit weights and (as ``memory.gradients`` counts them) the gradients,
  accumulated over the step's micro-batches. Per step the gradients go down once and the updated
  16-bit weights come back once: (gradient bytes + weight bytes) × the parameters whose optimizer
  state this device owns (its ZeRO partition at ZeRO >= 1) -- the paper's 2M + 2M = 4M under
  mixed precision.
* **Activations** (``offload_activations``): per layer, the saved activations of every layer but
  the ones in flight go to host memory during the forward and come back during the backward. The
  device keeps min(2, L) layers of the micro-batch it runs: the layer computing and the one whose
  tensors are in transit (the last two of the forward are read first by the backward and never
  leave); the embedding, head and loss keep theirs on the device. Bytes that cross the host link
  per step: twice the offloaded bytes, for each of the m micro-batches. Priced for one stack of
  layers without a pipeline (``layout.layout`` refuses pp > 1).

``offload.traffic`` is those bytes per device per step; ``offload.time`` the seconds they take at
``host_bandwidth`` (bytes/s per direction: the two directions run at different times of the
step). ``time.step`` on a cluster adds them to compute + communication + bubble (the transfers
not overlapped with compute, the convention of every other part of that step), or with
``overlap_offload`` only what they take beyond the compute (the step takes max(compute,
transfers)); the CPU's own optimizer step is not modelled.
"""

from __future__ import annotations

import sympy

from ..core.errors import SymgptError
from .quantity import Quantity
from .memory_activations import IN_FLIGHT_LAYERS, activation_split
from .memory_setup import Setup, memory_quantity, setup
from .memory_states import _parameter_count

SOURCE = "ZeRO-Offload, Ren et al. 2021, arXiv 2101.06840"


def optimizer_traffic(s: Setup):
    """(part, bytes) that cross the host link per step under optimizer offloading."""
    from .walk import has_frozen

    # fine-tuning: only the trainable parameters have gradients, optimizer states and updates
    n = _parameter_count(s.model.arch, s.lay, s.zero >= 1, has_frozen(s.model.arch))
    return [("gradients to the host", s.bytes.grad * n), ("weights back to the device", s.bytes.weight * n)]


def activation_traffic(s: Setup):
    """(part, bytes) of the activations that cross the host link per step: down and back, per
    micro-batch."""
    _, host = activation_split(s)
    total = sympy.Add(*host.values())
    return [("activations to the host and back", 2 * s.lay.microbatches * total)]


def traffic_parts(s: Setup):
    parts = []
    if s.lay.offload:
        parts += [(f"optimizer/{p}", e) for p, e in optimizer_traffic(s)]
    if s.lay.offload_activations:
        parts += [(f"activations/{p}", e) for p, e in activation_traffic(s)]
    return parts


def _what(s: Setup) -> str:
    said = []
    if s.lay.offload:
        said.append("optimizer offloaded: per step the gradients down once and the updated weights back once, "
                    f"(gradient + weight bytes) × the parameters whose optimizer state this device owns ({SOURCE})")
    if s.lay.offload_activations:
        said.append(f"activations offloaded per layer: the device keeps min({IN_FLIGHT_LAYERS}, L) layers of the "
                    "running micro-batch, the rest go down in the forward and back in the backward: "
                    "2 × m × the offloaded bytes")
    return "; ".join(said) or "nothing offloaded"


def traffic(model, **options) -> Quantity:
    """``offload.traffic``: bytes that cross the host link (PCIe) per step, per device."""
    s = setup(model, **options)
    parts = traffic_parts(s) or [("nothing offloaded", sympy.Integer(0))]
    return memory_quantity(s, "offload.traffic", parts, "bytes across the host link per step; " + _what(s))


def host_time(model, host_bandwidth=None, **options) -> Quantity:
    """``offload.time``: ``offload.traffic`` over *host_bandwidth* (bytes/s per direction)."""
    from .checks import positive

    if host_bandwidth is None:
        raise SymgptError("offload.time needs the host link's bandwidth: host_bandwidth (bytes/s per direction; "
                          "--host-bandwidth)")
    bw = positive("host bandwidth", host_bandwidth)
    s = setup(model, **options)
    parts = [(p, e / bw) for p, e in traffic_parts(s)] or [("nothing offloaded", sympy.Integer(0))]
    q = memory_quantity(s, "offload.time", parts, "seconds on the host link per step = offload.traffic / "
                        "host bandwidth; " + _what(s))
    from ..core.numtext import sci

    return Quantity(q.name, q.breakdown, q.bindings, "s", q.convention,
                    q.notes + (f"host link {sci(bw)} B/s per direction",))


host_time.needs = "the host link's bandwidth: 'symgpt time MODEL --offload ... --host-bandwidth B/S'"

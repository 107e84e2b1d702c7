"""Accelerator profiles as data: peak FLOP/s per dtype, memory bandwidth and capacity, interconnect.

Every number is an exact integer in base units (FLOP/s, bytes/s, bytes), copied from the
vendor's public datasheet named in ``source`` (dense figures: where a datasheet prints a
figure "with sparsity", the dense one is half of it). Capacities are as the datasheet states
them: NVIDIA and AMD print GB (10⁹ bytes), Google's Cloud TPU pages print GiB (2³⁰ bytes).

Interconnect bandwidths are *per direction* per device: NVIDIA prints NVLink as the total of
both directions (H100: 900 GB/s = 450 GB/s each way), so ``link_bandwidth`` is half the printed
figure; a TPU's is one torus axis, two neighbours' links one way each (2 × the per-link one-way
figure). ``node_bandwidth`` is the scale-out network per device (one NIC per GPU in the vendor's
reference system), None where no per-device figure is published.

>>> from symgpt.core.hardware import hardware
>>> h = hardware("h100-sxm")
>>> h.peak("bf16"), h.hbm_bandwidth
(989500000000000, 3350000000000)

Used by ``symgpt infer`` / ``symgpt hardware`` (``symgpt.derive.inference``) and by anything
else that needs a device's numbers: ask :func:`hardware` by name, read the fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .errors import SymgptError

#: the dtypes a profile may give a peak for
DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "int4")


@dataclass(frozen=True)
class Hardware:
    """One accelerator: its datasheet numbers as exact integers.

    ``peaks``: dense peak FLOP/s (OP/s for integer types) per dtype; ``hbm_bandwidth`` bytes/s;
    ``memory`` bytes; ``link_bandwidth`` intra-node (NVLink, Infinity Fabric, ICI) bytes/s per
    device per direction; ``node_bandwidth`` inter-node bytes/s per device per direction (None:
    not published); ``devices_per_node``; ``source`` (datasheet); ``notes``.
    """

    name: str
    title: str
    peaks: Mapping[str, int]
    hbm_bandwidth: int
    memory: int
    memory_unit: str            # how the datasheet states the capacity: "GB" or "GiB"
    link_bandwidth: int
    node_bandwidth: int | None
    devices_per_node: int
    source: str
    notes: str = ""
    # board power (energy per token): watts at the datasheet's maximum, and where it is printed
    board_power: int | None = None
    power_source: str = ""

    def peak(self, dtype: str = "bf16") -> int:
        """Dense peak FLOP/s in *dtype* (a clear error when the device has none)."""
        if dtype not in self.peaks:
            raise SymgptError(f"{self.name} has no {dtype} peak in its datasheet; it has: "
                              f"{', '.join(self.peaks)}")
        return self.peaks[dtype]


_T = 10**12
_G = 10**9
_GIB = 2**30


def _half(x: int) -> int:
    """The dense figure of a datasheet's "with sparsity" one (or one direction of a total)."""
    return x // 2


def _gbit(x: int) -> int:
    """A network port of *x* Gb/s in bytes/s (per direction)."""
    return x * _G // 8


PROFILES: tuple[Hardware, ...] = (
    Hardware("a100-40gb", "NVIDIA A100 40GB SXM",
             {"fp32": 19_500 * _G, "tf32": 156 * _T, "bf16": 312 * _T, "fp16": 312 * _T,
              "int8": 624 * _T, "int4": 1248 * _T},
             1_555 * _G, 40 * _G, "GB", _half(600 * _G), _gbit(200), 8,
             "NVIDIA A100 Tensor Core GPU datasheet (A100 40GB SXM column); NIC: DGX A100 datasheet "
             "(one 200 Gb/s ConnectX-6 per GPU)",
             board_power=400, power_source="NVIDIA A100 Tensor Core GPU datasheet: max TDP 400 W (SXM)"),
    Hardware("a100-80gb", "NVIDIA A100 80GB SXM",
             {"fp32": 19_500 * _G, "tf32": 156 * _T, "bf16": 312 * _T, "fp16": 312 * _T,
              "int8": 624 * _T, "int4": 1248 * _T},
             2_039 * _G, 80 * _G, "GB", _half(600 * _G), _gbit(200), 8,
             "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM column); NIC: DGX A100 datasheet",
             board_power=400, power_source="NVIDIA A100 Tensor Core GPU datasheet: max TDP 400 W (SXM)"),
    Hardware("h100-sxm", "NVIDIA H100 SXM",
             {"fp32": 67 * _T, "tf32": _half(989 * _T), "bf16": _half(1_979 * _T),
              "fp16": _half(1_979 * _T), "fp8": _half(3_958 * _T), "int8": _half(3_958 * _T)},
             3_350 * _G, 80 * _G, "GB", _half(900 * _G), _gbit(400), 8,
             "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column; dense = half the sparse "
             "figures); NIC: DGX H100 datasheet (one 400 Gb/s ConnectX-7 per GPU)",
             board_power=700, power_source="NVIDIA H100 Tensor Core GPU datasheet: max TDP up to 700 W (SXM, configurable)"),
    Hardware("h100-pcie", "NVIDIA H100 PCIe",
             {"fp32": 51 * _T, "tf32": 378 * _T, "bf16": _half(1_513 * _T), "fp16": _half(1_513 * _T),
              "fp8": _half(3_026 * _T), "int8": _half(3_026 * _T)},
             2_000 * _G, 80 * _G, "GB", _half(600 * _G), None, 8,
             "NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe column; dense = half the sparse "
             "figures); link: the NVLink bridge, 600 GB/s",
             board_power=350, power_source="NVIDIA H100 Tensor Core GPU datasheet: max TDP 300-350 W (PCIe, configurable)"),
    Hardware("h200", "NVIDIA H200 SXM",
             {"fp32": 67 * _T, "tf32": _half(989 * _T), "bf16": _half(1_979 * _T),
              "fp16": _half(1_979 * _T), "fp8": _half(3_958 * _T), "int8": _half(3_958 * _T)},
             4_800 * _G, 141 * _G, "GB", _half(900 * _G), _gbit(400), 8,
             "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column; dense = half the sparse figures)",
             board_power=700, power_source="NVIDIA H200 Tensor Core GPU datasheet: max TDP up to 700 W (SXM, configurable)"),
    Hardware("b200", "NVIDIA B200 (HGX B200)",
             {"tf32": _half(2_200 * _T), "bf16": _half(4_500 * _T), "fp16": _half(4_500 * _T),
              "fp8": _half(9_000 * _T), "int8": _half(9_000 * _T), "fp4": _half(18_000 * _T)},
             8_000 * _G, 180 * _G, "GB", _half(1_800 * _G), _gbit(400), 8,
             "NVIDIA DGX B200 datasheet (per GPU: 1,440 GB and 64 TB/s over 8 GPUs; HGX B200 "
             "per-GPU Tensor Core figures, dense = half the sparse); NVLink 5, 1.8 TB/s"),
    Hardware("mi300x", "AMD Instinct MI300X",
             {"fp32": 163_400 * _G, "tf32": 653_700 * _G, "bf16": 1_307_400 * _G,
              "fp16": 1_307_400 * _G, "fp8": 2_614_900 * _G, "int8": 2_614_900 * _G},
             5_300 * _G, 192 * _G, "GB", _half(7 * 128 * _G), None, 8,
             "AMD Instinct MI300X accelerator datasheet (dense peaks); Infinity Fabric: 7 links "
             "of 128 GB/s (both directions) per GPU in an 8-GPU platform",
             board_power=750, power_source="AMD Instinct MI300X accelerator datasheet: peak total board power 750 W"),
    Hardware("l40s", "NVIDIA L40S",
             {"fp32": 91_600 * _G, "tf32": _half(366 * _T), "bf16": 362_050 * _G,
              "fp16": 362_050 * _G, "fp8": _half(1_466 * _T), "int8": _half(1_466 * _T)},
             864 * _G, 48 * _G, "GB", _half(64 * _G), None, 8,
             "NVIDIA L40S GPU datasheet (dense = the figures without sparsity); no NVLink: PCIe "
             "Gen4 x16, 64 GB/s both directions", notes="GDDR6 memory",
             board_power=350, power_source="NVIDIA L40S GPU datasheet: max power consumption 350 W"),
    Hardware("tpu-v4", "Google Cloud TPU v4",
             {"bf16": 275 * _T, "int8": 275 * _T},
             1_200 * _G, 32 * _GIB, "GiB", 2 * 45 * _G, None, 4,
             "Google Cloud TPU v4 system architecture page (275 TFLOP/s bf16, 32 GiB HBM2, "
             "1,200 GB/s); ICI 4.5e10 bytes/s one-way per link (Austin et al., How to Scale Your "
             "Model, Part 2)"),
    Hardware("tpu-v5e", "Google Cloud TPU v5e",
             {"bf16": 197 * _T, "int8": 394 * _T},
             819 * _G, 16 * _GIB, "GiB", 2 * 45 * _G, None, 8,
             "Google Cloud TPU v5e page (197 TFLOP/s bf16, 394 TOP/s int8, 16 GiB HBM2, 819 GB/s); "
             "ICI 4.5e10 bytes/s one-way per link (Austin et al., How to Scale Your Model, Part 2)"),
    Hardware("tpu-v5p", "Google Cloud TPU v5p",
             {"bf16": 459 * _T, "int8": 918 * _T},
             2_765 * _G, 95 * _GIB, "GiB", 2 * 90 * _G, None, 4,
             "Google Cloud TPU v5p page (459 TFLOP/s bf16, 918 TOP/s int8, 95 GiB HBM2e, 2,765 GB/s); "
             "ICI 9e10 bytes/s one-way per link (Austin et al., How to Scale Your Model, Part 2)"),
)

_BY_NAME = {h.name: h for h in PROFILES}


def names() -> tuple[str, ...]:
    return tuple(_BY_NAME)


def hardware(name: str) -> Hardware:
    """The profile called *name* (``h100-sxm``, ``tpu-v5e``, ...); a clear error otherwise."""
    if not isinstance(name, str) or name not in _BY_NAME:
        shown = name if isinstance(name, str) and len(name) <= 40 else str(name)[:37] + "..."
        raise SymgptError(f"unknown hardware {shown!r}; profiles: {', '.join(_BY_NAME)}")
    return _BY_NAME[name]

"""symgpt hardware: the accelerator profiles (peak FLOP/s per dtype, bandwidth, memory,
interconnect), each with its public datasheet."""

from __future__ import annotations

from .common import add_json, emit

HELP = "accelerator profiles with their datasheet numbers and sources"


def add_arguments(p):
    add_json(p)


def run(args) -> int:
    from ..core.hardware import PROFILES
    from ..render.inference_text import hardware_text
    from ..render.jsonout import dumps

    if args.json:
        emit(dumps({"hardware": [{
            "name": h.name, "title": h.title, "peak_flops": dict(h.peaks), "hbm_bandwidth": h.hbm_bandwidth,
            "memory": h.memory, "memory_unit": h.memory_unit, "link_bandwidth": h.link_bandwidth,
            "node_bandwidth": h.node_bandwidth, "devices_per_node": h.devices_per_node,
            "source": h.source, **({"notes": h.notes} if h.notes else {})} for h in PROFILES],
            "units": "FLOP/s (dense), bytes/s (per device per direction for links), bytes"}))
        return 0
    emit(hardware_text(PROFILES))
    return 0

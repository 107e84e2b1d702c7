"""symgpt comm MODEL: the bytes each device sends per training step, by parallel dimension
(data, tensor, pipeline, expert, context) and by collective."""

from __future__ import annotations

from .common import emit, load_model
from .costargs import add_convention, add_memory, memory_options, payload, unbound_hint

HELP = "communication per device per step: data, tensor, pipeline, expert and context parallel"

NAMES = ("comm.dp", "comm.tp", "comm.pp", "comm.ep", "comm.cp", "comm.total")


def add_arguments(p):
    add_convention(p)
    add_memory(p)


def run(args) -> int:
    from ..render.cluster_text import comm_text
    from ..render.jsonout import dumps

    m = load_model(args)
    opts = memory_options(args)
    qs = [m.quantity(n, **opts) for n in NAMES]
    if args.json:
        emit(dumps(payload(m, qs[-1].convention, opts, qs)))
        return 0
    emit(comm_text(m, qs, unbound_hint(m, qs)))
    return 0

"""symgpt comm MODEL: the bytes each device sends per training step, by parallel dimension
(data, tensor, pipeline, expert, context) and by collective."""

from __future__ import annotations

from .common import emit
from .costargs import add_memory_command, memory_quantities, payload, unbound_hint

HELP = "communication per device per step: data, tensor, pipeline, expert and context parallel"

NAMES = ("comm.dp", "comm.tp", "comm.pp", "comm.ep", "comm.cp", "comm.total")


add_arguments = add_memory_command


def run(args) -> int:
    from ..render.cluster_text import comm_text
    from ..render.jsonout import dumps

    m, opts, qs = memory_quantities(args, NAMES)
    if args.json:
        emit(dumps(payload(m, qs[-1].convention, opts, qs)))
        return 0
    emit(comm_text(m, qs, unbound_hint(m, qs)))
    return 0

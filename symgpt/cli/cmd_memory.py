"""symgpt memory MODEL: training memory (weights, gradients, optimizer, activations), logits and
the KV cache, per device, under a named convention and precision policy."""

from __future__ import annotations

from .common import emit
from .costargs import add_memory_command, payload, unbound_hint

HELP = "memory of weights, gradients, optimizer state, activations, logits and KV cache"

NAMES = ("memory.weights", "memory.gradients", "memory.optimizer", "memory.activations",
         "memory.logits", "memory.kv_cache", "memory.total")


def add_arguments(p):
    from .costargs import add_finetune

    add_memory_command(p)
    add_finetune(p)


def run(args) -> int:
    from ..derive.memory import three_term_estimate, setup
    from ..render.costs_text import memory_text
    from ..render.jsonout import dumps, quantity_json

    from .costargs import finetune_json, finetune_model, load_model, memory_options

    m = finetune_model(args, load_model(args))
    names = NAMES
    opts = memory_options(args)
    if opts.get("offload") or opts.get("offload_activations"):  # what went to the host, and its traffic
        names = names + ("memory.host", "offload.traffic")
    qs = [m.quantity(n, **opts) for n in names]
    s = setup(m, **opts)
    # MoE load imbalance: the token copies a capacity limit drops (not bytes: shown after the table)
    dropped = m.quantity("moe.dropped", **opts) if opts.get("capacity_factor") is not None else None
    estimate = three_term_estimate(s.model, s.precision) if m.family.name == "gpt2" else None
    mega = m.quantity("memory.megatron", **opts) if args.convention == "megatron-theoretical" else None
    if args.json:
        out = payload(m, qs[-1].convention, opts, qs)
        if dropped is not None:  # MoE load imbalance
            out["moe.dropped"] = quantity_json(dropped)
        if estimate is not None:
            out["three_term_estimate"] = quantity_json(estimate)
        if mega is not None:
            out["memory.megatron"] = quantity_json(mega)
        if args.finetune is not None or args.freeze is not None:
            out.update(finetune_json(m))
        emit(dumps(out))
        return 0
    emit(memory_text(m, qs, estimate, unbound_hint(m, qs)), fit=True)
    if mega is not None:  # not wrapped: its line reads as Megatron-LM's log line, for grep
        from ..render.cluster_text import megatron_text

        emit("\n" + megatron_text(m, mega, qs))
    if dropped is not None:  # MoE load imbalance: after the table (token copies, not bytes)
        from ..render.text import expr_text

        value = "" if dropped.value is None else f" = {dropped.value}"
        emit(f"moe.dropped = {expr_text(dropped.expr)}{value} token copies per step: {dropped.notes[0].split(';')[0]}")
    return 0

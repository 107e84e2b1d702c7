"""symgpt flops MODEL: forward, backward and training FLOPs under a named convention."""

from __future__ import annotations

from .common import emit, load_model
from .costargs import add_convention, add_finetune, add_flops, finetune_json, finetune_model, flops_options, payload, \
    unbound_hint

HELP = "FLOPs of the forward pass, the backward pass and a training step, by op"


def add_arguments(p):
    add_convention(p)
    add_flops(p)
    add_finetune(p)


def run(args) -> int:
    from ..render.costs_text import flops_text
    from ..render.jsonout import dumps

    m = finetune_model(args, load_model(args))
    opts = flops_options(args)
    qs = [m.quantity(n, **opts) for n in ("flops.forward", "flops.backward", "flops.train")]
    if args.json:
        out = payload(m, qs[-1].convention, opts, qs)
        if args.finetune is not None or args.freeze is not None:
            out.update(finetune_json(m))
        emit(dumps(out))
        return 0
    emit(flops_text(m, qs, unbound_hint(m, qs)), fit=True)
    return 0

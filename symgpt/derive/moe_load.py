"""MoE load imbalance: the busiest expert-parallel rank, a capacity limit, the token copies dropped.

Options (layout fields): ``imbalance`` X (>= 1, at most ep): the routed token copies the busiest
expert-parallel rank receives over the balanced share k·B·T/cp per micro-batch and MoE layer (its
experts equally loaded among themselves); ``capacity_factor`` C: each expert takes at most
C·k·N/E token copies, N the tokens routed in its expert-parallel group (Fedus et al. 2021, Switch
Transformer, Sec. 2.2: expert capacity = (tokens per batch / experts) × capacity factor; with top-k
routing, k copies of each token), so a rank of E/ep experts at most C·k·B·T/cp. The busiest rank
runs min(X, C) times the balanced expert work: its experts' FLOPs (``time.*``) and saved
activations (``memory.activations``) scale by it; of the expert-parallel all-to-alls it sends its
own tokens (dispatch: the balanced share) and its experts' outputs (combine: min(X, C) times it),
each in half the passes. Copies beyond capacity are dropped (the residual carries the token on):
``moe.dropped`` = max(0, X − C)·k·B·T/cp per MoE layer and micro-batch on that rank.

X = 1 without C is balanced routing, the default, and every answer on a mixture of experts says
which it is priced under (``Layout.routing_note``).
"""

from __future__ import annotations

import sympy

from ..graph import roles
from ..ops.base import numel
from .quantity import Quantity
from .memory_setup import memory_quantity, setup
from .tensor_parallel import place

def copies(s):
    """(experts group, token copies routed to this rank per micro-batch at the balanced share) of each
    group of experts on this device (its stage's layers)."""
    arch, lay = s.model.arch, s.lay
    out = []
    for g in arch.groups_with(roles.EXPERTS):
        node = next(n for n in arch.order if arch.graph.nodes[n].get("group") == g.name)
        src = arch.graph.nodes[node]["inputs"][0]
        shape = arch.shape(src)
        tokens = numel(shape) / shape[-1]
        out.append((g.name, tokens * arch.activity(node) * lay.share(place(arch, node)[0]) / lay.cp))
    return out


def dropped(model, **options) -> Quantity:
    """``moe.dropped``: token copies the busiest rank drops per step under the capacity limit."""
    s = setup(model, **options)
    lay = s.lay
    over = sympy.Integer(0) if lay.capacity_factor is None else sympy.Max(0, lay.imbalance - lay.capacity_factor)
    parts = [(f"{g} dropped token copies", over * n * lay.microbatches) for g, n in copies(s)]
    what = ("token copies dropped per step on the busiest expert-parallel rank: max(0, X − C)·k·B·T/cp per MoE "
            "layer and micro-batch" + ("" if lay.capacity_factor is not None else " (no capacity limit: none)"))
    q = memory_quantity(s, "moe.dropped", parts or [("no experts", sympy.Integer(0))], what)
    return Quantity(q.name, q.breakdown, q.bindings, "token copies", q.convention, q.notes)

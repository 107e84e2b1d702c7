"""Active parameters: the parameters a token actually uses (mixture-of-experts models).

Each parameter tensor counts ``arch.activity(node)`` times instead of ``arch.multiplicity``: a
block's weights L times, an expert's weights k of E times per block. For a dense model the
active count equals the total. Registered as the quantity ``params.active``.
"""

from __future__ import annotations

import sympy

from ..graph.arch import Arch
from .quantity import Quantity
from .params import parameter_list


def active_breakdown(arch: Arch) -> tuple[tuple[str, sympy.Expr], ...]:
    totals: dict[str, sympy.Expr] = {}
    for e in parameter_list(arch):
        totals[e.owner] = totals.get(e.owner, sympy.Integer(0)) + e.count * arch.activity(e.node)
    return tuple((p, sympy.expand(v)) for p, v in totals.items())


def active(model, **options) -> Quantity:
    if options:
        from ..core.errors import SymgptError

        raise SymgptError(f"params.active takes no options, got {', '.join(options)}")
    arch = model.arch
    moe = [g.name for g in arch.groups.values() if g.active != g.repeat]
    notes = (f"groups with fewer copies running than existing: {', '.join(moe)}",) if moe else ()
    return Quantity("params.active", active_breakdown(arch), model.bindings, "parameters", "", notes)

"""Parameter counts, derived from the parameter nodes of the graph.

Each parameter node is counted once, times the repeat count of its groups (a block's weights
exist L times). A tied use (an edge from another op's parameter) adds nothing: the LM head of
a tied model appears in the breakdown with 0 and a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy

from ..graph.arch import Arch
from ..ops.base import Shape, numel
from .quantity import Quantity


@dataclass(frozen=True)
class ParamEntry:
    """One parameter tensor: its owner op, local name, shape, count per copy, copies."""

    owner: str
    local: str
    node: str
    shape: Shape
    count: sympy.Expr
    copies: sympy.Expr

    @property
    def total(self) -> sympy.Expr:
        return self.count * self.copies


def parameter_list(arch: Arch) -> list[ParamEntry]:
    """Every parameter tensor the model owns, in forward order of its owner."""
    out = []
    for name, attrs in arch.ops():
        for local, pnode in attrs["params"].items():
            p = arch.graph.nodes[pnode]
            if p["owner"] != name:
                continue  # a tied use: counted at its owner
            out.append(ParamEntry(name, local, pnode, p["shape"], numel(p["shape"]), arch.multiplicity(pnode)))
    return out


def tied_uses(arch: Arch) -> list[tuple[str, str, str]]:
    """(op, local name, owner's parameter node) for every tied parameter use."""
    out = []
    for name, attrs in arch.ops():
        for local, pnode in attrs["params"].items():
            if arch.graph.nodes[pnode]["owner"] != name:
                out.append((name, local, pnode))
    return out


@lru_cache(maxsize=256)
def _breakdown(arch: Arch) -> tuple[tuple[str, sympy.Expr], ...]:
    totals: dict[str, sympy.Expr] = {}
    for name, attrs in arch.ops():
        if attrs["params"]:
            totals.setdefault(name, sympy.Integer(0))
    for e in parameter_list(arch):
        totals[e.owner] += e.total
    return tuple((p, sympy.expand(v)) for p, v in totals.items())


@lru_cache(maxsize=256)
def _notes(arch: Arch) -> tuple[str, ...]:
    out: list[str] = []
    shared: dict[tuple[str, str], int] = {}  # (later use's stack, owner's stack) -> tied parameters
    for op, local, pnode in tied_uses(arch):
        owner = pnode.rsplit(".", 1)[0]
        use, own = arch.stack_of(op), arch.stack_of(owner)
        if use and own and use != own and op[len(use):] == owner[len(own):]:  # a shared block (Builder.shares)
            shared[(use, own)] = shared.get((use, own), 0) + 1
            continue
        out.append(f"{op} uses {owner}'s {local} (tied): counted once, at its owner")
    out += [f"{use} runs {own}'s shared block: its {n} parameter tensors are {own}'s (tied), counted once, "
            f"there; its FLOPs count at every use" for (use, own), n in shared.items()]
    return tuple(out)


def params(arch: Arch, bindings=None) -> Quantity:
    """The exact parameter count of *arch*, by op path (paths under a group total all copies)."""
    return Quantity("params", _breakdown(arch), dict(bindings or {}), "parameters", "", _notes(arch))

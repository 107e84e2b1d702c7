"""The shape trace: every tensor of the forward pass, from input ids to logits (and the loss)."""

from __future__ import annotations

from dataclasses import dataclass

from ..graph.arch import Arch
from ..ops.base import Shape


@dataclass(frozen=True)
class TensorShape:
    """A tensor of the forward pass: node path, human label, producing op, symbolic shape.

    ``group`` is the repeated group it lives in (``blocks``), or None.
    """

    name: str
    label: str
    op: str
    shape: Shape
    group: str | None


def trace(arch: Arch) -> list[TensorShape]:
    """Every input and op output in forward order."""
    out = []
    for n in arch.order:
        a = arch.graph.nodes[n]
        kind = a["op"].kind if a["kind"] == "op" else "input"
        out.append(TensorShape(n, a.get("label", n), kind, tuple(a["shape"]), a["group"]))
    return out


def weight_shapes(arch: Arch) -> list[tuple[str, Shape]]:
    """(parameter node, shape) of every owned parameter, in forward order."""
    out = []
    for name, attrs in arch.ops():
        for pnode in attrs["params"].values():
            p = arch.graph.nodes[pnode]
            if p["owner"] == name:
                out.append((pnode, tuple(p["shape"])))
    return out

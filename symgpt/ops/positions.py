"""Position information without learned tables: rotary embeddings (RoPE) and ALiBi biases.

Rotary embeddings own no parameters. ``RotaryTable`` computes the cos/sin tables once per
forward pass, outside the blocks; ``Rotary`` rotates the first ``fraction`` of each head's
dimensions of Q or K with them (GPT-NeoX rotates 1/4: partial rotary). ``AlibiBias`` adds a
fixed per-head linear bias to the attention scores (Falcon with ``alibi``, BLOOM).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..errors import SymgptError
from .base import Op, Pointwise, Saved, Work, numel, register


def _check_fraction(fraction) -> None:
    if not (isinstance(fraction, sympy.Rational) and 0 < fraction <= 1):
        raise SymgptError(f"rotary fraction must be a rational in (0, 1], got {fraction!r}")


@register
@dataclass(frozen=True)
class RotaryTable(Op):
    """The cos and sin tables of RoPE: ids (B, T) -> (2, T, rot), rot = fraction * d_head.

    Computed once per forward pass from the positions and shared by every layer; no
    parameters, no gradient.
    """

    d_head: sympy.Expr
    fraction: sympy.Rational = sympy.Integer(1)
    kind = "rotary_table"
    title = "Rotary tables"

    def __post_init__(self):
        _check_fraction(self.fraction)

    @property
    def rot(self) -> sympy.Expr:
        return self.fraction * self.d_head

    def shape(self, inputs):
        (ids,) = inputs
        return (sympy.Integer(2), ids[-1], self.rot)  # (B, T) -> (2, T, rot): cos and sin

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)  # angles, then one cos or sin per entry

    def backward(self, inputs, out, ctx):
        return ()  # positions carry no gradient

    def saved(self, inputs, out, ctx):
        return ()

    def describe(self):
        part = "" if self.fraction == 1 else f" ({self.fraction} of d_head)"
        return f"Rotary tables{part}"


@register
@dataclass(frozen=True)
class Rotary(Op):
    """Rotate Q or K by position: x (B, heads, T, d_head), tables (2, T, rot) -> x's shape.

    Work: x*cos + rotate_half(x)*sin on the rotated part, 3 elementwise operations per rotated
    element (the rest passes through). Backward saves only the shared cos/sin tables.
    """

    #: rotation as a complex product (transformers' DeepSeek-V2): the table is kept as one
    #: complex64 tensor of rot/2 entries per position (8 bytes each) instead of cos and sin
    complex: bool = False
    kind = "rotary"
    title = "RoPE"
    arity = 2

    def shape(self, inputs):
        x, table = inputs
        if len(table) != 3 or sympy.expand(table[-2] - x[-2]) != 0:
            raise SymgptError(f"rotary tables {table} do not match the positions of {x}")
        return tuple(x)

    def params(self, inputs):
        return ()

    def _rotated(self, inputs):
        x, table = inputs
        return numel(x[:-1]) * table[-1]

    def forward(self, inputs, out):
        return (Work("elementwise", 3 * self._rotated(inputs)),)

    def backward(self, inputs, out, ctx):
        needs = ctx.needs_grad or (True, False)
        return (Work("elementwise", 3 * self._rotated(inputs), grad="input"),) if needs[0] else ()

    def saved(self, inputs, out, ctx):
        x, table = inputs
        needs = ctx.needs_grad or (True, False)
        if not needs[0]:
            return ()
        if self.complex and ctx.implementation == "hf-eager":
            return (Saved("freqs_cis", tuple(table[1:]), "fp32", shares="input1"),)  # T·rot/2 complex64
        return (Saved("cos_sin", tuple(table), shares="input1"),)


@register
@dataclass(frozen=True)
class AlibiBias(Pointwise):
    """ALiBi: add a fixed, per-head linear bias to the scores (B, h, T, T); no parameters."""

    kind = "alibi"
    title = "ALiBi bias"
    backward_work = False

    def saved(self, inputs, out, ctx):
        return ()

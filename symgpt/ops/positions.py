"""Position information without learned tables: rotary embeddings (RoPE) and ALiBi biases.

Rotary embeddings own no parameters. ``RotaryTable`` computes the cos/sin tables once per
forward pass, outside the blocks; ``Rotary`` rotates the first ``fraction`` of each head's
dimensions of Q or K with them (GPT-NeoX rotates 1/4: partial rotary). ``AlibiBias`` adds a
fixed per-head linear bias to the attention scores (Falcon with ``alibi``, BLOOM).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Op, ParamSpec, Pointwise, Saved, Work, numel, register


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
    """Rotate Q or K by position: x (B, heads, T, d_head), tables (2, T, rot) -> x's shape (or one
    (T, rot) table of sin | cos halves, RoFormer's, each half repeated into a rot-wide factor).

    Work: x*cos + rotate_half(x)*sin on the rotated part, 3 elementwise operations per rotated
    element (the rest passes through). Backward saves only the shared cos/sin tables.
    """

    #: rotation as a complex product (transformers' DeepSeek-V2): the table is kept as one
    #: complex64 tensor of rot/2 entries per position (8 bytes each) instead of cos and sin
    complex: bool = False
    #: interleaved pairs rotated (transformers' GLM, Helium, ERNIE 4.5): each layer's
    #: apply_rotary_pos_emb repeats the first half of cos and sin (``repeat_interleave(2)``) into
    #: tables of its own, which the layer's products keep under hf-eager
    interleaved: bool = False
    kind = "rotary"

    def __repr__(self):
        return f"Rotary(complex={self.complex!r}" + (", interleaved=True)" if self.interleaved else ")")
    title = "RoPE"
    arity = 2

    def shape(self, inputs):
        x, table = inputs
        # (2, T, rot): cos and sin; (T, rot): one table holding both halves (RoFormer's sin | cos)
        if len(table) not in (2, 3) or sympy.expand(table[-2] - x[-2]) != 0:
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
        per_copy = self.interleaved and ctx.implementation == "hf-eager"
        return (Saved("cos_sin", tuple(table), shares="input1", per_copy=per_copy),)


@register
@dataclass(frozen=True)
class AlibiBias(Pointwise):
    """ALiBi: add a fixed, per-head linear bias to the scores (B, h, T, T); no parameters."""

    kind = "alibi"
    title = "ALiBi bias"
    backward_work = False

    def saved(self, inputs, out, ctx):
        return ()


@register
@dataclass(frozen=True)
class RelativePositionBias(Op):
    """T5's relative position bias: query ids (B, T_q) [and key ids (B, T_k)] -> (1, heads, T_q, T_k).

    Each (query, key) offset falls in one of ``buckets`` buckets (exact for small offsets,
    logarithmic up to ``max_distance``; ``bidirectional`` buckets tell earlier from later keys, as
    in an encoder); a learned (buckets, heads) table gives each head a bias per bucket. HF's T5
    computes it once per stack, in the first layer, and hands it to every layer: the table is
    counted once (``T5Attention.relative_attention_bias``), and so is the lookup. Bucketing is
    integer index arithmetic and the lookup a gather: no FLOPs in any convention.
    """

    buckets: sympy.Expr
    heads: sympy.Expr
    bidirectional: bool = True
    kind = "relative_position_bias"
    title = "Relative position bias"
    arity = None
    #: with the query ids only, the keys are the same positions -- and, at a decode step, every
    #: position the cache holds too (``derive.step`` passes them as the key ids)
    key_positions = True

    def shape(self, inputs):
        if len(inputs) not in (1, 2):
            raise SymgptError("a relative position bias reads the query ids (and the key ids)")
        q = inputs[0]
        k = inputs[-1]
        return (sympy.Integer(1), self.heads, q[-1], k[-1])  # (B, T_q), (B, T_k) -> (1, h, T_q, T_k)

    def params(self, inputs):
        return (ParamSpec("weight", (self.buckets, self.heads)),)

    def forward(self, inputs, out):
        return ()  # bucket indices (integer arithmetic) and a gather

    def backward(self, inputs, out, ctx):
        return ()  # an index-add of the gradient into the table: no multiply-adds

    def saved(self, inputs, out, ctx):
        # the embedding lookup keeps its (T_q, T_k) bucket indices for the table's gradient
        return (Saved("buckets", tuple(out[-2:]), "int64"),) if ctx.trainable else ()

    def describe(self):
        return f"Relative bias {self.buckets} buckets × {self.heads}" + ("" if self.bidirectional else ", causal")


@register
@dataclass(frozen=True)
class SinusoidalPositions(Op):
    """Fixed sinusoidal positions (Vaswani et al. 2017, Sec. 3.5): ids (B, T) -> (T, dim), no parameters.

    One sine or cosine per entry, computed from the positions (a buffer in most implementations);
    no gradient."""

    dim: sympy.Expr
    kind = "sinusoidal_positions"
    title = "Sinusoidal positions"

    def shape(self, inputs):
        (ids,) = inputs
        return (ids[-1], self.dim)  # (B, T) -> (T, d)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return (Work("elementwise", numel(out)),)

    def backward(self, inputs, out, ctx):
        return ()

    def saved(self, inputs, out, ctx):
        return ()

    def describe(self):
        return f"Sinusoidal positions ×{self.dim}"

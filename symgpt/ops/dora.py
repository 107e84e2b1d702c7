"""DoRA's two ops (Liu et al. 2024, "DoRA: Weight-Decomposed Low-Rank Adaptation"), as the peft
library runs them in a training forward of an adapted linear layer (``peft.tuners.lora.dora.
DoraLinearLayer.forward``, no adapter dropout):

* :class:`DoraNorm` -- ``m / ‖W + s·B·A‖``, one value per output row: B·A is built by running the
  two adapters on an identity matrix (``lora_B(lora_A(eye(d_in)))``: d_in·d_in·r + d_in·r·d_out
  multiply-adds), the row norm of W + s·B·A is taken from a detached copy (Sec. 4.3 of the paper:
  no gradient flows through the norm, and the pass keeps nothing once the layer's forward returns),
  and the trainable magnitude m is divided by it (the division keeps the norm for m's gradient);
* :class:`DoraScale` -- the layer's output ``y + (m/‖·‖ − 1)·(y − b) + (m/‖·‖)·(s·B·A·x)``: the
  base output rescaled row by row and the adapter's output added, scaled. Its products keep the
  base output without its bias (a fresh tensor when the layer has a bias), m/‖·‖ − 1 (when the base
  output needs a gradient), the adapter's output and m/‖·‖.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .base import Op, ParamSpec, Saved, Work, numel, register


@register
@dataclass(frozen=True)
class DoraNorm(Op):
    """m / ‖W + s·B·A‖ (d_out,) of one adapted linear layer (n_in -> n_out, adapter rank r); owns
    the magnitude m (n_out,). Its input is the layer's input, read only for its place in the
    forward: the op works on weights. Forward: the identity pass through the adapters (matmuls),
    s·B·A and W + s·B·A (elementwise), the row norms (norm work), the division. Backward: m's
    gradient, one division per row; no gradient reaches the adapters or the input through it."""

    n_in: sympy.Expr
    n_out: sympy.Expr
    rank: sympy.Expr
    kind = "dora_norm"
    title = "DoRA m/‖W+sBA‖"

    def shape(self, inputs):
        (x,) = inputs
        if sympy.expand(x[-1] - self.n_in) != 0:
            raise SymgptError(f"DoRA norm expects last dimension {self.n_in}, got {x[-1]}")
        return (self.n_out,)  # (..., n_in) -> (n_out,): one scale per output row

    def params(self, inputs):
        return (ParamSpec("magnitude", (self.n_out,)),)

    def forward(self, inputs, out):
        weights = self.n_in * self.n_out
        return (Work("matmul", self.n_in * self.n_in * self.rank + self.n_in * self.rank * self.n_out, tag="dense"),
                Work("elementwise", 2 * weights),  # s·B·A, then W + s·B·A
                Work("norm", weights),              # the row norms
                Work("elementwise", self.n_out))    # m / ‖·‖

    def backward(self, inputs, out, ctx):
        return (Work("elementwise", self.n_out, grad="weight"),) if ctx.trainable else ()

    def saved(self, inputs, out, ctx):
        # m / ‖·‖ keeps the (detached) norm for m's gradient
        return (Saved("norm", (self.n_out,)),) if ctx.trainable else ()

    def describe(self):
        return f"DoRA m/‖W+sBA‖ ({self.n_in}->{self.n_out}, r {self.rank})"


@register
@dataclass(frozen=True)
class DoraScale(Op):
    """y + (g − 1)·(y − b) + g·(s·l): inputs the base output y (..., n), the adapter's output l
    (..., n) and g = m/‖·‖ (n,); ``factor`` is s = alpha/r, ``bias`` whether the base layer adds a
    bias b (peft subtracts it before rescaling)."""

    factor: sympy.Expr
    bias: bool = False
    #: adapter dropout: the rescaled base output is a second input, the base layer run on the
    #: dropped input (:class:`DoraBase`, no bias), and y itself is only added
    separate: bool = False
    kind = "dora_scale"
    title = "DoRA rescale"
    arity = None

    def _split(self, inputs):
        """(y, the base output rescaled, l, g) and the input slot of the rescaled one."""
        if self.separate:
            y, yb, lo, g = inputs
            return y, yb, lo, g, 1
        y, lo, g = inputs
        return y, y, lo, g, 0

    def shape(self, inputs):
        if len(inputs) != (4 if self.separate else 3):
            raise SymgptError(f"DoRA rescale takes {4 if self.separate else 3} inputs, got {len(inputs)}")
        y, yb, lo, g, _ = self._split(inputs)
        if tuple(yb) != tuple(y):
            raise SymgptError(f"DoRA rescale expects both base outputs of one shape, got {tuple(y)}, {tuple(yb)}")
        if tuple(y) != tuple(lo) or len(g) != 1 or sympy.expand(g[0] - y[-1]) != 0:
            raise SymgptError(f"DoRA rescale expects y and l of one shape and g of their last dimension, got "
                              f"{tuple(y)}, {tuple(lo)}, {tuple(g)}")
        return tuple(y)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        n, rows = numel(out), inputs[-1][0]
        # [y − b], (g − 1), (g − 1)·y, g·l, ·s, the sum of the two, y + it
        return (Work("elementwise", (6 if self.bias and not self.separate else 5) * n + rows),)

    def _needs(self, inputs, ctx):
        """Whether the rescaled base output, l and g need gradients."""
        needs = ctx.needs_grad or (True,) * len(inputs)
        return tuple(needs[1:]) if self.separate else tuple(needs)

    def backward(self, inputs, out, ctx):
        base, lora, scale = self._needs(inputs, ctx)
        n, rows = numel(out), inputs[-1][0]
        work = []
        if base:  # (g − 1)·dy (added to dy where the base output is y itself)
            work.append(Work("elementwise", (1 if self.separate else 2) * n, grad="input"))
        if lora:
            work.append(Work("elementwise", 2 * n, grad="input"))  # s·dy, times g
        if scale:
            work.append(Work("elementwise", 4 * n + rows, grad="input"))  # dy·y and dy·s·l, summed over rows
        return tuple(work)

    def saved(self, inputs, out, ctx):
        y, yb, lo, g, slot = self._split(inputs)
        base, lora, scale = self._needs(inputs, ctx)
        first = slot + 1  # the slot of l (g follows it)
        kept = []
        if scale:  # g's gradient needs the rescaled base output and l
            # y − b is a fresh tensor; without a bias (or run apart on the dropped input) it is the input itself
            fresh = self.bias and not self.separate
            kept.append(Saved("base_result", tuple(yb), shares="" if fresh else f"input{slot}"))
            kept.append(Saved("lora_result", tuple(lo), shares=f"input{first}"))
        if base:  # the base output's gradient needs g − 1
            kept.append(Saved("scale_minus_one", tuple(g)))
        if lora:  # l's gradient needs g
            kept.append(Saved("scale", tuple(g), shares=f"input{first + 1}"))
        return tuple(kept)

    def describe(self):
        return f"DoRA rescale (s = {self.factor})"


@register
@dataclass(frozen=True)
class DoraBase(Op):
    """With adapter dropout, peft runs the base layer a second time, on the dropped input and
    without its bias: x' @ W (..., n_in) -> (..., n_out), W the base layer's (tied, frozen) weight.
    ``fresh_weight``: the layer stores W as (in, out) (transformers' ``Conv1D``, GPT-2), and peft
    hands the product a new ``nn.Parameter`` of Wᵀ, which autograd gives a gradient it then drops:
    a weight-gradient matmul each step, its input kept for it, and an output that needs a
    gradient even where x' does not."""

    n_in: sympy.Expr
    n_out: sympy.Expr
    fresh_weight: bool = False
    kind = "dora_base"
    title = "DoRA base (dropped input)"

    def shape(self, inputs):
        (x,) = inputs
        if sympy.expand(x[-1] - self.n_in) != 0:
            raise SymgptError(f"DoRA base expects last dimension {self.n_in}, got {x[-1]}")
        return (*x[:-1], self.n_out)  # (..., n_in) -> (..., n_out)

    def params(self, inputs):
        return (ParamSpec("weight", (self.n_in, self.n_out)),)

    def _macs(self, inputs):
        return numel(inputs[0][:-1]) * self.n_in * self.n_out

    def forward(self, inputs, out):
        return (Work("matmul", self._macs(inputs), tag="dense"),)

    def backward(self, inputs, out, ctx):
        work = []
        if ctx.needs_grad and ctx.needs_grad[0]:
            work.append(Work("matmul", self._macs(inputs), tag="dense", grad="input"))
        if self.fresh_weight:
            work.append(Work("matmul", self._macs(inputs), tag="dense", grad="weight"))
        return tuple(work)

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        return (Saved("input", tuple(x), shares="input0"),) if self.fresh_weight else ()

    def describe(self):
        return f"DoRA base {self.n_in}->{self.n_out} on the dropped input"

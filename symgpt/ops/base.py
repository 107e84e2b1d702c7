"""The op machinery: what every op definition carries, and the loud registry.

An op is a small frozen dataclass whose fields are its hyperparameters. Given the symbolic
shapes of its inputs it answers, each by a rule of its own:

* ``shape``    -- the output shape;
* ``params``   -- the parameter tensors it owns (local name and shape);
* ``forward``  -- the arithmetic of its forward pass, as :class:`Work` items;
* ``backward`` -- the arithmetic of its backward pass, given which inputs need gradients;
* ``saved``    -- the tensors it keeps for backward, as :class:`Saved` items.

Work is counted in the op's own units (multiply-adds for matmuls, elements for everything
else). Turning work into FLOPs is a *convention* (FLOPs per multiply-add, softmax cost, causal
halving, ...) and happens in one place, ``symgpt.derive.flops``; ops never choose one.

A rule an op does not define raises :class:`MissingRule`: nothing is silently counted as zero.
An op that genuinely costs nothing says so (``forward`` returns ``()``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import sympy

from ..core.errors import SymgptError

Shape = tuple  # tuple[sympy.Expr, ...]


class MissingRule(SymgptError):
    """An op was asked for a rule it does not define."""


def numel(shape: Shape) -> sympy.Expr:
    """The number of elements of a tensor of *shape* (1 for a scalar)."""
    return sympy.Mul(*shape) if shape else sympy.Integer(1)


#: kinds of work and their unit
WORK_KINDS = {
    "matmul": "multiply-adds",
    "softmax": "elements",
    "norm": "elements",
    "activation": "elements",
    "elementwise": "elements",
    "loss": "elements",
}

#: what a matmul does, so that conventions can include or exclude it
MATMUL_TAGS = (
    "dense",             # a linear layer of the residual stream (QKV, projections, FFN)
    "attention_scores",  # Q.K^T
    "attention_values",  # A.V
    "lm_head",           # the final projection to the vocabulary
    "embedding",         # an embedding lookup counted as a one-hot matmul
    "router",            # a mixture-of-experts router
    "scan",              # the contractions of a state-space scan (C·h per step; Mamba-2's SSD einsums)
)


@dataclass(frozen=True)
class Work:
    """A piece of arithmetic: *count* units of *kind* (see ``WORK_KINDS``).

    ``tag`` says what a matmul is for (``MATMUL_TAGS``); ``causal`` marks attention work that
    a causal mask lets a kernel skip half of; ``grad`` says which backward term it is
    (``"input"``, ``"weight"``, or ``""`` for forward work).
    """

    kind: str
    count: sympy.Expr
    tag: str = ""
    causal: bool = False
    grad: str = ""

    def __post_init__(self) -> None:
        if self.kind not in WORK_KINDS:
            raise SymgptError(f"unknown work kind {self.kind!r}")
        if self.kind == "matmul" and self.tag not in MATMUL_TAGS:
            raise SymgptError(f"matmul work needs a tag from {MATMUL_TAGS}, got {self.tag!r}")


#: storage classes of saved tensors; their byte sizes depend on the precision policy
SAVED_DTYPES = ("act", "fp32", "bool", "int64")


@dataclass(frozen=True)
class Saved:
    """A tensor an op keeps for its backward pass.

    ``dtype`` is a storage class: ``act`` (the activation dtype of the precision policy),
    ``fp32`` (always 4 bytes, e.g. normalisation statistics), ``bool`` (1 byte: masks),
    ``int64`` (8 bytes: indices). ``role`` names the tensor (``"input"``, ``"output"``,
    ``"mask"``, ...); ``shares`` names the graph tensor it is (``"input0"``, ``"output"``) so
    that two ops saving the same tensor are counted once. ``per_copy``: the op keeps a copy of
    that input made in each copy of its repeated group (a layer's own rotary tables), so an input
    made once outside the group still counts once per copy (and once for the ops of one copy).
    """

    role: str
    shape: Shape
    dtype: str = "act"
    shares: str = ""
    per_copy: bool = False

    def __post_init__(self) -> None:
        if self.dtype not in SAVED_DTYPES:
            raise SymgptError(f"unknown saved dtype {self.dtype!r}")


@dataclass(frozen=True)
class ParamSpec:
    """A parameter tensor an op owns: its local name (``weight``, ``bias``) and shape."""

    name: str
    shape: Shape


@dataclass(frozen=True)
class Context:
    """What the ``saved`` and ``backward`` rules may depend on besides shapes.

    ``needs_grad[i]`` tells whether input ``i`` needs a gradient; ``trainable`` whether the
    op's own parameters do. ``attention`` is the attention implementation (``"eager"`` keeps
    the T x T probabilities, ``"flash"`` a per-row statistic); ``dropout`` whether dropout
    is active (masks are saved). ``implementation`` is whose code the saved tensors follow:
    ``"fused"`` (one kernel per op, the ideal) or ``"hf-eager"`` (transformers' eager modules,
    where some ops are written as several PyTorch ops and keep more; see ``symgpt.core.conventions.IMPLEMENTATIONS``).
    """

    needs_grad: tuple = ()
    trainable: bool = True
    attention: str = "eager"
    dropout: bool = False
    implementation: str = "fused"


class Op:
    """Base of every op definition. Subclasses are frozen dataclasses registered by kind."""

    kind: ClassVar[str] = ""
    #: a short human label for diagrams and traces
    title: ClassVar[str] = ""
    #: number of inputs (None: any number >= 1)
    arity: ClassVar[int | None] = 1

    def _missing(self, rule: str):
        raise MissingRule(f"op {self.kind!r} has no {rule} rule")

    def shape(self, inputs: tuple[Shape, ...]) -> Shape:
        self._missing("shape")

    def params(self, inputs: tuple[Shape, ...]) -> tuple[ParamSpec, ...]:
        self._missing("params")

    def forward(self, inputs: tuple[Shape, ...], out: Shape) -> tuple[Work, ...]:
        self._missing("forward")

    def backward(self, inputs: tuple[Shape, ...], out: Shape, ctx: Context) -> tuple[Work, ...]:
        self._missing("backward")

    def saved(self, inputs: tuple[Shape, ...], out: Shape, ctx: Context) -> tuple[Saved, ...]:
        self._missing("saved")

    def describe(self) -> str:
        """A one-line description of the op with its hyperparameters (for diagrams)."""
        return self.title or self.kind


class Pointwise(Op):
    """A parameter-free op that keeps its input's shape and costs ``work`` per element, forward
    and backward (``backward_work = False``: the gradient passes through uncounted). Subclasses
    say what they save."""

    work: ClassVar[str] = "elementwise"
    backward_work: ClassVar[bool] = True

    def shape(self, inputs):
        (x,) = inputs
        return tuple(x)  # (...) -> (...)

    def params(self, inputs):
        return ()

    def forward(self, inputs, out):
        return (Work(self.work, numel(out)),)

    def backward(self, inputs, out, ctx):
        return (Work(self.work, numel(out), grad="input"),) if self.backward_work else ()


_REGISTRY: dict[str, type[Op]] = {}


def register(cls: type[Op]) -> type[Op]:
    """Class decorator: register an op definition under ``cls.kind``; duplicates raise."""
    if not cls.kind:
        raise SymgptError(f"op class {cls.__name__} has no kind")
    if cls.kind in _REGISTRY:
        raise SymgptError(f"op kind {cls.kind!r} is registered twice")
    _REGISTRY[cls.kind] = cls
    return cls


def op_class(kind: str) -> type[Op]:
    """The registered op definition of *kind*; a clear error for an unknown kind."""
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise SymgptError(f"no op of kind {kind!r} is registered; known: {', '.join(sorted(_REGISTRY))}") from None


def registered_kinds() -> tuple[str, ...]:
    return tuple(sorted(_REGISTRY))


def check_registered(op: Op) -> None:
    """Raise unless *op* is an instance of the class registered for its kind."""
    if _REGISTRY.get(op.kind) is not type(op):
        raise SymgptError(f"op {type(op).__name__} (kind {op.kind!r}) is not registered")

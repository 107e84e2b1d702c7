"""FLOPs, derived by walking the op graph under a counting convention.

For every op node: its ``forward`` (and ``backward``, given which inputs need gradients) Work
items, priced by the convention (``symgpt.core.conventions``), times ``arch.activity(node)`` (the
copies that run: L for a block, k of E for experts). Training = forward + backward, plus the
recomputed forward of the ops a recompute policy recomputes when hardware FLOPs are asked for.

Quantities registered here (options in brackets; any :class:`Convention` choice may also be
overridden by name, e.g. ``causal_halving=True``):

* ``flops.forward``  [convention, per]
* ``flops.backward`` [convention, per]
* ``flops.train``    [convention, per, recompute, hardware]

Breakdowns are keyed by op node path (GPT-2: ``blocks/attention/scores``, ``lm_head``); paths
under a repeated group total all its copies. Ops that cost 0 under the convention are left out.
The LM head a convention may leave out is the op whose role is ``roles.HEAD``.
"""

from __future__ import annotations

import sympy

from ..graph import roles as R
from ..core.conventions import Convention, check_choice, convention, PER, RECOMPUTE
from ..core.errors import SymgptError
from ..graph.arch import Arch
from ..ops.base import Work
from .quantity import Quantity
from ..core.symbols import B
from .walk import context, feeds_result, needs_grad, recomputed, tokens, variants

_ELEMENT_KINDS = ("softmax", "norm", "activation", "elementwise", "loss")


def resolve(name=None, **overrides) -> Convention:
    """The convention *name* with choices overridden (None values are ignored)."""
    conv = convention(name)
    changes = {k: v for k, v in overrides.items() if v is not None}
    if "recompute" in changes:
        check_choice("recompute", changes["recompute"], RECOMPUTE)
    return conv.with_(**changes) if changes else conv


#: choices shown under the name of their command-line flag (``--hfu``; ``--hardware NAME`` is a
#: device profile, so a label saying ``hardware=True`` would read as one)
_SHOWN = {"hardware": "hfu"}


def label(conv: Convention, base: str) -> str:
    """``kaplan`` or ``kaplan (per=batch, recompute=full)`` when choices were overridden."""
    ref = convention(base) if isinstance(base, str) else conv
    if conv == ref:  # the common case, without printing every choice twice
        return conv.name
    theirs = ref.choices()
    diff = [f"{_SHOWN.get(k, k)}={v}" for k, v in conv.choices().items() if theirs.get(k) != v]
    return conv.name + (f" ({', '.join(diff)})" if diff else "")


def work_flops(conv: Convention, w: Work, head: bool = False) -> sympy.Expr:
    """The FLOPs of one Work item under *conv* (*head*: the work of the LM head, or a matmul
    tagged ``lm_head``)."""
    if w.kind == "matmul":
        if ((head or w.tag == "lm_head") and not conv.lm_head) or (w.tag == "embedding" and not conv.embedding_matmul) \
                or (w.tag == "attention_values" and not conv.attention_values):
            return sympy.Integer(0)
        f = conv.flops_per_mac * w.count
        return f / 2 if (w.causal and conv.causal_halving) else f
    if w.kind not in _ELEMENT_KINDS:
        raise SymgptError(f"no FLOP price for work of kind {w.kind!r}")
    return getattr(conv, w.kind) * w.count


def _sum(conv, works, head: bool = False) -> sympy.Expr:
    return sympy.Add(*[work_flops(conv, w, head) for w in works])


def op_forward(arch: Arch, node: str, conv: Convention) -> sympy.Expr:
    """Forward FLOPs of one copy of *node*."""
    a = arch.graph.nodes[node]
    return _sum(conv, a["op"].forward(arch.input_shapes(node), a["shape"]), a.get("role") == R.HEAD)


def op_backward(arch: Arch, node: str, conv: Convention) -> sympy.Expr:
    """Backward FLOPs of one copy of *node* (0 when no gradient reaches it); with frozen
    parameters, the average over a stack's first copy and the copies after it."""
    vs = variants(arch, node)
    if len(vs) == 1:
        return _op_backward(arch, node, conv, False)
    return sympy.Add(*[share * _op_backward(arch, node, conv, steady) for steady, share in vs])


def _op_backward(arch: Arch, node: str, conv: Convention, steady: bool) -> sympy.Expr:
    a = arch.graph.nodes[node]
    if not needs_grad(arch, steady)[node] or node not in feeds_result(arch):
        return sympy.Integer(0)
    op, ins, out = a["op"], arch.input_shapes(node), a["shape"]
    head = a.get("role") == R.HEAD
    if conv.backward_factor is not None:
        return conv.backward_factor * _sum(conv, op.forward(ins, out), head)
    works = op.backward(ins, out, context(arch, node, conv.attention, steady=steady))
    if conv.attention_backward is None:
        return _sum(conv, works, head)
    attn = ("attention_scores", "attention_values")
    rest = [w for w in works if not (w.kind == "matmul" and w.tag in attn)]
    fwd = [w for w in op.forward(ins, out) if w.kind == "matmul" and w.tag in attn]
    return _sum(conv, rest, head) + conv.attention_backward * _sum(conv, fwd, head)


def op_weight_backward(arch: Arch, node: str, conv: Convention) -> sympy.Expr:
    """The weight-gradient part of :func:`op_backward` (its Work tagged ``grad="weight"``; the
    rest is the input gradient): W of the zero-bubble schedules. Under a convention that prices
    the backward as a factor of the forward, the op's own split at that price."""
    a = arch.graph.nodes[node]
    if not needs_grad(arch)[node] or node not in feeds_result(arch):
        return sympy.Integer(0)
    op, ins, out = a["op"], arch.input_shapes(node), a["shape"]
    works = [w for w in op.backward(ins, out, context(arch, node, conv.attention)) if w.grad == "weight"]
    return _sum(conv, works, a.get("role") == R.HEAD)


def _per(conv: Convention, expr: sympy.Expr, arch: Arch) -> sympy.Expr:
    check_choice("per", conv.per, PER)
    if conv.per == "sequence":
        return expr / B
    if conv.per == "token":
        return expr / tokens(arch)  # B·T; B·(T_enc + T_dec) for an encoder--decoder
    return expr


def _breakdown(arch: Arch, conv: Convention, parts) -> tuple:
    out = []
    for node, _ in arch.ops():
        e = sympy.Integer(0)
        for part in parts:
            e += part(node)
        e = sympy.expand(_per(conv, e * arch.activity(node), arch))
        if e != 0:
            out.append((node, e))
    return tuple(out)


def _notes(arch: Arch, conv: Convention, what: str) -> tuple[str, ...]:
    unit = {"batch": "per step (a batch of B sequences of T tokens)", "sequence": "per sequence of T tokens",
            "token": "per token"}[conv.per]
    if len(arch.stacks()) > 1:
        lengths = " + ".join(str(g.length) for g in arch.stacks())
        unit = {"batch": f"per step (a batch of B sequences of {lengths} tokens)",
                "sequence": f"per sequence ({lengths} tokens)",
                "token": f"per token (of the B·({lengths}) a step processes)"}[conv.per]
    # what an op's own work means where a convention alone does not say it (a scan's recurrence)
    ops_notes = dict.fromkeys(n for _, a in arch.ops() if (n := getattr(a["op"], "flops_note", "")))
    return (f"{what}, {unit}; convention {conv.name}: {conv.summary} [{conv.source}]",
            *(f"paths under {g.name}/ total all {g.repeat} layers" for g in arch.stacks()), *ops_notes)


def _quantity(model, name, conv, parts, what, base) -> Quantity:
    arch = model.arch
    return Quantity(name, _breakdown(arch, conv, parts), model.bindings, "FLOPs", label(conv, base),
                    _notes(arch, conv, what))


def forward(model, convention=None, **overrides) -> Quantity:
    conv = resolve(convention, **overrides)
    arch = model.arch
    return _quantity(model, "flops.forward", conv, [lambda n: op_forward(arch, n, conv)],
                     "forward pass", convention or "default")


def backward(model, convention=None, **overrides) -> Quantity:
    conv = resolve(convention, **overrides)
    arch = model.arch
    return _quantity(model, "flops.backward", conv, [lambda n: op_backward(arch, n, conv)],
                     "backward pass (input and weight gradients)", convention or "default")


def train(model, convention=None, **overrides) -> Quantity:
    """Forward + backward (+ the recomputed forward when ``hardware``)."""
    conv = resolve(convention, **overrides)
    arch = model.arch
    again = recomputed(arch, conv.recompute) if conv.hardware else frozenset()
    parts = [lambda n: op_forward(arch, n, conv), lambda n: op_backward(arch, n, conv),
             lambda n: conv.recompute_passes * op_forward(arch, n, conv) if n in again else 0]
    kind = "hardware FLOPs" if conv.hardware else "model FLOPs"
    what = f"one training step, {kind} (recompute={conv.recompute}" + \
        (", recomputed forward counted)" if conv.hardware else ", recomputation not counted)")
    return _quantity(model, "flops.train", conv, parts, what, convention or "default")

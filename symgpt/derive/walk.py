"""What FLOP and memory derivations share: gradient flow, op contexts, recomputation sets.

* ``needs_grad(arch)``: which tensors need a gradient. Input ids do not, nor the output of an op
  declared ``no_grad`` (run under ``torch.no_grad``); an op's output does when any input does or
  when the op owns (or ties) a trainable parameter.
* ``feeds_result(arch)``: the nodes the loss (or output) is computed from: a gradient reaches
  only these.
* ``context(arch, node, ...)``: the :class:`~symgpt.ops.base.Context` an op's ``backward`` and
  ``saved`` rules receive.
* ``attention_core(arch)``: the ops from each Q·Kᵀ to its A·V, inclusive (what selective
  recomputation recomputes, Korthikanti et al. 2022 Sec. 5).
* ``recomputed(arch, policy)``: the ops whose forward runs again under a recompute policy
  (``full``: every op inside a repeated group; each block's input is kept as a checkpoint).
"""

from __future__ import annotations

from functools import lru_cache


import sympy

from ..graph.arch import Arch
from ..ops.base import Context
from ..core.symbols import B, T


@lru_cache(maxsize=256)
def needs_grad(arch: Arch, steady: bool = False) -> dict[str, bool]:
    """Node -> whether its output needs a gradient (every parameter trainable unless its node is
    marked ``frozen``). *steady*: inside a stack, the copies after the first, whose carried input
    (the previous layer's output) needs a gradient when the layer holds anything trainable; the
    first copy reads the embeddings, which a frozen embedding leaves without one."""
    out: dict[str, bool] = {}
    warm = _warm(arch) if steady else frozenset()
    for n in arch.order:
        a = arch.graph.nodes[n]
        if a["kind"] == "input":
            out[n] = False  # token ids are integers: no gradient
        elif a.get("no_grad"):
            out[n] = False  # run under torch.no_grad: no backward, its parameters get no gradient
        else:
            # (fresh_weight: an op that wraps a frozen weight in a new parameter, ops.dora.DoraBase)
            out[n] = owns_trainable(arch, a) or any(out[i] for i in a["inputs"]) or (
                bool(warm) and _carried(arch, n, warm)) or getattr(a["op"], "fresh_weight", False)
    return out


# --- frozen parameters (fine-tuning: derive.finetune) -------------------------------------------------
def owns_trainable(arch: Arch, attrs: dict) -> bool:
    """Whether an op uses a parameter that gets a gradient (one not marked ``frozen``)."""
    return any(not arch.graph.nodes[p].get("frozen") for p in attrs["params"].values())


@lru_cache(maxsize=256)
def has_frozen(arch: Arch) -> bool:
    """Whether any parameter of *arch* is frozen (a fine-tuned graph)."""
    return any(a.get("frozen") for _, a in arch.graph.nodes.data() if a["kind"] == "param")


def _warm(arch: Arch) -> frozenset:
    first = needs_grad(arch)
    return frozenset(g.name for n in arch.order if first[n] and (g := top_group(arch, n)) is not None)


def _carried(arch: Arch, node: str, warm: frozenset) -> bool:
    g = top_group(arch, node)
    if g is None or g.name not in warm:
        return False
    return any(top_group(arch, i) is not g and arch.graph.nodes[i]["kind"] == "op"
               and not loop_invariant(arch, i, node) for i in arch.graph.nodes[node]["inputs"])


def variants(arch: Arch, node: str) -> tuple[tuple[bool, sympy.Expr], ...]:
    """(steady, share of the copies) of *node*: one variant, (False, 1), unless some parameter is
    frozen and *node* lies in a stack of N layers, where the first copy differs from the N - 1
    after it (see :func:`needs_grad`)."""
    g = top_group(arch, node) if has_frozen(arch) else None
    if g is None:
        return ((False, sympy.Integer(1)),)
    return ((True, (g.active - 1) / g.active), (False, 1 / g.active))


@lru_cache(maxsize=256)
def feeds_result(arch: Arch) -> frozenset[str]:
    """The nodes the loss (or, without one, the output) is computed from, and itself: a gradient
    reaches only these. An op off every such path (BigBirdModel's pooler under its LM head) runs
    forward and gets no backward."""
    target = arch.loss or arch.output
    return frozenset(arch.graph.ancestors(target)) | {target}


def context(arch: Arch, node: str, attention: str = "eager", dropout: bool = False,
            implementation: str = "fused", steady: bool = False) -> Context:
    """The context of *node*'s backward and saved rules (*steady*: see :func:`needs_grad`)."""
    grads = needs_grad(arch, steady)
    a = arch.graph.nodes[node]
    return Context(needs_grad=tuple(grads[i] for i in a["inputs"]), trainable=owns_trainable(arch, a),
                   attention=attention, dropout=dropout, implementation=implementation)


@lru_cache(maxsize=256)
def attention_core(arch: Arch) -> frozenset[str]:
    """Every op on a path from an attention-scores matmul to the first attention-values matmul
    after it (inclusive)."""
    g = arch.graph
    core: set[str] = set()
    for n, a in arch.ops():
        if not _is_matmul(a, "attention_scores") or a.get("no_grad"):
            continue  # (an indexer's scores, run without gradient, are no attention core)
        lengths = g.distances(n)
        values = [v for v in lengths if _is_matmul(g.nodes[v], "attention_values")]
        if not values:
            continue
        v = min(values, key=lambda x: lengths[x])
        between = g.descendants(n) & g.ancestors(v)
        core |= {n, v} | {x for x in between if g.nodes[x]["kind"] == "op"}
    return frozenset(core)


def _is_matmul(attrs: dict, tag: str) -> bool:
    op = attrs.get("op")
    return op is not None and op.kind == "matmul" and op.tag == tag


def in_group(arch: Arch, node: str) -> bool:
    return arch.graph.nodes[node]["group"] is not None


def recomputed(arch: Arch, policy: str) -> frozenset[str]:
    """The ops whose forward is recomputed during backward under *policy*."""
    if policy == "none":
        return frozenset()
    if policy == "selective":
        return attention_core(arch)
    return frozenset(n for n, _ in arch.ops() if in_group(arch, n))


@lru_cache(maxsize=256)
def checkpoints(arch: Arch) -> tuple[tuple[str, str, bool], ...]:
    """``(tensor, group, invariant)`` for every op output a top-level repeated group reads from
    outside itself (full recomputation keeps them: each copy's block input; a tensor the same
    in every copy -- an encoder's output read by every decoder layer, a position bias -- once,
    ``invariant``). An encoder--decoder's decoder reads the encoder's output even when the
    encoder stack made it."""
    out, seen = [], set()
    for n, a in arch.ops():
        g = top_group(arch, n)
        if g is None:
            continue
        for i in a["inputs"]:
            if arch.graph.nodes[i]["kind"] != "op" or top_group(arch, i) is g or (i, g.name) in seen:
                continue
            seen.add((i, g.name))
            out.append((i, g.name, loop_invariant(arch, i, n)))
    return tuple(out)


def top_group(arch: Arch, node: str):
    """The outermost group holding *node* (None outside every group)."""
    chain = arch.group_chain(arch.graph.nodes[node]["group"])
    return chain[-1] if chain else None


def loop_invariant(arch: Arch, tensor: str, node: str) -> bool:
    """Whether *tensor*, read by *node* inside a repeated group, is the same tensor in every copy
    of the group: made outside the group (a rotary table) rather than carried through it (the
    residual stream). Groups declare what they carry (``Builder.repeat(carry=...)``); for one that
    does not, a tensor of the shape the group hands on counts as carried."""
    g = top_group(arch, node)
    if g is None or top_group(arch, tensor) is g:
        return False
    if g.carry is not None:
        return tensor not in g.carry
    outs = {tuple(arch.shape(n)) for n in arch.graph.nodes
            if arch.graph.nodes[n]["kind"] == "op" and top_group(arch, n) is g
            and any(arch.graph.nodes[v]["kind"] == "op" and top_group(arch, v) is not g
                    for v in arch.graph.successors(n))}
    return tuple(arch.shape(tensor)) not in outs


def tokens(arch: Arch) -> sympy.Expr:
    """The tokens one step processes: B times the sum of the stacks' sequence lengths (B·T for a
    decoder or an encoder, B·(T_enc + T_dec) for an encoder--decoder, B·((S/P)² + 1) for ViT);
    B·T for a graph without stacks."""
    lengths = [g.length for g in arch.stacks() if g.length is not None]
    return B * (sympy.Add(*lengths) if lengths else T)

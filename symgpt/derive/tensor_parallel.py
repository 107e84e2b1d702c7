"""Tensor parallelism (Megatron-LM): which weights and saved tensors are split across tp ranks.

In each repeated block, the query, key, value (self or cross) and FFN up/gate projections are
*column-parallel* (their output is split by heads or by FFN columns); the attention output and FFN
down projections are *row-parallel* (their input is split, their output is summed across ranks).
Roles say which is which; a linear without a role is column-parallel when a norm feeds it. The
tensors from a column-parallel output up to a row-parallel input form the tensor-parallel region:
split tp ways (Korthikanti et al. 2022 Sec. 4.2.1). With sequence parallelism the rest of the block (norms,
dropouts, residuals) is split along the sequence instead (Sec. 4.2.2). Embedding and LM head (the linear whose role is ``roles.HEAD``) are
vocabulary-parallel. An op whose role is in ``roles.TP_REPLICATED`` (an MLA layer's down-projections,
latent norms and shared rotary key) is neither: every rank holds its weights and computes it whole
(vLLM's ``ReplicatedLinear``, Megatron-Core's ``parallel_mode="duplicated"``), so it is outside
the tensor-parallel region. A Mamba-2 mixer is split as Megatron-LM splits it
(``derive.tensor_parallel_ssm``): in_proj column-parallel, out_proj row-parallel, the conv1d, scan
and gated norm parameters split by channel, head and group.
"""

from __future__ import annotations

from functools import lru_cache

from ..graph import roles as R
from ..graph.arch import Arch
from .tensor_parallel_ssm import mamba2_linear_roles, mamba2_sharded

_COLUMN = frozenset({R.QKV, R.QUERY, R.KEY, R.VALUE, R.CROSS_QUERY,
                     R.CROSS_KEY, R.CROSS_VALUE, R.FFN_UP, R.FFN_GATE, R.FFN_GATE_UP,
                     R.QUERY_GATE})  # A.X-K2's q_gate_proj (transformers' plan: colwise)
_ROW = frozenset({R.OUT, R.CROSS_OUT, R.FFN_DOWN})


def replicated(arch: Arch, node: str) -> bool:
    """Whether tensor parallelism keeps op *node* whole on every rank (``roles.TP_REPLICATED``):
    the one rule the KV cache, inference per device, weights and saved activations share."""
    return arch.role(node) in R.TP_REPLICATED


def _linears(arch: Arch):
    for n, a in arch.ops():
        op = a["op"]
        if op.kind == "linear" and op.tag == "dense" and a["group"] is not None:
            yield n, a


@lru_cache(maxsize=256)
def linear_roles(arch: Arch) -> dict[str, str]:
    """Dense linear node in a block -> ``column`` or ``row`` (a replicated one is neither)."""
    g = arch.graph
    out = {}
    for n, a in _linears(arch):
        role = a.get("role")
        if role in R.TP_REPLICATED:
            continue
        if role in _COLUMN or role in _ROW:
            out[n] = "column" if role in _COLUMN else "row"
            continue
        src = g.nodes[a["inputs"][0]]
        fed_by_norm = src["kind"] == "op" and src["op"].kind in ("layernorm", "rmsnorm")
        out[n] = "column" if fed_by_norm else "row"
    out.update(mamba2_linear_roles(arch))
    return out


@lru_cache(maxsize=256)
def tp_region(arch: Arch) -> frozenset[str]:
    """Nodes from each column-parallel linear (inclusive) forward to a row-parallel one (exclusive)."""
    roles = linear_roles(arch)
    g = arch.graph
    seen: set[str] = set()
    stack = [n for n, r in roles.items() if r == "column"]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for nxt in g.successors(n):
            if g.nodes[nxt]["kind"] == "op" and roles.get(nxt) != "row" and not replicated(arch, nxt):
                stack.append(nxt)
    return frozenset(seen)


def divisor_for_param(arch: Arch, owner: str, local: str, tp: int) -> int:
    """How many ranks share parameter *local* of *owner* (1: replicated on each)."""
    if tp == 1:
        return 1
    role = linear_roles(arch).get(owner)
    if role == "column" or (role == "row" and local == "weight") or mamba2_sharded(arch, owner):
        return tp
    op = arch.graph.nodes[owner]["op"]
    if op.kind == "embedding" or (op.kind == "linear" and arch.role(owner) == R.HEAD):
        return tp  # vocabulary-parallel
    return 1


@lru_cache(maxsize=256)
def _first_stack_index(arch: Arch) -> int:
    for i, n in enumerate(arch.order):
        if arch.stack_of(n) is not None:
            return i
    return len(arch.order)


def place(arch: Arch, node: str) -> tuple[str, bool]:
    """Where a pipeline puts op *node*: ``stack`` (split over the stages), ``pre`` (before the
    first stack: the first stage) or ``post`` (the last stage); and whether it is an expert's."""
    from ..graph import roles

    expert = any(g.role == roles.EXPERTS for g in arch.group_chain(arch.graph.nodes[node].get("group")))
    if arch.stack_of(node) is not None:
        return "stack", expert
    return ("pre" if arch.order.index(node) < _first_stack_index(arch) else "post"), expert

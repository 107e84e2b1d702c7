"""The recurrent state of state-space, linear-attention and short-convolution layers at inference.

A layer whose op sets ``recurrent_state`` (``ops.ssm``: the causal conv1d, the selective scan, the
SSD scan; ``ops.delta``: the gated delta rule; ``ops.rwkv``: RWKV's token shift and WKV;
``ops.rglru``: the RG-LRU and Griffin's conv1d; ``ops.mlstm``: the mLSTM; ``ops.lightning``:
lightning attention, its state at the model's dtype; ``ops.kda``: Kimi delta attention) keeps,
between decode steps, a state of fixed size per sequence -- not a KV cache that grows with T. Each
such op says what it keeps (its ``carried`` rule: shapes over B, none over T; an op declaring
``shared_state`` shares one state with the ops of its kind that read the same input) and what one
decode step costs (its ``decode`` rule); this
module sums the state over the layers and names what the inference answers do not model for
these layers.

``inference.state`` (``derive.inference.state``): every state tensor of every recurrent layer,
for B sequences: the conv state at the KV cache's width, the SSM / delta-rule state in fp32
(transformers' ``LinearAttentionLayer`` keeps the tensors it is handed: the conv inputs at the
model's dtype, the state update its PyTorch path computes in float32; RWKV, RecurrentGemma and
xLSTM as their own caches hold them, each op's ``state_note``). The KV cache (``inference.kv_cache``, ``memory.kv_cache``) holds the attention layers'
keys and values only.
"""

from __future__ import annotations

from functools import lru_cache

import sympy

from ..graph.arch import Arch
from ..ops.base import numel

#: what the inference answers of a model with recurrent layers assume
STATE_NOTE = ("recurrent layers keep a state of fixed size per sequence (inference.state: conv state at the "
              "KV-cache width and SSM / delta-rule state in fp32, as transformers' PyTorch path keeps them; "
              "constant in T), not a KV cache; the KV cache holds the attention layers' keys and values only")

#: the same, for a model whose recurrent ops say what they keep (``state_note``)
STATE_NOTE_BY_OP = ("recurrent layers keep a state of fixed size per sequence (inference.state, constant in T), "
                    "not a KV cache; the KV cache holds the attention layers' keys and values only")


def state_notes(arch: Arch) -> tuple[str, ...]:
    """The state note of a model with recurrent layers: STATE_NOTE (the conv and SSM / delta-rule
    states), or STATE_NOTE_BY_OP and each op's ``state_note`` (RWKV, RG-LRU, mLSTM)."""
    ops = [arch.graph.nodes[n]["op"] for n in recurrent_ops(arch)]
    own = list(dict.fromkeys(n for op in ops if (n := getattr(op, "state_note", ""))))
    return (STATE_NOTE_BY_OP, *own) if own else (STATE_NOTE,)


def is_recurrent(op) -> bool:
    return bool(getattr(op, "recurrent_state", False))


@lru_cache(maxsize=256)
def recurrent_ops(arch: Arch) -> tuple[str, ...]:
    """The nodes of the recurrent ops, in forward order."""
    return tuple(n for n, a in arch.ops() if is_recurrent(a["op"]))


#: bytes per element of a state tensor kept in fp32 whatever the cache's width
FP32 = sympy.Integer(4)


def element_bytes(dtype, cache_bytes) -> sympy.Expr:
    """Bytes per element of a state tensor: the cache's width (*cache_bytes*), or 4 for "fp32"."""
    return FP32 if dtype == "fp32" else cache_bytes


@lru_cache(maxsize=256)
def state_owners(arch: Arch) -> frozenset:
    """The recurrent ops that hold their state: every one, except that of the ops declaring
    ``shared_state`` (a state that is the op's input's last position: RWKV's token shifts) which
    read one input, only the first in forward order holds it."""
    seen, out = set(), []
    for n in recurrent_ops(arch):
        a = arch.graph.nodes[n]
        if getattr(a["op"], "shared_state", False):
            key = (a["op"].kind, a["inputs"][0])
            if key in seen:
                continue
            seen.add(key)
        out.append(n)
    return frozenset(out)


@lru_cache(maxsize=256)
def state_tensors(arch: Arch) -> tuple[tuple[str, sympy.Expr, str | None], ...]:
    """(path, elements, dtype) of every state tensor the recurrent layers keep for B sequences,
    every layer counted (``<node>/<state name>``); dtype None: the cache's width, "fp32": 4 bytes."""
    out = []
    owners = state_owners(arch)
    for n in recurrent_ops(arch):
        if n not in owners:
            continue
        a = arch.graph.nodes[n]
        ins = tuple(arch.shape(i) for i in a["inputs"])
        for name, shape, dtype in a["op"].carried(ins):
            out.append((f"{n}/{name}", sympy.expand(numel(tuple(shape)) * arch.multiplicity(n)), dtype))
    return tuple(out)


def refuse(arch: Arch, what: str) -> None:
    """Refuse, in one line, *what* (an option these layers' inference does not model) for an
    architecture with recurrent layers."""
    kinds = sorted({arch.graph.nodes[n]["op"].kind for n in recurrent_ops(arch)})
    if kinds:
        from ..core.errors import SymgptError

        raise SymgptError(f"{arch.name}: {what} is not modelled for recurrent layers ({', '.join(kinds)})")


def unruled_refusal(arch: Arch) -> None:
    """Refuse, in one line, inference of an architecture with a recurrent op that has no state
    and decode-step rules (``carried``, ``decode``): no answer rather than one without its state."""
    unruled = sorted({arch.graph.nodes[n]["op"].kind for n in recurrent_ops(arch)
                      if not (hasattr(arch.graph.nodes[n]["op"], "carried")
                              and hasattr(arch.graph.nodes[n]["op"], "decode"))})
    if unruled:
        from ..core.errors import SymgptError

        raise SymgptError(f"{arch.name}: inference (the state and the decode step) is not modelled for recurrent "
                          f"layers ({', '.join(unruled)}) yet")


def check_options(s) -> None:
    """The inference options a model with recurrent layers is not priced under: refused."""
    arch = s.model.arch
    if not recurrent_ops(arch):
        return
    unruled_refusal(arch)
    if s.convention == "scaling-book":
        refuse(arch, "the scaling-book inference convention (2 FLOPs per parameter, KV cache only)")
    if s.chips > 1:
        refuse(arch, "tensor parallelism at inference (how engines split the mixer's heads and its state)")


def notes(arch: Arch, name: str) -> tuple[str, ...]:
    """Notes on an ``inference.*`` answer of a model with recurrent layers (none otherwise)."""
    if not recurrent_ops(arch):
        return ()
    ops = [arch.graph.nodes[n]["op"] for n in recurrent_ops(arch)]
    out = list(state_notes(arch))
    if ".decode." in name or name in ("inference.intensity", "inference.critical_batch", "inference.generate.time",
                                      "inference.tpot", "inference.tokens_per_s"):
        out += list(dict.fromkeys(n for op in ops if (n := getattr(op, "decode_note", ""))))
        out.append("a decode step of a recurrent layer reads and writes its whole state (constant in T)")
    if ".prefill." in name or name in ("inference.generate.time", "inference.ttft", "inference.tokens_per_s"):
        out += list(dict.fromkeys(n for op in ops if (n := getattr(op, "flops_note", ""))))
        out.append("a prefill of a recurrent layer writes its state once; a prompt shorter than the "
                   "convolution's kernel is padded to it by transformers' cache, not counted here")
    if name == "inference.memory":
        out.append("the largest activation counts op outputs only: a scan's internal tensors (the sequential "
                   "scan's exp(Δ·A) and Δ·B·x, the chunked scans' chunk states) are not counted")
    return tuple(out)

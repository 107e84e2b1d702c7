"""The KV cache, derived once: the tensors a generating model keeps between decode steps.

``inference.kv_cache`` (``derive.inference``) and ``memory.kv_cache`` (:func:`kv_cache` here,
under the memory options of ``memory_setup``) both price :func:`cache_tensors`, each at its own
bytes per element and its own tensor parallelism, so they cannot disagree about what is cached.

What is cached are the nodes ``derive.step.cache_points`` finds by role (the key and value heads
after the per-token ops that follow them, the cross-attention keys and values of the encoder's
output, an MLA layer's latent and shared rotary key, a sparse-attention indexer's key), kept only where an attention that reads them
is causal or cross-attention: a bidirectional encoder (BERT, ViT) recomputes its attention and
caches nothing -- transformers' ``BertModel`` sets ``use_cache=False`` unless ``is_decoder``, and
``ViTModel`` takes no cache. A sliding window keeps the last W - 1 positions of the generated length
between decode steps (transformers' ``DynamicSlidingWindowLayer``: ``full_key_states[:, :, -W + 1:, :]``),
and a decode step reads those and the new token's, Min(T + 1, W) (``derive.step``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy

from ..graph import roles
from ..graph.arch import Arch
from ..ops.base import numel
from .quantity import Quantity
from .memory_setup import memory_quantity, setup
from .tensor_parallel import replicated
from .recurrent import recurrent_ops
from .step import attention_readers, cache_points, cache_window, generated


@dataclass(frozen=True)
class Cached:
    """One tensor the cache holds."""

    node: str
    elements: sympy.Expr  # every copy (layers), B sequences, Min(T, W - 1) positions under a window
    split: bool           # tensor parallelism splits it by heads (an MLA latent is whole on each rank)


def _generating(arch: Arch, readers) -> bool:
    cross = {roles.CROSS_SCORES, roles.CROSS_VALUES}
    return any(op.causal or arch.role(v) in cross for v, op in readers)


@lru_cache(maxsize=256)
def cache_tensors(arch: Arch) -> tuple[Cached, ...]:
    """Every tensor the KV cache holds for B sequences, in forward order (empty for an encoder)."""
    gen = generated(arch)
    out = []
    for node in cache_points(arch):
        readers = attention_readers(arch, node)
        if not _generating(arch, readers):
            continue
        n = numel(arch.shape(node)) * arch.multiplicity(node)
        window = cache_window(readers)
        if window is not None:  # a sliding window keeps its last W - 1 positions between steps
            kept = window if arch.flags.get("window_cache") == "W" else window - 1   # a family's own cache: W
            n = n / gen * sympy.Min(gen, kept)
        out.append(Cached(node, n, not replicated(arch, node)))
    return tuple(out)


def kv_cache(model, **options) -> Quantity:
    """K and V of every attention layer a generating model keeps for B sequences
    (``kvcache.cache_tensors``, the tensors ``inference.kv_cache`` prices too), at the activation
    dtype, split tp ways by heads: each causal self-attention's keys and values over its stack's
    T (T_dec) tokens (Min(T, W - 1) under a sliding window, as transformers'
    ``DynamicSlidingWindowLayer`` keeps them), each cross-attention's keys and values of
    the encoder's T_enc outputs (an encoder--decoder runs its encoder once per request), or an MLA
    layer's latent and shared rotary key (whole on every rank). A bidirectional encoder's
    attention is recomputed, never cached: BERT or ViT alone has no KV cache."""
    s = setup(model, **options)
    arch = s.model.arch
    cached = cache_tensors(arch)
    parts = [(c.node, c.elements * s.bytes.act / (s.tp if c.split else 1)) for c in cached]
    what = "KV cache for inference: K and V of every layer, B·T tokens (Min(T, W − 1) with a sliding window)"
    if any(arch.role(c.node) in roles.LATENT_CACHE for c in cached):
        what = ("KV cache for inference: the compressed latent and the shared rotary key of every layer "
                "(multi-latent attention), B·T tokens")
    elif arch.find(roles.CROSS_SCORES):
        what = ("KV cache for inference: K and V of every decoder layer, B·T_dec tokens of its "
                "self-attention and B·T_enc encoder outputs of its cross-attention")
    elif not parts and recurrent_ops(arch):
        what = "KV cache for inference: none (no attention layer)"
    elif not parts:
        what = "KV cache for inference: none (a bidirectional encoder recomputes its attention)"
    if any(arch.role(c.node) == roles.INDEX_KEY_ROTARY for c in cached):
        what += ", and the sparse-attention indexer's key of every layer (whole on every rank)"
    if recurrent_ops(arch):
        what += ("; attention layers only: the recurrent layers' state (constant in T) is not a KV cache "
                 "(inference.state)")
    return memory_quantity(s, "memory.kv_cache", parts or [("kv_cache", sympy.Integer(0))], what)

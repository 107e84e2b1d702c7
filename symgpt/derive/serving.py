"""Serving capacity under a paged KV cache (Kwon et al. 2023, vLLM's PagedAttention), in closed
form in the context length T.

The cache is kept in blocks of ``block`` tokens (vLLM's default 16). One block of one layer holds
the layer's cached tensors for ``block`` positions (``kvcache.cache_tensors``: keys and values,
an MLA layer's latent and shared rotary key), at the KV dtype, per device -- vLLM's
``AttentionSpec.page_size_bytes`` = 2 · block_size · num_kv_heads · head_size · dtype size
(``MLAAttentionSpec``: block_size · head_size · dtype size, one latent "head"), in
``vllm/v1/kv_cache_interface.py``.

A sequence of T tokens holds ceil(T / block) blocks of every full-attention layer (its last
block partly filled). A sliding-window layer of window W frees the blocks that fall out of the
window (vLLM's hybrid KV-cache manager): it holds at most ceil(W / block) + 1 blocks, the bound
``SlidingWindowSpec.max_memory_usage_bytes`` states for one decode token ("+1 because the sliding
window may not start from the beginning of the block"), so Min(ceil(T / block), ceil(W / block) + 1).

The memory the cache may use is vLLM's: gpu_memory_utilization (default 0.9) of the device's
memory, less the weights (per device, at their dtype) and the activation workspace (vLLM
measures it with a profiling run; here: the largest single activation of a prefill of
``workspace_tokens`` tokens, a lower bound -- CUDA graphs, the sampler and allocator slack are
not modelled). vLLM then takes num_blocks = available // page_size // num_layers
(``vllm/v1/core/kv_cache_utils.py: get_num_blocks``); the sequences that fit are
floor(available / bytes per sequence), the same number for a model whose layers are alike.

Prefix caching (vLLM's automatic prefix caching hashes full blocks only): P shared tokens make
floor(P / block) full blocks of every full-attention layer that all sequences share, held once;
windowed layers are not shared here (a conservative count).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from ..ops.base import numel
from .inference_setup import device_memory, setup
from .kvcache import cache_tensors
from .quantity import Quantity
from ..core.symbols import B
from .step import attention_readers, cache_window, generated

#: vLLM's defaults (vllm/config: CacheConfig.block_size 16, gpu_memory_utilization 0.9)
BLOCK = 16
UTILIZATION = sympy.Rational(9, 10)
WORKSPACE_TOKENS = 2048

VLLM = ("vLLM: page_size_bytes in vllm/v1/kv_cache_interface.py, num_blocks = available // page_size // "
        "num_layers in vllm/v1/core/kv_cache_utils.py, available = gpu_memory_utilization · device memory - "
        "(weights + profiled activations)")


@dataclass(frozen=True)
class Layer:
    """One kind of cached tensor: its node, how many layers hold it, its bytes per token per
    layer per device, and its sliding window (None: every position kept)."""

    node: str
    copies: sympy.Expr
    per_token: sympy.Expr
    window: sympy.Expr | None


@dataclass(frozen=True)
class Paged:
    """The paged cache of one model under inference options (see :func:`paged`)."""

    setup: object
    block: int
    layers: tuple[Layer, ...]
    T: sympy.Symbol

    def blocks(self, layer: Layer) -> sympy.Expr:
        """Blocks one sequence of T tokens holds of one such layer."""
        full = sympy.ceiling(self.T / self.block)
        if layer.window is None:
            return full
        return sympy.Min(full, sympy.ceiling(layer.window / self.block) + 1)

    def page(self, layer: Layer) -> sympy.Expr:
        """Bytes of one block of one layer (vLLM's page_size_bytes), per device."""
        return self.block * layer.per_token

    def block_parts(self):
        """(node, bytes of one block over all its layers)."""
        return [(c.node, c.copies * self.page(c)) for c in self.layers]

    def sequence_parts(self, prefix_blocks=0):
        """(node, bytes one sequence of T tokens holds), less *prefix_blocks* shared full blocks
        of each full-attention layer."""
        return [(c.node, c.copies * self.page(c) * (self.blocks(c) - (prefix_blocks if c.window is None else 0)))
                for c in self.layers]

    def shared_parts(self, prefix_blocks):
        return [(c.node, c.copies * self.page(c) * prefix_blocks) for c in self.layers if c.window is None]


def _check_block(block) -> int:
    if isinstance(block, bool) or not isinstance(block, int) or block < 1:
        raise SymgptError(f"the block size is a positive number of tokens, got {block!r}")
    return block


def _refuse_recurrent(arch) -> None:
    """Paged serving of recurrent layers (a fixed-size state per sequence beside the paged KV
    blocks, as vLLM's hybrid cache manager keeps it) is not modelled: refused in one line."""
    kinds = sorted({a["op"].kind for _, a in arch.ops() if getattr(a["op"], "recurrent_state", False)})
    if kinds:
        raise SymgptError(f"{arch.name}: paged-KV serving is not modelled for recurrent layers ({', '.join(kinds)}): "
                          "their per-sequence state (symgpt infer: inference.state) is not paged in blocks")


def paged(model, block: int = BLOCK, **options) -> Paged:
    """The cached tensors of a decoder-only model, per token, per layer, per device."""
    _refuse_recurrent(model.arch)
    _check_block(block)
    s = setup(model, **options)
    return Paged(s, block, cached_layers(model, s), generated(model.arch))


def cached_layers(model, s) -> tuple[Layer, ...]:
    """Each cached tensor of the model's attention layers: its bytes per token per layer per device."""
    arch = model.arch
    T = generated(arch)
    cached = cache_tensors(arch)
    if not cached:
        raise SymgptError(f"{model.name} caches nothing (a bidirectional encoder): no serving capacity to size")
    layers = []
    for c in cached:
        shape = arch.shape(c.node)
        per = sympy.cancel(numel(shape) / (B * T))
        if per.has(B) or per.has(T):
            raise SymgptError(f"{model.name}: serving capacity is modelled for decoder-only models; "
                              f"{c.node} is not cached per generated token")
        per = per * s.kv / (s.chips if c.split else 1)
        layers.append(Layer(c.node, arch.multiplicity(c.node), per, cache_window(attention_readers(arch, c.node))))
    return tuple(layers)


def _q(s, name, parts, unit, notes):
    return Quantity(name, tuple((p, e) for p, e in parts), s.bindings, unit, "vllm-paged", tuple(notes))


def _notes(p: Paged, extra=()):
    s = p.setup
    out = [f"paged KV cache in blocks of {p.block} tokens (Kwon et al. 2023, PagedAttention); {VLLM}",
           "bytes: " + ", ".join(s.labels)]
    if any(c.window is not None for c in p.layers):
        out.append("a sliding-window layer holds Min(ceil(T/block), ceil(W/block) + 1) blocks: vLLM's hybrid "
                   "KV-cache manager frees blocks outside the window (SlidingWindowSpec: +1 for a window not "
                   "aligned to a block); with the hybrid manager disabled vLLM allocates them like full attention")
    if s.device is not None:
        out.append(f"hardware {s.device.title} [{s.device.source}]")
    if s.chips > 1:
        out.append(f"tensor parallel over {s.chips} devices: values per device (KV heads split; an MLA latent "
                   "whole on every device)")
    return out + list(extra)


def block_bytes(model, block: int = BLOCK, **options) -> Quantity:
    p = paged(model, block, **options)
    return _q(p.setup, "serving.block_bytes", p.block_parts(), "bytes",
              _notes(p, ["one block of every layer: block size · bytes per token per layer, summed over layers"]))


def kv_per_sequence(model, block: int = BLOCK, **options) -> Quantity:
    p = paged(model, block, **options)
    return _q(p.setup, "serving.kv_per_sequence", p.sequence_parts(), "bytes",
              _notes(p, ["one sequence of T tokens: ceil(T/block) blocks of every layer (the last one partly "
                         "filled)"]))


def budget_parts(model, utilization=UTILIZATION, workspace_tokens: int = WORKSPACE_TOKENS, **options):
    """(path, bytes) of the cache's budget on one device: utilization · memory - weights - workspace."""
    from .inference import largest_activation, weights

    s = setup(model, **options)
    cap = device_memory(s, options.get("device_memory"))
    if cap is None:
        raise SymgptError("serving capacity needs the device's memory: give --hardware NAME or --device-memory BYTES")
    u = sympy.Rational(utilization)
    if not 0 < u <= 1:
        raise SymgptError(f"the memory utilization is a fraction in (0, 1], got {utilization}")
    if isinstance(workspace_tokens, bool) or not isinstance(workspace_tokens, int) or workspace_tokens < 1:
        raise SymgptError(f"the workspace tokens are a positive integer, got {workspace_tokens!r}")
    T = generated(model.arch)
    at = {**s.bindings, B: sympy.Integer(1), T: sympy.Integer(workspace_tokens)}
    ws = largest_activation(s, model, at).xreplace(at)
    w = weights(model, **options).expr
    return [("memory·utilization", cap * u), ("weights", -w), ("workspace", -ws)]


def kv_budget(model, utilization=UTILIZATION, workspace_tokens: int = WORKSPACE_TOKENS, block: int = BLOCK,
              **options) -> Quantity:
    p = paged(model, block, **options)
    parts = budget_parts(model, utilization, workspace_tokens, **options)
    return _q(p.setup, "serving.kv_budget", parts, "bytes", _notes(p, [
        f"memory for the KV cache on each device: {sympy.Rational(utilization)} of the device's memory (vLLM's "
        f"gpu_memory_utilization) less the weights and an activation workspace: the largest single activation "
        f"of a prefill of {workspace_tokens} tokens, a lower bound of vLLM's profiled peak (CUDA graphs, the "
        f"sampler and allocator slack not modelled)"]))


def _floor_ratio(budget, per):
    return sympy.floor(budget / per)


def max_sequences(model, utilization=UTILIZATION, workspace_tokens: int = WORKSPACE_TOKENS, block: int = BLOCK,
                  **options) -> Quantity:
    p = paged(model, block, **options)
    budget = sympy.Add(*[e for _, e in budget_parts(model, utilization, workspace_tokens, **options)])
    per = sympy.Add(*[e for _, e in p.sequence_parts()])
    q = _q(p.setup, "serving.max_sequences", [("sequences", _floor_ratio(budget, per))], "sequences",
           _notes(p, ["concurrent sequences of T tokens that fit: floor(KV budget / bytes per sequence)"]))
    _check_fits(q, budget)
    return q


def _check_fits(q, budget):
    v = budget.xreplace(dict(q.bindings))
    if v.is_number and v < 0:
        raise SymgptError(f"the weights and workspace do not fit in the memory this utilization leaves "
                          f"({sympy.ceiling(-v)} bytes short): no sequence fits (more --chips, fewer --weight-bits "
                          "or --fp8)")


def _prefix_blocks(model, prefix, block):
    if isinstance(prefix, bool) or not isinstance(prefix, int) or prefix < 0:
        raise SymgptError(f"the shared prefix is a number of tokens >= 0, got {prefix!r}")
    T = generated(model.arch)
    t = model.bindings.get(T)
    if t is not None and prefix > t:
        raise SymgptError(f"the shared prefix ({prefix} tokens) is longer than the context T = {t}")
    return prefix // _check_block(block)


def prefix_saved(model, prefix: int, block: int = BLOCK, **options) -> Quantity:
    """Bytes each sequence no longer holds: the prefix's full blocks of every full-attention layer."""
    n = _prefix_blocks(model, prefix, block)
    p = paged(model, block, **options)
    return _q(p.setup, "serving.prefix.saved_per_sequence", p.shared_parts(n), "bytes", _notes(p, [
        f"prefix caching: a shared prefix of {prefix} tokens is {n} full blocks of {p.block} tokens of every "
        "full-attention layer, held once for all sequences (vLLM's automatic prefix caching shares full blocks "
        "only); each further sequence saves them"]))


def prefix_max_sequences(model, prefix: int, utilization=UTILIZATION, workspace_tokens: int = WORKSPACE_TOKENS,
                         block: int = BLOCK, **options) -> Quantity:
    n = _prefix_blocks(model, prefix, block)
    p = paged(model, block, **options)
    budget = sympy.Add(*[e for _, e in budget_parts(model, utilization, workspace_tokens, **options)])
    shared = sympy.Add(*[e for _, e in p.shared_parts(n)])
    per = sympy.Add(*[e for _, e in p.sequence_parts(n)])
    q = _q(p.setup, "serving.prefix.max_sequences", [("sequences", _floor_ratio(budget - shared, per))],
           "sequences", _notes(p, [
               f"concurrent sequences of T tokens sharing a prefix of {prefix} tokens: floor((KV budget - the "
               f"shared blocks, held once) / (bytes per sequence - its {n} shared blocks per full-attention layer))"]))
    _check_fits(q, budget - shared)
    return q

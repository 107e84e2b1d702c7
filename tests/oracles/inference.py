"""Measurements of a transformers decode step with a KV cache (independent of symgpt).

``decode_flops``: FlopCounterMode over one decode step of an HF causal LM: a prefill of
(B, T) token ids with ``use_cache=True``, then one step of (B, 1) ids with the returned cache
and an all-ones attention mask of T + 1 positions; only the decode step is counted (matmuls,
2 FLOPs per multiply-add; SDPA forced onto the MATH backend). Works on the meta device.

``cache_nbytes``: the bytes of every tensor the cache holds after a prefill of (B, T) ids:
``sum(t.nbytes)`` over each layer's keys and values (meta tensors have nbytes too).
"""
from __future__ import annotations

import warnings

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode


def _device(model):
    return next(model.parameters()).device


def prefill(model, B: int, T: int):
    """(prefill FLOPs, the returned cache)."""
    dev = _device(model)
    ids = torch.randint(0, model.get_input_embeddings().num_embeddings, (B, T), device=dev)
    with warnings.catch_warnings(), torch.no_grad(), sdpa_kernel(SDPBackend.MATH):
        warnings.simplefilter("ignore", FutureWarning)
        with FlopCounterMode(display=False) as fcm:
            out = model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=True)
    return fcm.get_total_flops(), out.past_key_values


def decode_flops(model, B: int, T: int) -> int:
    """FLOPs of one decode step after a prefill of T tokens (the new token attends to T + 1)."""
    dev = _device(model)
    _, cache = prefill(model, B, T)
    nxt = torch.randint(0, model.get_input_embeddings().num_embeddings, (B, 1), device=dev)
    mask = torch.ones((B, T + 1), dtype=torch.long, device=dev)
    with warnings.catch_warnings(), torch.no_grad(), sdpa_kernel(SDPBackend.MATH):
        warnings.simplefilter("ignore", FutureWarning)
        with FlopCounterMode(display=False) as fcm:
            model(input_ids=nxt, attention_mask=mask, past_key_values=cache, use_cache=True)
    return fcm.get_total_flops()


def cache_tensors(cache) -> list:
    """Every tensor a transformers cache holds (each layer's keys and values)."""
    out = []
    for layer in cache.layers:
        for t in (layer.keys, layer.values):
            if isinstance(t, torch.Tensor):
                out.append(t)
    return out


def cache_nbytes(model, B: int, T: int) -> tuple[int, int]:
    """(bytes of every cached tensor, bits per element) after a prefill of (B, T) ids."""
    _, cache = prefill(model, B, T)
    tensors = cache_tensors(cache)
    bits = {8 * t.element_size() for t in tensors}
    assert len(bits) == 1, bits
    return sum(t.nbytes for t in tensors), bits.pop()

"""Kolibri 1 (transformers' ``Kolibri1ForCausalLM``): grouped-query attention with an RMSNorm on
each query and key head, sliding-window layers with one full-attention layer in every few
(``layer_types``; the full-attention layers have no positions, NoPE, when a window is set), an
RMSNorm before and after each branch (GLM-4.5's sandwich), and in every layer a mixture of SwiGLU
experts (the top k of the router's logits, their sigmoids as weights) plus a plain shared expert.
The router's score-correction bias is a buffer, not a parameter."""

from __future__ import annotations

from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, every_pth_full, layer_types, llama_like, windows

FAMILIES = (decoder_family(
    "kolibri1", "Kolibri 1: GQA with per-head Q/K RMSNorm, sliding-window layers and NoPE full layers, "
    "norms before and after each branch, sigmoid-weighted experts plus a shared expert",
    gqa=True, qk_norm="head", branch_norms=True, window=True, full_every=5, moe=True,
    shared_expert="plain", router="sigmoid", topk_norm=False),)


def read(f: Fields):
    """transformers' Kolibri1Config."""
    flags, sizes = llama_like(f, dict(V=128000, d=2560, d_ff=1, L=50, h=48, h_kv=4, T_max=262144, head_dim=128))
    f.used.discard("intermediate_size")  # Kolibri1Config has none: every layer has experts
    L = sizes["L"]
    w = f.int("sliding_window", 513, optional=True)
    types = layer_types(f, L, every_pth_full(L, 5))
    windows(f, flags, sizes, types, w)
    flags.setdefault("full_every", None)
    # NoPE in the full-attention layers whenever a window is set (every layer, if none slides)
    flags.update(qk_norm="head", branch_norms=True, router="sigmoid", shared_expert="plain",
                 nope_full=w is not None)
    sizes["d_ff"] = f.int("moe_intermediate_size", 512)
    sizes["E"] = f.aliased("num_local_experts", "num_experts", 384)
    sizes["k"] = f.int("num_experts_per_tok", 6)
    flags["topk_norm"] = f.bool("norm_topk_prob", False)
    flags["shared_ff"] = f.int("shared_expert_intermediate_size", 512)
    return "kolibri1", flags, sizes


READERS = {"kolibri1": Reader(read, ("Kolibri1ForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()

"""OLMo 3 (Ai2 2025, allenai/Olmo-3-1025-7B): OLMo 2's block (norms on the branch outputs, an RMSNorm
over all query and key heads) with three sliding-window layers to one full-attention layer
(transformers' Olmo3ForCausalLM)."""

from __future__ import annotations

from .decoders import decoder_family
from .fields import Fields, Reader, every_pth_full, layer_types, llama_like, windows

FAMILIES = (decoder_family(
    "olmo3", "OLMo 3: OLMo 2's block, sliding-window layers with one full-attention layer in four",
    pre_norm=False, branch_norms=True, qk_norm="full", window=True, full_every=4),)


def read(f: Fields):
    """transformers' Olmo3Config."""
    flags, sizes = llama_like(f, dict(V=50304, d=4096, d_ff=11008, L=32, h=32, T_max=2048))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    L = sizes["L"]
    window = f.int("sliding_window", 4096, optional=True)
    default = every_pth_full(L, 4)
    types = layer_types(f, L, default)
    if window is None:  # Olmo3Attention: a null window is no window
        types = ["full_attention"] * L
    windows(f, flags, sizes, types, window)
    return "olmo3", flags, sizes


READERS = {"olmo3": Reader(read, ("Olmo3ForCausalLM",))}

PRESETS = ()

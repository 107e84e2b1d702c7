"""Helium (Kyutai 2025, kyutai/helium-1-preview-2b): LLaMA's block; its attention output projection
is d x d (transformers' HeliumAttention), so the heads must span the width."""

from __future__ import annotations

from ..core.errors import SymgptError
from .decoders import INTERLEAVED, decoder_family
from .fields import Fields, Reader
from .llama import read_llama_like

FAMILIES = (decoder_family("helium", "Helium: LLaMA's block (RMSNorm, RoPE, SwiGLU), heads of 128",
                           **INTERLEAVED),)


def read(f: Fields):
    """transformers' HeliumConfig (``attention_bias`` on Q, K, V only: o_proj has no bias)."""
    flags, sizes = read_llama_like(f, dict(V=48000, d=2560, d_ff=7040, L=24, h=20, h_kv=20, T_max=4096,
                                           head_dim=128))
    flags["proj_bias"] = False
    if sizes["h"] * sizes.get("d_head", sizes["d"] // sizes["h"]) != sizes["d"]:
        raise SymgptError(f"{f.where}: num_attention_heads x head_dim must equal hidden_size "
                          "(Helium's output projection is hidden_size x hidden_size)")
    return "helium", flags, sizes


READERS = {"helium": Reader(read, ("HeliumForCausalLM",))}

PRESETS = ()

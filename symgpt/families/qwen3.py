"""Qwen3: LLaMA's block with an RMSNorm on each query and key head (no Q/K/V biases)."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, layer_types, llama_like, windows

FAMILIES = (decoder_family("qwen3", "Qwen3: LLaMA with an RMSNorm on each query and key head (no Q/K/V biases)",
                           gqa=True, qk_norm="head"),)


def read(f: Fields):
    """transformers' Qwen3Config; every layer must attend alike."""
    flags, sizes = llama_like(f, dict(V=151936, d=4096, d_ff=22016, L=32, h=32, h_kv=32, T_max=32768,
                                      head_dim=128))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, qk_norm="head")
    use = f.bool("use_sliding_window", False)
    window = f.int("sliding_window", 4096, optional=True) if use else None
    first = f.int("max_window_layers", 28, minimum=0)
    f.silent("sliding_window")
    L = sizes["L"]
    default = ["sliding_attention" if window is not None and i >= first else "full_attention" for i in range(L)]
    types = layer_types(f, L, default)
    if len(set(types)) > 1:
        raise SymgptError(f"{f.where}: full-attention layers before sliding ones (max_window_layers) "
                          "are not modelled")
    windows(f, flags, sizes, types, window)
    return "qwen3", flags, sizes


READERS = {"qwen3": Reader(read, ("Qwen3ForCausalLM",))}

PRESETS = (
    Preset("qwen3-8b", "qwen3",
           {"L": 36, "h": 32, "h_kv": 8, "d_head": 128, "d": 4096, "d_ff": 12288, "V": 151936,
            "T_max": 40960},
           source="Qwen/Qwen3-8B its config.json on the Hugging Face Hub",
           note="8,190,735,360 parameters; published: 8.2B"),
)

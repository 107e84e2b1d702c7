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

_HF = "its config.json on the Hugging Face Hub"

PRESETS = (
    Preset("qwen3-8b", "qwen3",
           {"L": 36, "h": 32, "h_kv": 8, "d_head": 128, "d": 4096, "d_ff": 12288, "V": 151936,
            "T_max": 40960},
           source="Qwen/Qwen3-8B " + _HF,
           note="8,190,735,360 parameters; published: 8.2B"),
    Preset("qwen3-0.6b", "qwen3",
           {"L": 28, "h": 16, "h_kv": 8, "d_head": 128, "d": 1024, "d_ff": 3072, "V": 151936,
            "T_max": 40960},
           flags={"tied": True},
           source="Qwen Team 2025 (Qwen3 Technical Report); Qwen/Qwen3-0.6B " + _HF,
           note="596,049,920 parameters; published: 0.6B. The output head is the embedding matrix (tie_word_embeddings), counted once"),
    Preset("qwen3-1.7b", "qwen3",
           {"L": 28, "h": 16, "h_kv": 8, "d_head": 128, "d": 2048, "d_ff": 6144, "V": 151936,
            "T_max": 40960},
           flags={"tied": True},
           source="Qwen Team 2025 (Qwen3 Technical Report); Qwen/Qwen3-1.7B " + _HF,
           note="1,720,574,976 parameters; published: 1.7B. The output head is the embedding matrix (tie_word_embeddings), counted once"),
    Preset("qwen3-4b", "qwen3",
           {"L": 36, "h": 32, "h_kv": 8, "d_head": 128, "d": 2560, "d_ff": 9728, "V": 151936,
            "T_max": 40960},
           flags={"tied": True},
           source="Qwen Team 2025 (Qwen3 Technical Report); Qwen/Qwen3-4B " + _HF,
           note="4,022,468,096 parameters; published: 4B. The output head is the embedding matrix (tie_word_embeddings), counted once"),
    Preset("qwen3-14b", "qwen3",
           {"L": 40, "h": 40, "h_kv": 8, "d_head": 128, "d": 5120, "d_ff": 17408, "V": 151936,
            "T_max": 40960},
           source="Qwen Team 2025 (Qwen3 Technical Report); Qwen/Qwen3-14B " + _HF,
           note="14,768,307,200 parameters; published: 14B"),
    Preset("qwen3-32b", "qwen3",
           {"L": 64, "h": 64, "h_kv": 8, "d_head": 128, "d": 5120, "d_ff": 25600, "V": 151936,
            "T_max": 40960},
           source="Qwen Team 2025 (Qwen3 Technical Report); Qwen/Qwen3-32B " + _HF,
           note="32,762,123,264 parameters; published: 32B"),
)

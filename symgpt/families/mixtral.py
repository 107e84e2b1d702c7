"""Mixtral (Jiang et al. 2024): Mistral's blocks with a mixture of E SwiGLU experts, k routed per
token."""

from __future__ import annotations

from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like, window

FAMILIES = (decoder_family("mixtral", "Mixtral: Mistral blocks with a mixture of E SwiGLU experts, top-k routing",
                           gqa=True, moe=True),)


def read(f: Fields):
    """transformers' MixtralConfig."""
    flags, sizes = llama_like(f, dict(V=32000, d=4096, d_ff=14336, L=32, h=32, h_kv=8, T_max=131072))
    window(f, flags, sizes, None)
    sizes["E"] = f.int("num_local_experts", 8)
    sizes["k"] = f.int("num_experts_per_tok", 2)
    return "mixtral", flags, sizes


READERS = {"mixtral": Reader(read, ("MixtralForCausalLM",))}

PRESETS = (
    Preset("mixtral-8x7b", "mixtral",
           {"L": 32, "h": 32, "h_kv": 8, "d": 4096, "d_ff": 14336, "V": 32000, "T_max": 32768,
            "E": 8, "k": 2},
           source="Jiang et al. 2024 (Mixtral of Experts), Table 1; mistralai/Mixtral-8x7B-v0.1 "
                  "its config.json on the Hugging Face Hub",
           note="46.7B parameters in total, 12.9B active per token (2 of 8 experts)"),
)

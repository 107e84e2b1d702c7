"""Phi-3: LLaMA's block with a fused Q/K/V projection and fused gate/up projections."""

from __future__ import annotations

from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like, window

FAMILIES = (decoder_family("phi3", "Phi-3: LLaMA with fused QKV and fused gate/up projections",
                           fused_qkv=True, fused_gate_up=True),)


def read(f: Fields):
    """transformers' Phi3Config."""
    flags, sizes = llama_like(f, dict(V=32064, d=3072, d_ff=8192, L=32, h=32, T_max=4096))
    window(f, flags, sizes, None)
    f.used.add("attention_bias")  # transformers' Phi-3 has no biases whatever this says
    return "phi3", flags, sizes


READERS = {"phi3": Reader(read, ("Phi3ForCausalLM",))}

PRESETS = (
    Preset("phi-3-mini", "phi3",
           {"L": 32, "h": 32, "d": 3072, "d_ff": 8192, "V": 32064, "T_max": 4096,
            "W": 2047},
           flags={"window": True}, source="microsoft/Phi-3-mini-4k-instruct its config.json on the Hugging Face Hub",
           note="the 4k-context model; its config sets a 2,047-token sliding window"),
    Preset("phi-4", "phi3",
           {"L": 40, "h": 40, "h_kv": 10, "d": 5120, "d_ff": 17920, "V": 100352, "T_max": 16384},
           source="Abdin et al. 2024 (Phi-4 Technical Report); microsoft/phi-4 its config.json on the "
                  "Hugging Face Hub",
           note="14,659,507,200 parameters; published: 14B"),
)

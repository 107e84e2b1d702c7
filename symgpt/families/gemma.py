"""Gemma (Gemma Team 2024): GeGLU (tanh GELU), embeddings scaled by sqrt(d), heads of d_head, a
tied head, and RMSNorm scaling by (1 + w)."""

from __future__ import annotations

from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like

FAMILIES = (decoder_family("gemma", "Gemma: GeGLU (tanh GELU), embeddings scaled by sqrt(d), head_dim d_head, tied head",
                           activation="gelu_tanh", embed_scale=True, tied=True, norm_offset=True),)


def read(f: Fields):
    """transformers' GemmaConfig."""
    flags, sizes = llama_like(f, dict(V=256000, d=3072, d_ff=24576, L=28, h=16, h_kv=16, T_max=8192,
                                      head_dim=256, tied=True, act="gelu_pytorch_tanh"))
    act = f.str("hidden_activation", None, optional=True)
    if act is not None:
        flags["activation"] = f.activation("hidden_activation", act)
    elif f.cfg.get("hidden_act", "gelu_pytorch_tanh") == "gelu":
        flags["activation"] = "gelu_tanh"  # transformers reads Gemma's legacy "gelu" as tanh-GELU
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    return "gemma", flags, sizes


READERS = {"gemma": Reader(read, ("GemmaForCausalLM",))}

PRESETS = (
    Preset("gemma-2b", "gemma",
           {"L": 18, "h": 8, "h_kv": 1, "d_head": 256, "d": 2048, "d_ff": 16384, "V": 256000,
            "T_max": 8192},
           source="Gemma Team 2024, Table 1; google/gemma-2b its config.json on the Hugging Face Hub"),
)

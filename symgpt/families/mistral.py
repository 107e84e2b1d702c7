"""Mistral 7B (Jiang et al. 2023): LLaMA's block with grouped-query attention and sliding-window
attention over W keys."""

from __future__ import annotations

from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like, window

FAMILIES = (decoder_family("mistral", "Mistral: LLaMA with GQA and sliding-window attention (W)",
                           gqa=True, window=True),)


def read(f: Fields):
    """transformers' MistralConfig."""
    flags, sizes = llama_like(f, dict(V=32000, d=4096, d_ff=14336, L=32, h=32, h_kv=8, T_max=131072))
    window(f, flags, sizes, 4096)
    return "mistral", flags, sizes


READERS = {"mistral": Reader(read, ("MistralForCausalLM",))}

PRESETS = (
    Preset("mistral-7b", "mistral",
           {"L": 32, "h": 32, "h_kv": 8, "d": 4096, "d_ff": 14336, "V": 32000, "T_max": 32768,
            "W": 4096},
           source="Jiang et al. 2023 (Mistral 7B), Table 1; mistralai/Mistral-7B-v0.1 "
                  "its config.json on the Hugging Face Hub",
           note="v0.1 with its 4,096-token sliding window; v0.2 and later drop the window "
                "(set window=false)"),
    Preset("mistral-small-24b", "mistral",
           {"L": 40, "h": 32, "h_kv": 8, "d_head": 128, "d": 5120, "d_ff": 32768, "V": 131072, "T_max": 32768},
           flags={"window": False},
           source="Mistral AI 2025 (Mistral Small 3, mistralai/Mistral-Small-24B-Base-2501 model card)",
           note="23,572,403,200 parameters, the total of the checkpoint's safetensors on the Hugging Face Hub; "
                "published: 24B. No sliding window (sliding_window null)"),
)

"""OLMo 2 (OLMo Team 2024): norms on the branch outputs only (no pre-norm), an RMSNorm over all
query and key heads."""

from __future__ import annotations

from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like

FAMILIES = (decoder_family(
    "olmo2", "OLMo 2: norms on the branch outputs only (no pre-norm), RMSNorm over all query/key heads",
    pre_norm=False, branch_norms=True, qk_norm="full"),)


def read(f: Fields):
    """transformers' Olmo2Config."""
    flags, sizes = llama_like(f, dict(V=50304, d=4096, d_ff=11008, L=32, h=32, T_max=2048))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    return "olmo2", flags, sizes


READERS = {"olmo2": Reader(read, ("Olmo2ForCausalLM",))}

PRESETS = (
    Preset("olmo2-7b", "olmo2",
           {"L": 32, "h": 32, "d": 4096, "d_ff": 11008, "V": 100352, "T_max": 4096},
           source="OLMo Team 2024 (2 OLMo 2 Furious); allenai/OLMo-2-1124-7B its config.json on the Hugging Face Hub",
           note="7,298,617,344 parameters; published: 7B"),
    Preset("olmo2-13b", "olmo2",
           {"L": 40, "h": 40, "d": 5120, "d_ff": 13824, "V": 100352, "T_max": 4096},
           source="OLMo Team 2024 (2 OLMo 2 Furious); allenai/OLMo-2-1124-13B its config.json on the Hugging Face Hub",
           note="13,716,198,400 parameters; published: 13B (its float32 safetensors index: "
                "54,864,793,600 bytes, 13,716,198,400 numbers)"),
)

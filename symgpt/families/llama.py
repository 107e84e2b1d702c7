"""LLaMA / Llama 2 / Llama 3 (Touvron et al. 2023): the generic decoder as it is by default
(pre-norm RMSNorm, RoPE, SwiGLU, grouped-query attention through ``h_kv``, untied head)."""

from __future__ import annotations

from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like

FAMILIES = (decoder_family("llama", "LLaMA / Llama 2 / Llama 3: RMSNorm, RoPE, SwiGLU, GQA via h_kv, untied head"),)


def read_llama_like(f: Fields, defaults: dict) -> tuple[dict, dict]:
    """The fields of LlamaConfig and of the configuration classes that copy it: ``llama_like``'s,
    ``attention_bias`` (Q, K, V and the output projection) and ``mlp_bias``."""
    flags, sizes = llama_like(f, defaults)
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, mlp_bias=f.bool("mlp_bias", False))
    return flags, sizes


def read(f: Fields):
    """transformers' LlamaConfig."""
    flags, sizes = read_llama_like(f, dict(V=32000, d=4096, d_ff=11008, L=32, h=32, T_max=2048))
    return "llama", flags, sizes


READERS = {"llama": Reader(read, ("LlamaForCausalLM",))}

_HF = "its config.json on the Hugging Face Hub"

PRESETS = (
    Preset("llama-7b", "llama",
           {"L": 32, "h": 32, "d": 4096, "d_ff": 11008, "V": 32000, "T_max": 4096},
           source="Touvron et al. 2023 (LLaMA), Table 2; meta-llama/Llama-2-7b-hf " + _HF,
           note="this preset uses T_max 4,096 (Llama 2's context; LLaMA-1 used 2,048); "
                "RoPE has no position parameters, so the count is the same: 6,738,415,616"),
    Preset("llama-70b", "llama",
           {"L": 80, "h": 64, "h_kv": 8, "d": 8192, "d_ff": 28672, "V": 32000, "T_max": 4096},
           source="Touvron et al. 2023 (Llama 2), Table 1 (GQA); "
                  "meta-llama/Llama-2-70b-hf " + _HF,
           note="Llama-2-70B has 8 key/value heads (grouped-query "
                "attention), which gives 68,976,648,192 parameters; with 64 it would be 78.5B"),
    Preset("llama-3-8b", "llama",
           {"L": 32, "h": 32, "h_kv": 8, "d": 4096, "d_ff": 14336, "V": 128256, "T_max": 8192},
           source="meta-llama/Meta-Llama-3-8B " + _HF),
)

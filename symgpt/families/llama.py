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
    # LLaMA-65B: the model QLoRA fine-tunes on one 48 GB device (Dettmers et al. 2023)
    Preset("llama-65b", "llama",
           {"L": 80, "h": 64, "d": 8192, "d_ff": 22016, "V": 32000, "T_max": 2048},
           source="Touvron et al. 2023 (LLaMA), Table 2 (d 8,192, 64 heads, 80 layers, 2,048-token context); "
                  "d_ff 22,016 = 256·ceil((2/3·4d)/256) (the released code's rule, multiple_of 256) and V "
                  "32,000 (its SentencePiece vocabulary)",
           note="65,285,660,672 parameters; published: 65.2B"),
    Preset("llama-70b", "llama",
           {"L": 80, "h": 64, "h_kv": 8, "d": 8192, "d_ff": 28672, "V": 32000, "T_max": 4096},
           source="Touvron et al. 2023 (Llama 2), Table 1 (GQA); "
                  "meta-llama/Llama-2-70b-hf " + _HF,
           note="Llama-2-70B has 8 key/value heads (grouped-query "
                "attention), which gives 68,976,648,192 parameters; with 64 it would be 78.5B"),
    Preset("llama-3-8b", "llama",
           {"L": 32, "h": 32, "h_kv": 8, "d": 4096, "d_ff": 14336, "V": 128256, "T_max": 8192},
           source="meta-llama/Meta-Llama-3-8B " + _HF),
    Preset("llama-3.1-8b", "llama",
           {"L": 32, "h": 32, "h_kv": 8, "d": 4096, "d_ff": 14336, "V": 128256, "T_max": 131072},
           source="Meta 2024 (The Llama 3 Herd of Models); meta-llama/Llama-3.1-8B " + _HF,
           note="8,030,261,248 parameters; published: 8B. Context 131,072 (RoPE scaled, rope_type "
                "llama3: no parameters)"),
    Preset("llama-3.1-70b-instruct", "llama",
           {"L": 80, "h": 64, "h_kv": 8, "d": 8192, "d_ff": 28672, "V": 128256, "T_max": 131072},
           source="Meta 2024 (The Llama 3 Herd of Models); meta-llama/Llama-3.1-70B-Instruct " + _HF,
           note="70,553,706,496 parameters; published: 70B. The instruction-tuned checkpoint's "
                "config (its shapes are the count's only input)"),
    Preset("llama-3.2-1b-instruct", "llama",
           {"L": 16, "h": 32, "h_kv": 8, "d_head": 64, "d": 2048, "d_ff": 8192, "V": 128256,
            "T_max": 131072},
           flags={"tied": True},
           source="meta-llama/Llama-3.2-1B-Instruct " + _HF,
           note="1,235,814,400 parameters; published: 1B. The output head "
                "is the embedding matrix (tie_word_embeddings), counted once"),
    Preset("llama-3.2-3b", "llama",
           {"L": 28, "h": 24, "h_kv": 8, "d_head": 128, "d": 3072, "d_ff": 8192, "V": 128256,
            "T_max": 131072},
           flags={"tied": True},
           source="meta-llama/Llama-3.2-3B " + _HF,
           note="3,212,749,824 parameters; published: 3B. The output head "
                "is the embedding matrix (tie_word_embeddings), counted once"),
    Preset("llama-3.1-405b", "llama",
           {"L": 126, "h": 128, "h_kv": 8, "d_head": 128, "d": 16384, "d_ff": 53248, "V": 128256,
            "T_max": 131072},
           source="Meta 2024 (The Llama 3 Herd of Models), Table 3 (126 layers, d 16,384, FFN 53,248, 128 heads, "
                  "8 key/value heads); V 128,256 and the 131,072-token context as in the Llama 3.1 8B and 70B "
                  "config.json files; meta-llama/Llama-3.1-405B",
           note="405,853,388,800 parameters, the total of the checkpoint's safetensors on the Hugging Face Hub; "
                "published: 405B"),
)

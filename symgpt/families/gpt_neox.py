"""GPT-NeoX / Pythia (Black et al. 2022; Biderman et al. 2023): parallel residual, partial rotary
(25%), LayerNorm and biases."""

from __future__ import annotations

from fractions import Fraction

from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, rotary_pct

FAMILIES = (decoder_family(
    "gpt_neox", "GPT-NeoX / Pythia: parallel residual, partial rotary (25%), LayerNorm, biases",
    norm="layernorm", ffn="mlp", activation="gelu", fused_qkv=True, qkv_bias=True, proj_bias=True,
    mlp_bias=True, parallel=True, rotary_pct=25),)


def read(f: Fields):
    """transformers' GPTNeoXConfig."""
    sizes = {"V": f.int("vocab_size", 50432), "d": f.int("hidden_size", 6144),
             "L": f.int("num_hidden_layers", 44), "h": f.int("num_attention_heads", 64),
             "d_ff": f.int("intermediate_size", 24576), "T_max": f.int("max_position_embeddings", 2048)}
    bias = f.bool("attention_bias", True)
    flags = {"tied": f.bool("tie_word_embeddings", False), "activation": f.activation("hidden_act", "gelu"),
             "rotary_pct": rotary_pct(f, "rotary_pct", Fraction(1, 4)),
             "parallel": f.bool("use_parallel_residual", True), "qkv_bias": bias, "proj_bias": bias}
    return "gpt_neox", flags, sizes


READERS = {"gpt_neox": Reader(read, ("GPTNeoXForCausalLM",))}

PRESETS = (
    Preset("pythia-160m", "gpt_neox",
           {"L": 12, "h": 12, "d": 768, "d_ff": 3072, "V": 50304, "T_max": 2048},
           source="Biderman et al. 2023 (Pythia), Table 1; EleutherAI/pythia-160m "
                  "its config.json on the Hugging Face Hub"),
)

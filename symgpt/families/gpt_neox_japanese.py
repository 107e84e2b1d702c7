"""GPT-NeoX-Japanese (ABEJA, abeja/gpt-neox-japanese-2.7b; transformers'
GPTNeoXJapaneseForCausalLM): a sequential pre-LN block with LayerNorm, one fused Q/K/V projection
without biases, rotary positions, a GELU MLP of width ``hidden_size * intermediate_multiple_size``
without biases, and a bias on the attention output projection of the last layer only
(GPTNeoXJapaneseAttention's ``dense_bias``)."""

from __future__ import annotations

from functools import partial

from .base import Extended, Family
from .decoders import BUILD, CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, rotary_pct

FAMILIES = (Family(
    name="gpt_neox_japanese",
    description="GPT-NeoX-Japanese: pre-LN LayerNorm, fused Q/K/V, rotary, GELU MLP, no biases but the last "
                "layer's attention output bias",
    flags=Extended(FLAGS, {"norm": "layernorm", "ffn": "mlp", "activation": "gelu", "fused_qkv": True, "tied": True},
                   {"last_proj_bias": True}),
    sizes=SIZES, optional=OPTIONAL, build=partial(BUILD, name="gpt_neox_japanese"),
    flag_help=Extended(FLAG_HELP, added={
        "last_proj_bias": "only the last layer's attention output projection has a bias (GPTNeoXJapaneseAttention's "
                          "dense_bias): a stack of its own, one layer"}),
    choices=Extended(CHOICES)),)


def read(f: Fields):
    """transformers' GPTNeoXJapaneseConfig."""
    d = f.int("hidden_size", 2560)
    sizes = {"V": f.int("vocab_size", 32000), "d": d, "L": f.int("num_hidden_layers", 32),
             "h": f.int("num_attention_heads", 32),
             "d_ff": d * f.int("intermediate_multiple_size", 4),
             "T_max": f.int("max_position_embeddings", 2048)}
    flags = {"tied": f.bool("tie_word_embeddings", True), "activation": f.activation("hidden_act", "gelu"),
             "rotary_pct": rotary_pct(f, "rotary_pct")}
    return "gpt_neox_japanese", flags, sizes


READERS = {"gpt_neox_japanese": Reader(read, ("GPTNeoXJapaneseForCausalLM",))}

PRESETS = ()

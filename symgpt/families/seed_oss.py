"""ByteDance's open 36B model of 2025 (transformers' SeedOssForCausalLM, model type ``seed_oss``):
LLaMA's block with grouped-query attention and Q/K/V biases (``attention_bias``), the output
projection's bias apart (``attention_out_bias``)."""

from __future__ import annotations

from .decoders import decoder_family
from .fields import Fields, Reader, llama_like

FAMILIES = (decoder_family("seed_oss", "SeedOss (ByteDance): LLaMA's block, GQA, Q/K/V biases", gqa=True, qkv_bias=True),)


def read(f: Fields):
    """transformers' SeedOssConfig."""
    flags, sizes = llama_like(f, dict(V=155136, d=4096, d_ff=27648, L=64, h=80, h_kv=8, T_max=524288,
                                      head_dim=128))
    flags.update(qkv_bias=f.bool("attention_bias", True), proj_bias=f.bool("attention_out_bias", False),
                 mlp_bias=f.bool("mlp_bias", False))
    f.silent("residual_dropout")  # dropout after each branch: noted with the other dropouts
    return "seed_oss", flags, sizes


READERS = {"seed_oss": Reader(read, ("SeedOssForCausalLM",))}

PRESETS = ()

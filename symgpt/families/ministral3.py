"""Ministral 3 (Mistral AI 2025, mistralai/Ministral-3-8B-Base-2512, its text model): LLaMA's block
with grouped-query attention and an optional sliding window on every layer (transformers'
Ministral3ForCausalLM). Its queries are multiplied by a position-dependent scale
(``rope_parameters.llama_4_scaling_beta``): no parameters, no matmul."""

from __future__ import annotations

from .decoders import decoder_family
from .fields import Fields, Reader, llama_like, window

FAMILIES = (decoder_family("ministral3", "Ministral 3: LLaMA's block, GQA, heads of 128, optional sliding window",
                           gqa=True),)


def read(f: Fields):
    """transformers' Ministral3Config."""
    flags, sizes = llama_like(f, dict(V=131072, d=4096, d_ff=14336, L=34, h=32, h_kv=8, T_max=262144,
                                      head_dim=128))
    window(f, flags, sizes, None)
    # Ministral3Attention always scales the queries by 1 + beta*log(1 + floor(pos / original length))
    f.notes.append("Ministral 3 multiplies each query by a position-dependent scale (llama_4_scaling_beta): "
                   "an elementwise product not counted (no parameters, no matmul)")
    return "ministral3", flags, sizes


READERS = {"ministral3": Reader(read, ("Ministral3ForCausalLM",))}

PRESETS = ()

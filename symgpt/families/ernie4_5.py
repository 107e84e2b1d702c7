"""ERNIE 4.5 dense models (Baidu 2025, baidu/ERNIE-4.5-0.3B-PT): LLaMA's block with grouped-query
attention and a tied head; one ``use_bias`` gives every projection a bias (transformers'
Ernie4_5ForCausalLM)."""

from __future__ import annotations

from .decoders import INTERLEAVED, decoder_family
from .fields import Fields, Reader, llama_like

FAMILIES = (decoder_family("ernie4_5", "ERNIE 4.5 (dense): LLaMA's block, GQA, tied head",
                           gqa=True, tied=True, **INTERLEAVED),)


def read(f: Fields):
    """transformers' Ernie4_5Config."""
    flags, sizes = llama_like(f, dict(V=103424, d=1024, d_ff=3072, L=18, h=16, h_kv=2, T_max=131072,
                                      head_dim=128, tied=True))
    bias = f.bool("use_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, mlp_bias=bias)
    return "ernie4_5", flags, sizes


READERS = {"ernie4_5": Reader(read, ("Ernie4_5ForCausalLM",))}

PRESETS = ()

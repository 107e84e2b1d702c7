"""Phi-3.5-MoE (Abdin et al. 2024, "Phi-3 Technical Report"; transformers' ``PhimoeForCausalLM``):
Mixtral's layout -- grouped-query attention, an optional sliding window, E SwiGLU experts of which
two run per token -- with LayerNorms (weight and bias) instead of RMSNorms, optional biases on the
attention projections and the LM head, and SparseMixer routing (Liu et al. 2024, "GRIN: GRadient-
INformed MoE"), which always picks two experts."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like, window

FAMILIES = (decoder_family(
    "phimoe", "Phi-3.5-MoE: Mixtral's layout with LayerNorms, SparseMixer routing to 2 of E SwiGLU experts",
    gqa=True, moe=True, norm="layernorm"),)


def read(f: Fields):
    """transformers' PhimoeConfig."""
    flags, sizes = llama_like(f, dict(V=32064, d=4096, d_ff=6400, L=32, h=32, h_kv=8, T_max=131072))
    window(f, flags, sizes, None)
    bias = f.bool("attention_bias", False)
    flags.update(norm="layernorm", norm_bias=True, qkv_bias=bias, proj_bias=bias,
                 head_bias=f.bool("lm_head_bias", False))
    sizes["E"] = f.int("num_local_experts", 16)
    sizes["k"] = f.int("num_experts_per_tok", 2)
    if sizes["k"] != 2:
        raise SymgptError(f"{f.where}: num_experts_per_tok other than 2 is not modelled (transformers' "
                          "SparseMixer routing always runs two experts)")
    f.silent("input_jitter_noise")  # scales the router's input while training: no count
    return "phimoe", flags, sizes


READERS = {"phimoe": Reader(read, ("PhimoeForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()

"""Doge (SmallDoge; transformers' DogeForCausalLM): a LLaMA-like decoder with per-head RMSNorm of
queries and keys, dynamic-mask attention (``dt_proj`` of the values and a learned ``A`` per
key/value head: exp(A·softplus(dt)) added to the scores; past ``keep_window_size`` keys only the
top ones of each row are kept, a top-k without matmuls) and a learned per-channel scale of the
residual before each residual add (``input_residual``, ``post_attention_residual``); with ``is_moe``
the MLP is DogeCDMoE, a gated MLP plus E single-neuron experts chosen by product keys, k per token."""

from __future__ import annotations

from ..core.errors import SymgptError
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like, window

FAMILIES = (decoder_family(
    "doge", "Doge: dynamic-mask attention, Q/K norms per head, learned residual scales",
    added={"dynamic_mask": True, "residual_scale": True, "cdmoe": False},
    added_help={"dynamic_mask": "dynamic-mask attention (DogeAttention): dt_proj of V, exp(A·softplus(dt)) "
                                "added to the scores",
                "residual_scale": "a learned per-channel scale of the residual before each residual add "
                                  "(Doge's input_residual, post_attention_residual)",
                "cdmoe": "the cross-domain mixture (DogeCDMoE): the gated MLP plus E single-neuron experts, k per "
                         "token, chosen by product keys (router_gate of 2·floor(sqrt(E)) scores)"},
    qk_norm="head"),)


def read(f: Fields):
    """transformers' DogeConfig (``is_moe``: the cross-domain mixture, ``blocks/cdmoe.py``)."""
    flags, sizes = llama_like(f, dict(V=32768, d=1024, d_ff=2048, L=32, h=8, T_max=2048))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, mlp_bias=f.bool("mlp_bias", False), qk_norm="head")
    window(f, flags, sizes)
    flags["cdmoe"] = f.bool("is_moe", False)
    if flags["cdmoe"]:
        sizes["E"], sizes["k"] = f.int("num_experts", 16384), f.int("num_experts_per_tok", 64)
        keys = next(n for n in range(sizes["E"] + 1) if (n + 1) * (n + 1) > sizes["E"])  # floor(sqrt(E))
        if sizes["k"] > keys * keys:
            raise SymgptError(f"{f.where}: num_experts_per_tok exceeds the floor(sqrt(num_experts))² product-key "
                              "candidates")
    f.silent("keep_window_size", "num_experts", "num_experts_per_tok", "norm_topk_prob")
    return "doge", flags, sizes


READERS = {"doge": Reader(read, ("DogeForCausalLM",))}

PRESETS = ()

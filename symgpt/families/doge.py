"""Doge (SmallDoge; transformers' DogeForCausalLM): a LLaMA-like decoder with per-head RMSNorm of
queries and keys, dynamic-mask attention (``dt_proj`` of the values and a learned ``A`` per
key/value head: exp(A·softplus(dt)) added to the scores; past ``keep_window_size`` keys only the
top ones of each row are kept, a top-k without matmuls) and a learned per-channel scale of the
residual before each residual add (``input_residual``, ``post_attention_residual``)."""

from __future__ import annotations

from ..core.errors import SymgptError
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like, window

FAMILIES = (decoder_family(
    "doge", "Doge: dynamic-mask attention, Q/K norms per head, learned residual scales",
    added={"dynamic_mask": True, "residual_scale": True},
    added_help={"dynamic_mask": "dynamic-mask attention (DogeAttention): dt_proj of V, exp(A·softplus(dt)) "
                                "added to the scores",
                "residual_scale": "a learned per-channel scale of the residual before each residual add "
                                  "(Doge's input_residual, post_attention_residual)"},
    qk_norm="head"),)


def read(f: Fields):
    """transformers' DogeConfig (the dense MLP; ``is_moe`` true is refused)."""
    flags, sizes = llama_like(f, dict(V=32768, d=1024, d_ff=2048, L=32, h=8, T_max=2048))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, mlp_bias=f.bool("mlp_bias", False), qk_norm="head")
    window(f, flags, sizes)
    if f.bool("is_moe", False):
        raise SymgptError(f"{f.where}: Doge's cross-domain mixture of experts (is_moe: DogeCDMoE) is not modelled")
    f.silent("keep_window_size", "num_experts", "num_experts_per_tok", "norm_topk_prob")
    return "doge", flags, sizes


READERS = {"doge": Reader(read, ("DogeForCausalLM",))}

PRESETS = ()

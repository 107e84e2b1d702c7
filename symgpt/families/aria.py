"""Aria's language model (Rhymes AI 2024, "Aria: An Open Multimodal Native Mixture-of-Experts
Model"; transformers' ``AriaTextForCausalLM``): LLaMA's block with a mixture of E SwiGLU experts in
every layer, k per token, the weights the softmax of the k largest router logits
(AriaTextTopKRouter), plus shared experts every token runs: one SwiGLU of
moe_num_shared_experts × intermediate_size (AriaSharedExpertsMLP), added to the routed sum."""

from __future__ import annotations

from ..core.errors import SymgptError
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like
from .granitemoe import ROUTER

FAMILIES = (decoder_family(
    "aria_text", "Aria (text): LLaMA blocks, E SwiGLU experts (softmax of the top-k logits) plus shared experts",
    gqa=True, moe=True, shared_expert="plain", **ROUTER),)


def read(f: Fields):
    """transformers' AriaTextConfig."""
    flags, sizes = llama_like(f, dict(V=32000, d=4096, d_ff=4096, L=32, h=32, T_max=2048))
    if flags["activation"] != "silu":
        # AriaExperts is always SiLU-gated; only the shared experts follow hidden_act
        raise SymgptError(f"{f.where}: hidden_act other than silu is not modelled (the routed experts stay SiLU)")
    if f.bool("mlp_bias", False):
        raise SymgptError(f"{f.where}: mlp_bias=true is not modelled (biases on the shared experts only)")
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    sizes["E"] = f.int("moe_num_experts", 8)
    sizes["k"] = f.int("moe_topk", 2)
    shared = f.int("moe_num_shared_experts", 2, minimum=0)
    flags["shared_expert"] = "plain" if shared else "none"
    flags["shared_ff"] = shared * sizes["d_ff"] if shared else None
    return "aria_text", flags, sizes


READERS = {"aria_text": Reader(read, ("AriaTextForCausalLM",))}

PRESETS = ()

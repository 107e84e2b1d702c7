"""Granite 3 MoE (IBM 2024, ibm-granite/granite-3.1-3b-a800m-instruct): Mixtral's mixture of E SwiGLU
experts (k per token) on Granite's block with its scalar multipliers (transformers'
GraniteMoeForCausalLM); its router (GraniteMoeTopKRouter) takes the top k logits, then a softmax
over those k. GraniteMoeShared adds a shared expert of width ``shared_intermediate_size`` every token
runs (none when it is 0)."""

from __future__ import annotations

from .decoders import decoder_family
from .fields import Fields, Reader, llama_like
from .granite import MULTIPLIERS, multipliers

#: GraniteMoeTopKRouter: the softmax of the k largest logits (a router choice of the family's own)
ROUTER = dict(router="topk_softmax", topk_norm=False,
              choice_changes={"router": ("topk_softmax", "softmax", "sigmoid")},
              help_changes={"router": "topk_softmax (the softmax of the k largest logits), softmax or sigmoid "
                                      "router scores"})

FAMILIES = (
    decoder_family("granitemoe", "Granite MoE: Granite's block with a mixture of E SwiGLU experts, top-k routing",
                   moe=True, **ROUTER),
    decoder_family("granitemoeshared", "Granite MoE with a shared expert: Granite MoE plus an expert every token runs",
                   moe=True, shared_expert="plain", **ROUTER),
)


def granitemoe_fields(f: Fields, name: str):
    flags, sizes = llama_like(f, dict(V=32000, d=4096, d_ff=11008, L=32, h=32, T_max=2048))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    sizes["E"] = f.int("num_local_experts", 8)
    sizes["k"] = f.int("num_experts_per_tok", 2)
    multipliers(f, MULTIPLIERS, "Granite MoE")
    return flags, sizes


def read_granitemoe(f: Fields):
    """transformers' GraniteMoeConfig."""
    flags, sizes = granitemoe_fields(f, "granitemoe")
    return "granitemoe", flags, sizes


def read_granitemoeshared(f: Fields):
    """transformers' GraniteMoeSharedConfig (GraniteMoeSharedMLP: a SwiGLU of that width; none at 0)."""
    flags, sizes = granitemoe_fields(f, "granitemoeshared")
    shared = f.int("shared_intermediate_size", 0, minimum=0)
    flags["shared_expert"] = "plain" if shared else "none"
    flags["shared_ff"] = shared or None
    return "granitemoeshared", flags, sizes


READERS = {"granitemoe": Reader(read_granitemoe, ("GraniteMoeForCausalLM",)),
           "granitemoeshared": Reader(read_granitemoeshared, ("GraniteMoeSharedForCausalLM",))}

PRESETS = ()

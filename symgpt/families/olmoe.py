"""OLMoE (Muennighoff et al. 2024, "OLMoE: Open Mixture-of-Experts Language Models"): LLaMA's
pre-norm block with an RMSNorm over all query heads and one over all key heads (as OLMo 2), and a
mixture of E SwiGLU experts, k routed per token by a softmax router (transformers'
``OlmoeForCausalLM``)."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like

FAMILIES = (decoder_family(
    "olmoe", "OLMoE: pre-norm RMSNorm blocks, RMSNorm over all query/key heads, E SwiGLU experts, top-k routing",
    moe=True, qk_norm="full", topk_norm=False),)


def read(f: Fields):
    """transformers' OlmoeConfig."""
    flags, sizes = llama_like(f, dict(V=50304, d=2048, d_ff=2048, L=16, h=16, T_max=4096))
    if "d_head" in sizes and sizes["d_head"] * sizes["h"] != sizes["d"]:
        # the query norm is over hidden_size whatever head_dim says
        raise SymgptError(f"{f.where}: head_dim other than hidden_size / num_attention_heads is not modelled")
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    f.silent("clip_qkv")  # clamps Q, K, V in place: no count
    sizes["E"] = f.int("num_experts", 64)
    sizes["k"] = f.int("num_experts_per_tok", 8)
    flags["topk_norm"] = f.bool("norm_topk_prob", False)
    return "olmoe", flags, sizes


def read_flex_olmo(f: Fields):
    """transformers' FlexOlmoConfig (FlexOlmo, Shi et al. 2025, "FlexOlmo: Open Language Models for
    Flexible Data Use"): OLMo 2's block (norms on the attention and FFN outputs only; an RMSNorm over
    all query heads and one over all key heads) with OLMoE's softmax-routed SwiGLU experts."""
    flags, sizes = llama_like(f, dict(V=100352, d=4096, d_ff=11008, L=32, h=32, T_max=4096))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, pre_norm=False, branch_norms=True)
    sizes["E"] = f.int("num_experts", 7)
    sizes["k"] = f.int("num_experts_per_tok", 5)
    flags["topk_norm"] = f.bool("norm_topk_prob", False)
    return "olmoe", flags, sizes


READERS = {"olmoe": Reader(read, ("OlmoeForCausalLM",)),
           "flex_olmo": Reader(read_flex_olmo, ("FlexOlmoForCausalLM",))}

PRESETS: tuple[Preset, ...] = (
    Preset("olmoe-1b-7b", "olmoe",
           {"L": 16, "h": 16, "d": 2048, "d_ff": 1024, "V": 50304, "T_max": 4096, "E": 64, "k": 8},
           source="Muennighoff et al. 2024 (OLMoE: Open Mixture-of-Experts Language Models); "
                  "allenai/OLMoE-1B-7B-0924",
           note="6,919,161,856 parameters, the total of the checkpoint's safetensors on the Hugging Face Hub; "
                "published: 6.9B in total, 1.3B active (8 of 64 experts a token)"),
)

"""Hunyuan-V3 (Tencent; transformers' ``HYV3ForCausalLM``): LLaMA's pre-norm block with grouped-query
attention and an RMSNorm on each query and key head (before the rotary), dense first layers
(``mlp_layer_types``: the first by default), then routed SwiGLU experts chosen by a sigmoid router
(top-k weights renormalised, then scaled by ``router_scaling_factor``) plus a plain shared expert of
num_shared_experts × moe_intermediate_size. The router's score-correction bias is a buffer, not a
parameter."""

from __future__ import annotations

from ..core.errors import SymgptError
from .decoders import decoder_family
from .exaone_moe import FP32_ROUTER_NOTE, dense_prefix
from .fields import Fields, Reader, llama_like

FAMILIES = (decoder_family(
    "hy_v3", "Hunyuan-V3: GQA pre-norm blocks with per-head Q/K RMSNorm, dense first layers, then "
    "sigmoid-routed SwiGLU experts plus a shared expert", gqa=True, qk_norm="head", moe=True,
    shared_expert="plain", router="sigmoid", dense_layers=1),)


def read(f: Fields):
    """transformers' HYV3Config (``num_local_experts`` is its alias of num_experts)."""
    f.rename({"num_local_experts": "num_experts"})
    flags, sizes = llama_like(f, dict(V=120832, d=4096, d_ff=13312, L=80, h=64, h_kv=8, T_max=131072,
                                      head_dim=128))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    if f.bool("mlp_bias", False):
        raise SymgptError(f"{f.where}: mlp_bias=true is not modelled (biases on the dense and shared "
                          "experts' projections, none on the routed experts)")
    L = sizes["L"]
    dense = dense_prefix(f, L, 1 if L > 0 else 0, first_k_key=None)
    flags["dense_layers"], flags["dense_ff"] = (dense, sizes["d_ff"]) if dense else (None, None)
    sizes["d_ff"] = f.int("moe_intermediate_size", 1536)
    sizes["E"] = f.int("num_experts", 192)
    sizes["k"] = f.int("num_experts_per_tok", 8)
    shared = f.int("num_shared_experts", 1, minimum=0)
    flags["shared_expert"], flags["shared_ff"] = ("plain", shared * sizes["d_ff"]) if shared else ("none", None)
    flags["topk_norm"] = True
    # a scale of the weights, and the float32 sum of routed and shared outputs: no parameters, no matmul
    f.silent("router_scaling_factor", "enable_moe_fp32_combine")
    f.notes.append(FP32_ROUTER_NOTE)
    return "hy_v3", flags, sizes


READERS = {"hy_v3": Reader(read, ("HYV3ForCausalLM",))}

PRESETS = ()

"""Mellum (JetBrains; transformers' ``MellumForCausalLM``): Qwen3-MoE's block -- grouped-query
attention with an RMSNorm on each query and key head, a softmax router over SwiGLU experts -- with
a per-layer choice of full or sliding-window attention (``layer_types``; the sliding layers have
rotary tables of their own) and of an expert or dense FFN (``mlp_layer_types``)."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, layer_types, llama_like, windows

FAMILIES = (decoder_family(
    "mellum", "Mellum: GQA with per-head Q/K RMSNorm, softmax-routed SwiGLU experts, optional sliding-window layers",
    gqa=True, moe=True, qk_norm="head", local_rope=True),)


def read(f: Fields):
    """transformers' MellumConfig."""
    flags, sizes = llama_like(f, dict(V=98304, d=2304, d_ff=7168, L=28, h=32, h_kv=4, T_max=131072,
                                      head_dim=128))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, qk_norm="head", local_rope=True)
    L = sizes["L"]
    types = layer_types(f, L, ["full_attention"] * L)
    windows(f, flags, sizes, types, f.int("sliding_window", 1024, optional=True))
    mlp = f.cfg.get("mlp_layer_types")
    f.used.add("mlp_layer_types")
    if mlp is None:
        mlp = ["sparse"] * L
    if not isinstance(mlp, list) or len(mlp) != L or not set(mlp) <= {"sparse", "dense"}:
        raise SymgptError(f"{f.where}: field 'mlp_layer_types' must list 'sparse' or 'dense' for each of the "
                          f"{L} layers")
    dense = mlp.index("sparse") if "sparse" in mlp else L
    if dense == L:
        raise SymgptError(f"{f.where}: no layer has experts (mlp_layer_types)")
    if mlp != ["dense"] * dense + ["sparse"] * (L - dense):
        raise SymgptError(f"{f.where}: mlp_layer_types other than dense layers first, then expert layers, "
                          "is not modelled")
    if dense:
        if flags["window"]:
            raise SymgptError(f"{f.where}: dense layers together with sliding-window layers are not modelled")
        flags["dense_layers"], flags["dense_ff"] = dense, sizes["d_ff"]
    sizes["d_ff"] = f.int("moe_intermediate_size", 896)
    sizes["E"] = f.aliased("num_experts", "num_local_experts", 64)
    sizes["k"] = f.int("num_experts_per_tok", 8)
    flags["topk_norm"] = f.bool("norm_topk_prob", True)
    mtp = f.aliased("num_mtp_layers", "num_nextn_predict_layers", None) if (
        f.cfg.get("num_mtp_layers") is not None or f.cfg.get("num_nextn_predict_layers") is not None) else None
    f.silent("num_mtp_layers", "num_nextn_predict_layers", "mtp_layer_types", "mtp_mlp_layer_types")
    if mtp:
        f.notes.append(f"num_nextn_predict_layers={mtp}: the multi-token-prediction layer is not counted "
                       "(transformers does not build it either)")
    return "mellum", flags, sizes


READERS = {"mellum": Reader(read, ("MellumForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()

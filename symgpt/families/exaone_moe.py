"""EXAONE-MoE (LG AI Research; transformers' ``ExaoneMoeForCausalLM``): LLaMA's pre-norm block
with an RMSNorm on each query and key head, sliding-window layers with one full-attention layer
without positions in every ``sliding_window_pattern`` (as EXAONE 4.0), dense first layers
(``mlp_layer_types`` / ``first_k_dense_replace``), then DeepSeek-V3's mixture: routed SwiGLU
experts chosen by a sigmoid router (group-limited) plus a plain shared expert of
num_shared_experts × moe_intermediate_size. The router's score-correction bias is a buffer, not a
parameter."""

from __future__ import annotations

from ..core.errors import SymgptError
from .decoders import decoder_family_with
from .fields import Fields, Reader, every_pth_full, exaone_windows, llama_like
from .glm4_moe import ROUTING_FLAGS, ROUTING_HELP

FAMILIES = (decoder_family_with(
    "exaone_moe", "EXAONE-MoE: pre-norm blocks with per-head Q/K RMSNorm, sliding-window layers with one "
    "full-attention layer without positions in every 4, dense first layers, then sigmoid-routed SwiGLU "
    "experts plus a shared expert", ROUTING_FLAGS, ROUTING_HELP, gqa=True, qk_norm="head", window=True,
    full_every=4, nope_full=True, moe=True, shared_expert="plain", router="sigmoid", dense_layers=1),)

#: transformers keeps these in float32 whatever the model's dtype (``_keep_in_fp32_modules_strict``)
FP32_ROUTER_NOTE = ("the router weights (gate.weight, E × d per MoE layer) are kept in float32 by "
                    "transformers whatever the dtype: weight bytes at another precision are counted at that "
                    "precision")


def dense_prefix(f: Fields, L: int, first_k_default: int, first_k_key: str | None = "first_k_dense_replace") -> int:
    """The dense first layers: ``mlp_layer_types`` ('dense' / 'sparse' per layer; the dense ones must
    come first), else ``first_k_dense_replace`` (*first_k_default* when the config class has no
    such field: *first_k_key* None)."""
    first_k = f.int(first_k_key, first_k_default, minimum=0) if first_k_key else first_k_default
    types = f.cfg.get("mlp_layer_types")
    f.used.add("mlp_layer_types")
    if types is None:
        n = first_k
    else:
        if not isinstance(types, list) or len(types) != L or not set(types) <= {"dense", "sparse"}:
            raise SymgptError(f"{f.where}: field 'mlp_layer_types' must list 'dense' or 'sparse' for each of "
                              f"the {L} layers")
        n = types.count("dense")
        if types != ["dense"] * n + ["sparse"] * (L - n):
            raise SymgptError(f"{f.where}: mlp_layer_types with dense layers after sparse ones is not modelled")
    if n >= L:
        raise SymgptError(f"{f.where}: no layer has experts (mlp_layer_types / first_k_dense_replace)")
    return n


def read(f: Fields):
    """transformers' ExaoneMoeConfig: ``sliding_window_pattern`` p makes every p-th layer full (none
    when sliding_window is null); the full layers have no rotary when a window is set."""
    flags, sizes = llama_like(f, dict(V=102400, d=4096, d_ff=16384, L=32, h=32, h_kv=32, T_max=2048))
    L = sizes["L"]
    types = exaone_windows(f, flags, sizes)
    dense = dense_prefix(f, L, 1)
    if dense and flags["full_every"] and types != every_pth_full(L, flags["full_every"]):
        raise SymgptError(f"{f.where}: dense first layers with full-attention layers other than every p-th "
                          "counted from the first are not modelled")
    flags["dense_layers"], flags["dense_ff"] = (dense, sizes["d_ff"]) if dense else (None, None)
    sizes["d_ff"] = f.int("moe_intermediate_size", 1024)
    sizes["E"] = f.int("num_experts", 64)
    sizes["k"] = f.int("num_experts_per_tok", 8)
    shared = f.int("num_shared_experts", 1, minimum=0)
    flags["shared_expert"], flags["shared_ff"] = ("plain", shared * sizes["d_ff"]) if shared else ("none", None)
    flags["topk_norm"] = f.bool("norm_topk_prob", True)
    flags["n_group"] = f.int("n_group", 1)
    flags["topk_group"] = f.int("topk_group", 1)
    f.silent("routed_scaling_factor")  # multiplies the weights: no parameters, no matmul
    f.notes.append(FP32_ROUTER_NOTE)
    return "exaone_moe", flags, sizes


READERS = {"exaone_moe": Reader(read, ("ExaoneMoeForCausalLM",))}

PRESETS = ()

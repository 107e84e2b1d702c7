"""Qwen-MoE: Qwen2-MoE (Qwen1.5-MoE; routed experts plus a sigmoid-gated shared expert) and
Qwen3-MoE (routed experts only, on Qwen3's block). One reader of their expert layers: the
MLP-only layers (``mlp_only_layers``, ``decoder_sparse_step``) become a dense stack of
``dense_layers`` layers."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like

FAMILIES = (
    decoder_family("qwen2_moe", "Qwen2-MoE (Qwen1.5-MoE): Qwen2 blocks, routed experts plus a sigmoid-gated shared expert",
                   gqa=True, qkv_bias=True, moe=True, shared_expert="gated", topk_norm=False),
    decoder_family("qwen3_moe", "Qwen3-MoE: Qwen3 blocks with routed experts (no shared expert)",
                   gqa=True, qk_norm="head", moe=True, topk_norm=False),
)


def _no_window(f: Fields) -> None:
    if f.bool("use_sliding_window", False):
        raise SymgptError(f"{f.where}: use_sliding_window=true is not modelled for this model type")
    f.silent("sliding_window", "max_window_layers")


def _moe_layers(f: Fields, flags: dict, sizes: dict, moe_ff: int, experts: int, k: int) -> None:
    """Experts in every layer except the MLP-only ones and those off the sparse step; those are
    a dense stack of ``dense_layers`` layers of width intermediate_size."""
    L = sizes["L"]
    step = f.int("decoder_sparse_step", 1)
    only = f.cfg.get("mlp_only_layers") or []
    f.used.add("mlp_only_layers")
    if not isinstance(only, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in only):
        raise SymgptError(f"{f.where}: field 'mlp_only_layers' must be a list of layer numbers")
    dense = sum(1 for i in range(L) if i in only or (i + 1) % step)
    if dense == L:
        raise SymgptError(f"{f.where}: no layer has experts (decoder_sparse_step / mlp_only_layers)")
    if dense:
        flags["dense_layers"] = dense
        flags["dense_ff"] = sizes["d_ff"]
    sizes["d_ff"] = f.int("moe_intermediate_size", moe_ff)
    sizes["E"] = f.int("num_experts", experts)
    sizes["k"] = f.int("num_experts_per_tok", k)
    flags["moe"] = True
    flags["topk_norm"] = f.bool("norm_topk_prob", False)


def read_qwen2_moe(f: Fields):
    """transformers' Qwen2MoeConfig."""
    flags, sizes = llama_like(f, dict(V=151936, d=2048, d_ff=5632, L=24, h=16, h_kv=16, T_max=32768))
    flags["qkv_bias"] = f.bool("qkv_bias", True)
    _no_window(f)
    _moe_layers(f, flags, sizes, 1408, 60, 4)
    shared = f.int("shared_expert_intermediate_size", 5632, minimum=0)
    flags["shared_expert"] = "gated" if shared else "none"
    if shared:
        flags["shared_ff"] = shared
    return "qwen2_moe", flags, sizes


def read_qwen3_moe(f: Fields):
    """transformers' Qwen3MoeConfig."""
    flags, sizes = llama_like(f, dict(V=151936, d=2048, d_ff=6144, L=24, h=32, h_kv=4, T_max=32768))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, qk_norm="head")
    _no_window(f)
    _moe_layers(f, flags, sizes, 768, 128, 8)
    return "qwen3_moe", flags, sizes


READERS = {"qwen2_moe": Reader(read_qwen2_moe, ("Qwen2MoeForCausalLM",)),
           "qwen3_moe": Reader(read_qwen3_moe, ("Qwen3MoeForCausalLM",))}

_HF = "its config.json on the Hugging Face Hub"

PRESETS = (
    Preset("qwen3-30b-a3b", "qwen3_moe",
           {"L": 48, "h": 32, "h_kv": 4, "d_head": 128, "d": 2048, "d_ff": 768, "V": 151936,
            "T_max": 40960, "E": 128, "k": 8},
           flags={"topk_norm": True},
           source="Qwen/Qwen3-30B-A3B " + _HF,
           note="30,532,122,624 parameters; published: 30.5B in total, 3.3B active"),
    Preset("qwen1.5-moe-a2.7b", "qwen2_moe",
           {"L": 24, "h": 16, "h_kv": 16, "d": 2048, "d_ff": 1408, "V": 151936, "T_max": 8192,
            "E": 60, "k": 4},
           flags={"shared_ff": 5632},
           source="Qwen/Qwen1.5-MoE-A2.7B " + _HF,
           note="14,315,784,192 parameters; published: 14.3B in total, 2.7B active"),
    Preset("qwen3-235b-a22b-instruct-2507", "qwen3_moe",
           {"L": 94, "h": 64, "h_kv": 4, "d_head": 128, "d": 4096, "d_ff": 1536, "V": 151936,
            "T_max": 262144, "E": 128, "k": 8},
           flags={"topk_norm": True},
           source="Qwen/Qwen3-235B-A22B-Instruct-2507 " + _HF,
           note="235,093,634,560 parameters; published: 235B in total, 22B active. The July 2025 "
                "instruction-tuned release (context 262,144); 128 routed experts per layer, 8 active"),
)

"""Readers of the decoders of issue 16 (Qwen3, Qwen2-MoE, Qwen3-MoE, Gemma 2, Gemma 3, Phi-2,
StarCoder2, OLMo 2, DeepSeek-V2, DeepSeek-V3): ``model_type`` -> reader(fields) -> (family,
flags, sizes), with transformers' (5.x) configuration defaults for missing fields.

Layers that differ are read into the stacks the families declare (``families/stacks.py:
stacks``): Qwen-MoE's MLP-only layers and DeepSeek's first dense layers become ``dense_layers``
(their number, a config integer), Gemma's alternating sliding-window and full-attention layers
``full_every`` (one layer in every p is full; Gemma 2: p = 2, Gemma 3: 6).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Callable

from ..core.errors import SymgptError
from .hfreaders import _heads, _llama_like, _rotary_pct, _window

if TYPE_CHECKING:
    from .hfconfig import Fields

#: fields that choose among experts or scale numbers and change no count
_ROUTING = ("topk_method", "routed_scaling_factor",
            "scoring_func", "ep_size", "aux_loss_alpha", "seq_aux", "quantization_config",
            "rope_interleave", "num_nextn_predict_layers", "max_window_layers", "use_sliding_window",
            "sliding_window", "cache_implementation", "rope_local_base_freq", "use_qk_norm",
            "sliding_window_size", "layer_norm_epsilon", "norm_epsilon", "mlp_type", "norm_type")


def _silent(f: Fields, *keys) -> None:
    f.used.update(keys)


def _number(f: Fields, key, default):
    """A positive whole number that config.json may write as a float (a soft cap of 50.0)."""
    value, _ = f._get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 \
            or Fraction(str(value)).denominator != 1:
        raise SymgptError(f"{f.where}: field {key!r} must be a positive whole number or null, got {value!r}")
    return int(value)


def _layer_types(f: Fields, L: int, default: list[str]) -> list[str]:
    types = f.cfg.get("layer_types")
    f.used.add("layer_types")
    if types is None:
        return default
    if not isinstance(types, list) or not all(t in ("full_attention", "sliding_attention") for t in types):
        raise SymgptError(f"{f.where}: field 'layer_types' must be a list of 'full_attention' / 'sliding_attention'")
    if len(types) != L:
        raise SymgptError(f"{f.where}: layer_types lists {len(types)} layers, num_hidden_layers is {L}")
    return types


def _windows(f: Fields, flags: dict, sizes: dict, types: list[str], window) -> None:
    """Sliding-window layers among full ones: every layer alike, or one full layer in every p
    (the layer pattern must be that periodic one; the stacks keep the counts)."""
    kinds = set(types)
    flags["window"] = "sliding_attention" in kinds
    if not flags["window"]:
        return
    if window is None:
        raise SymgptError(f"{f.where}: sliding_attention layers need a 'sliding_window' length")
    sizes["W"] = window
    if kinds == {"sliding_attention"}:
        return
    p = types.index("full_attention") + 1
    if types != ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(len(types))]:
        raise SymgptError(f"{f.where}: layer_types is not one full-attention layer in every p "
                          "(the pattern symgpt declares as two stacks)")
    flags["full_every"] = p


def _no_window(f: Fields) -> None:
    if f.bool("use_sliding_window", False):
        raise SymgptError(f"{f.where}: use_sliding_window=true is not modelled for this model type")
    _silent(f, "sliding_window", "max_window_layers")


def _qwen3(f):
    flags, sizes = _llama_like(f, dict(V=151936, d=4096, d_ff=22016, L=32, h=32, h_kv=32, T_max=32768,
                                       head_dim=128))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, qk_norm="head")
    use = f.bool("use_sliding_window", False)
    window = f.int("sliding_window", 4096, optional=True) if use else None
    first = f.int("max_window_layers", 28, minimum=0)
    _silent(f, "sliding_window")
    L = sizes["L"]
    default = ["sliding_attention" if window is not None and i >= first else "full_attention" for i in range(L)]
    types = _layer_types(f, L, default)
    if len(set(types)) > 1:
        raise SymgptError(f"{f.where}: full-attention layers before sliding ones (max_window_layers) "
                          "are not modelled")
    _windows(f, flags, sizes, types, window)
    return "qwen3", flags, sizes


def _moe_layers(f: Fields, flags: dict, sizes: dict) -> None:
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
    sizes["d_ff"] = f.int("moe_intermediate_size", sizes.pop("_moe_ff"))
    sizes["E"] = f.int("num_experts", sizes.pop("_E"))
    sizes["k"] = f.int("num_experts_per_tok", sizes.pop("_k"))
    flags["moe"] = True
    flags["topk_norm"] = f.bool("norm_topk_prob", False)


def _qwen2_moe(f):
    flags, sizes = _llama_like(f, dict(V=151936, d=2048, d_ff=5632, L=24, h=16, h_kv=16, T_max=32768))
    flags["qkv_bias"] = f.bool("qkv_bias", True)
    _no_window(f)
    sizes.update(_moe_ff=1408, _E=60, _k=4)
    _moe_layers(f, flags, sizes)
    shared = f.int("shared_expert_intermediate_size", 5632, minimum=0)
    flags["shared_expert"] = "gated" if shared else "none"
    if shared:
        flags["shared_ff"] = shared
    return "qwen2_moe", flags, sizes


def _qwen3_moe(f):
    flags, sizes = _llama_like(f, dict(V=151936, d=2048, d_ff=6144, L=24, h=32, h_kv=4, T_max=32768))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, qk_norm="head")
    _no_window(f)
    sizes.update(_moe_ff=768, _E=128, _k=8)
    _moe_layers(f, flags, sizes)
    return "qwen3_moe", flags, sizes


def _gemma_next(f, name, defaults, pattern):
    flags, sizes = _llama_like(f, {**defaults, "act": "gelu_pytorch_tanh", "tied": True})
    act = f.str("hidden_activation", None, optional=True)
    if act is not None:
        flags["activation"] = f.activation("hidden_activation", act)
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    scalar = f.int("query_pre_attn_scalar", 256)
    flags["query_scalar"] = None if scalar == sizes.get("d_head") else scalar
    flags["attn_softcap"] = _number(f, "attn_logit_softcapping", defaults["caps"][0])
    flags["logit_softcap"] = _number(f, "final_logit_softcapping", defaults["caps"][1])
    window = f.int("sliding_window", 4096, optional=True)
    p = f.int("sliding_window_pattern", pattern) if pattern != 2 else 2
    L = sizes["L"]
    default = ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(L)]
    if window is None:
        default = ["full_attention"] * L
    _windows(f, flags, sizes, _layer_types(f, L, default), window)
    _silent(f, "cache_implementation", "sliding_window_size", "rope_local_base_freq")
    # transformers 5's Gemma 2 / 3 configs save null (causal) when the field is unset
    if f.cfg.get("use_bidirectional_attention") is not None and f.bool("use_bidirectional_attention", False):
        raise SymgptError(f"{f.where}: use_bidirectional_attention=true is not a decoder")
    return name, flags, sizes


def _gemma2(f):
    return _gemma_next(f, "gemma2", dict(V=256000, d=2304, d_ff=9216, L=26, h=8, h_kv=4, T_max=8192,
                                         head_dim=256, caps=(50, 30)), 2)


def _gemma3_text(f):
    return _gemma_next(f, "gemma3_text", dict(V=262208, d=2304, d_ff=9216, L=26, h=8, h_kv=4, T_max=131072,
                                              head_dim=256, caps=(None, None)), 6)


def _phi(f):
    flags, sizes = _llama_like(f, dict(V=51200, d=2048, d_ff=8192, L=24, h=32, T_max=2048, act="gelu_new"))
    flags["rotary_pct"] = _rotary_pct(f, default=Fraction(1, 2))
    if f.bool("qk_layernorm", False):
        flags["qk_norm"] = "head"
    return "phi", flags, sizes


def _starcoder2(f):
    flags, sizes = _llama_like(f, dict(V=49152, d=3072, d_ff=12288, L=30, h=24, h_kv=2, T_max=4096,
                                       act="gelu_pytorch_tanh", tied=True))
    bias = f.bool("use_bias", True)
    flags.update(qkv_bias=bias, proj_bias=bias, mlp_bias=bias)
    _window(f, flags, sizes, None)
    if f.str("norm_type", "layer_norm") != "layer_norm" or f.str("mlp_type", "default") != "default":
        raise SymgptError(f"{f.where}: only StarCoder2's layer_norm and default MLP are modelled")
    _silent(f, "norm_epsilon", "layer_norm_epsilon", "embedding_dropout", "residual_dropout")
    return "starcoder2", flags, sizes


def _olmo2(f):
    flags, sizes = _llama_like(f, dict(V=50304, d=4096, d_ff=11008, L=32, h=32, T_max=2048))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    return "olmo2", flags, sizes


def _deepseek(f, name, D):
    sizes = {"V": f.int("vocab_size", D["V"]), "d": f.int("hidden_size", D["d"]),
             "L": f.int("num_hidden_layers", D["L"]), "h": f.int("num_attention_heads", D["h"]),
             "T_max": f.int("max_position_embeddings", D["T_max"]),
             "d_ff": f.int("moe_intermediate_size", D["moe_ff"]),
             "E": f.int("n_routed_experts", D["E"]), "k": f.int("num_experts_per_tok", D["k"])}
    kv = f.int("num_key_value_heads", None, optional=True)
    if kv not in (None, sizes["h"]):
        raise SymgptError(f"{f.where}: multi-latent attention with num_key_value_heads != "
                          "num_attention_heads is not modelled")
    f.int("head_dim", None, optional=True)  # transformers sets it to qk_rope_head_dim
    flags = {"tied": f.bool("tie_word_embeddings", False),
             "activation": f.activation("hidden_act", "silu"),
             "attention_bias": f.bool("attention_bias", False),
             "q_lora_rank": f.int("q_lora_rank", 1536, optional=True),
             "kv_lora_rank": f.int("kv_lora_rank", 512),
             "qk_nope_dim": f.int("qk_nope_head_dim", 128),
             "qk_rope_dim": f.int("qk_rope_head_dim", 64),
             "v_head_dim": f.int("v_head_dim", 128),
             "dense_ff": f.int("intermediate_size", D["ff"])}
    if f.bool("mlp_bias", False):
        raise SymgptError(f"{f.where}: mlp_bias=true is not modelled (transformers' experts have no biases)")
    if f.int("moe_layer_freq", 1) != 1:
        raise SymgptError(f"{f.where}: moe_layer_freq other than 1 is not modelled")
    dense = f.int("first_k_dense_replace", D["dense"], optional=True, minimum=0) or 0
    if dense >= sizes["L"]:
        raise SymgptError(f"{f.where}: first_k_dense_replace must be below num_hidden_layers")
    flags["dense_layers"] = dense or None
    shared = f.int("n_shared_experts", D["shared"], optional=True, minimum=0) or 0
    flags["shared_expert"] = "plain" if shared else "none"
    flags["shared_ff"] = shared * sizes["d_ff"] if shared else None
    flags["router"] = "sigmoid" if f.str("scoring_func", D["scoring"]) == "sigmoid" else "softmax"
    norm = f.cfg.get("norm_topk_prob")  # null in some DeepSeek-V2 configs: transformers' default
    flags["topk_norm"] = D["norm"] if norm is None else f.bool("norm_topk_prob")
    grouped = name == "deepseek_v3" or f.str("topk_method", "greedy") == "group_limited_greedy"
    n_group, keep = f.int("n_group", D["groups"][0], optional=True), f.int("topk_group", D["groups"][1], optional=True)
    flags["n_group"], flags["topk_group"] = (n_group, keep) if grouped and n_group and keep else (None, None)
    if name == "deepseek_v2":
        flags["topk_norm"] = False   # transformers' DeepSeek-V2 router does not renormalise
        flags["complex_rope"] = True
    mtp = f.int("num_nextn_predict_layers", 0, optional=True, minimum=0)
    if mtp:
        f.notes.append(f"num_nextn_predict_layers={mtp}: the multi-token-prediction module is not "
                       "counted (transformers does not build it either)")
    _silent(f, *_ROUTING)
    return name, flags, sizes


def _deepseek_v2(f):
    return _deepseek(f, "deepseek_v2", dict(V=102400, d=4096, L=32, h=32, T_max=2048, moe_ff=1407, E=64,
                                            k=None, ff=11008, dense=0, shared=2, scoring="softmax", norm=False,
                                            groups=(None, None)))


def _deepseek_v3(f):
    return _deepseek(f, "deepseek_v3", dict(V=129280, d=7168, L=61, h=128, T_max=4096, moe_ff=2048, E=256,
                                            k=8, ff=18432, dense=3, shared=1, scoring="sigmoid", norm=True,
                                            groups=(8, 4)))


#: model_type -> reader (added to ``hfreaders.READERS``)
READERS: dict[str, Callable] = {
    "qwen3": _qwen3, "qwen2_moe": _qwen2_moe, "qwen3_moe": _qwen3_moe, "gemma2": _gemma2,
    "gemma3_text": _gemma3_text, "phi": _phi, "starcoder2": _starcoder2, "olmo2": _olmo2,
    "deepseek_v2": _deepseek_v2, "deepseek_v3": _deepseek_v3,
}

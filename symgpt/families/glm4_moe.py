"""GLM-4.5 (Zhipu AI / Z.ai 2025, "GLM-4.5: Agentic, Reasoning, and Coding (ARC) Foundation
Models"; transformers' ``Glm4MoeForCausalLM``): grouped-query attention with biases on Q/K/V
(``attention_bias``), half the head rotated, optional RMSNorms on each query and key head
(``use_qk_norm``); the first ``first_k_dense_replace`` layers dense, then a mixture of routed
SwiGLU experts chosen by a sigmoid router (group-limited, ``n_group``/``topk_group``) plus a plain
shared expert of n_shared_experts × moe_intermediate_size. The router's score-correction bias is a
buffer, not a parameter; the multi-token-prediction layer is not built by transformers.

Sarvam-MoE (``sarvam_moe``) is built by the same transformers class from its own configuration;
Solar Open (``solar_open``, ``SolarOpenForCausalLM``) is the same block with experts in every layer."""

from __future__ import annotations

from fractions import Fraction

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family_with
from .fields import Fields, Reader, llama_like, rotary_pct

#: group-limited routing (DeepSeek-V3's, as GLM-4.5 has it): no parameters
ROUTING_FLAGS = {"n_group": None, "topk_group": None}
ROUTING_HELP = {"n_group": "group-limited routing: the experts fall in n_group groups (no parameters)",
                "topk_group": "group-limited routing: the groups each token may use"}

FAMILIES = (decoder_family_with(
    "glm4_moe", "GLM-4.5: GQA with Q/K/V biases and half-rotary heads, dense first layers, then "
    "sigmoid-routed SwiGLU experts plus a shared expert",
    ROUTING_FLAGS, ROUTING_HELP, gqa=True, qkv_bias=True, rotary_pct=50, moe=True, shared_expert="plain",
    router="sigmoid", dense_layers=1),)


def head_dim(f: Fields, sizes: dict) -> None:
    """``head_dim`` when the config sets it; else hidden_size // num_attention_heads, rounded down
    as transformers' ``getattr(config, "head_dim", hidden_size // num_attention_heads)`` does."""
    if "d_head" not in sizes and sizes["d"] % sizes["h"]:
        sizes["d_head"] = sizes["d"] // sizes["h"]


def experts(f: Fields, flags: dict, sizes: dict, D: dict, *, aliases: dict | None = None) -> None:
    """The DeepSeek-V3-style mixture fields: dense first layers, routed experts, plain shared
    experts (one FFN of n_shared × moe_intermediate_size), sigmoid group-limited routing."""
    L = sizes["L"]
    dense = 0 if D["dense"] is None else f.int("first_k_dense_replace", D["dense"], minimum=0)
    if dense >= L:
        raise SymgptError(f"{f.where}: first_k_dense_replace must be below num_hidden_layers")
    if dense:
        flags["dense_layers"], flags["dense_ff"] = dense, sizes["d_ff"]
    else:
        flags["dense_layers"] = None
    sizes["d_ff"] = f.int("moe_intermediate_size", D["moe_ff"])
    sizes["E"] = _aliased(f, "n_routed_experts", (aliases or {}).get("n_routed_experts", ()), D["E"])
    sizes["k"] = f.int("num_experts_per_tok", D["k"])
    shared = _aliased(f, "n_shared_experts", (aliases or {}).get("n_shared_experts", ()), D["shared"], minimum=0)
    flags["shared_expert"] = "plain" if shared else "none"
    flags["shared_ff"] = shared * sizes["d_ff"] if shared else None
    flags["router"] = "sigmoid"
    flags["topk_norm"] = f.bool("norm_topk_prob", D.get("norm", True))
    flags["n_group"] = f.int("n_group", D.get("n_group", 1))
    flags["topk_group"] = f.int("topk_group", D.get("topk_group", 1))
    f.silent("routed_scaling_factor")  # multiplies the weights: no parameters, no matmul


def _aliased(f: Fields, key: str, aliases, default, minimum=1, optional=False):
    """An integer field that the config class also accepts under other names (its
    ``attribute_map``); an alias present wins."""
    for alias in aliases:
        if alias in f.cfg:
            f.used.add(key)
            return f.int(alias, default, minimum=minimum, optional=optional)
    return f.int(key, default, minimum=minimum, optional=optional)


def mtp_note(f: Fields, default=1) -> None:
    """The multi-token-prediction layers the config names, which transformers does not build."""
    n = _aliased(f, "num_mtp_layers", ("num_nextn_predict_layers",), default, minimum=0, optional=True)
    if n:
        f.notes.append(f"num_nextn_predict_layers={n}: the multi-token-prediction layer is not counted "
                       "(transformers does not build it either)")


def read(f: Fields):
    """transformers' Glm4MoeConfig."""
    flags, sizes = llama_like(f, dict(V=151552, d=4096, d_ff=10944, L=46, h=96, h_kv=8, T_max=131072))
    flags["rotary_pct"] = rotary_pct(f, default=Fraction(1, 2))
    head_dim(f, sizes)
    flags.update(qkv_bias=f.bool("attention_bias", False), proj_bias=False,
                 qk_norm="head" if f.bool("use_qk_norm", False) else "none")
    experts(f, flags, sizes, dict(dense=1, moe_ff=1408, E=128, k=8, shared=1))
    mtp_note(f, default=None)
    return "glm4_moe", flags, sizes


def read_sarvam(f: Fields):
    """transformers' SarvamMoEConfig (built as ``Glm4MoeForCausalLM``: full rotary, Q/K norms)."""
    flags, sizes = llama_like(f, dict(V=262144, d=4096, d_ff=8192, L=19, h=64, h_kv=4, T_max=131072,
                                      head_dim=64))
    flags["rotary_pct"] = rotary_pct(f, default=Fraction(1))
    bias = f.bool("use_qkv_bias") if "use_qkv_bias" in f.cfg else f.bool("attention_bias", False)
    f.used.add("attention_bias")
    flags.update(qkv_bias=bias, proj_bias=False, qk_norm="head" if f.bool("use_qk_norm", True) else "none")
    experts(f, flags, sizes, dict(dense=1, moe_ff=1024, E=128, k=6, shared=1),
            aliases={"n_routed_experts": ("num_experts", "num_local_experts"),
                     "n_shared_experts": ("num_shared_experts",)})
    mtp_note(f, default=0)
    return "glm4_moe", flags, sizes


def read_solar_open(f: Fields):
    """transformers' SolarOpenConfig (Upstage's Solar Open): GLM-4.5's mixture in every layer, full
    rotary, no Q/K norms."""
    flags, sizes = llama_like(f, dict(V=196608, d=4096, d_ff=1, L=48, h=64, h_kv=8, T_max=131072, head_dim=128))
    f.used.discard("intermediate_size")  # SolarOpenConfig has none: every layer has experts
    flags["rotary_pct"] = rotary_pct(f, default=Fraction(1))
    flags.update(qkv_bias=f.bool("attention_bias", False), proj_bias=False, qk_norm="none")
    experts(f, flags, sizes, dict(dense=None, moe_ff=1280, E=128, k=8, shared=1),
            aliases={"n_routed_experts": ("num_local_experts",)})
    return "glm4_moe", flags, sizes


READERS = {"glm4_moe": Reader(read, ("Glm4MoeForCausalLM",)),
           "solar_open": Reader(read_solar_open, ("SolarOpenForCausalLM",)),
           "sarvam_moe": Reader(read_sarvam, ("Glm4MoeForCausalLM",))}

PRESETS = (
    Preset("glm-4.5-air", "glm4_moe",
           {"L": 46, "h": 96, "h_kv": 8, "d_head": 128, "d": 4096, "d_ff": 1408, "V": 151552, "T_max": 131072,
            "E": 128, "k": 8},
           flags={"dense_layers": 1, "dense_ff": 10944, "shared_ff": 1408, "qkv_bias": True, "rotary_pct": 50,
                  "n_group": 1, "topk_group": 1},
           source="Zhipu AI / Z.ai 2025 (GLM-4.5 technical report); zai-org/GLM-4.5-Air its config.json on the "
                  "Hugging Face Hub",
           note="106,852,245,504 parameters; published: 106B in total, 12B active. 1 dense layer, then 45 with "
                "128 routed experts (8 active) and 1 shared; the multi-token-prediction layer is not counted "
                "(transformers does not build it)"),
    Preset("glm-4.5", "glm4_moe",
           {"L": 92, "h": 96, "h_kv": 8, "d_head": 128, "d": 5120, "d_ff": 1536, "V": 151552, "T_max": 131072,
            "E": 160, "k": 8},
           flags={"qk_norm": "head", "dense_layers": 3, "dense_ff": 12288, "shared_ff": 1536, "n_group": 1,
                  "topk_group": 1},
           source="Zhipu AI / Z.ai 2025 (GLM-4.5 technical report); zai-org/GLM-4.5",
           note="352,797,814,784 parameters; published: 355B in total, 32B active. 3 dense layers, then 89 with "
                "160 routed experts (8 active) and 1 shared. The checkpoint's safetensors hold 358,337,791,296: "
                "besides these, the multi-token-prediction layer (5,539,962,272, not built by transformers) and the "
                "89 layers' expert-score correction biases (14,240, buffers in transformers), neither counted here"),
)

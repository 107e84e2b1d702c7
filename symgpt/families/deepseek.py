"""DeepSeek-V2 and DeepSeek-V3 (DeepSeek-AI 2024): multi-latent attention (MLA, ``blocks/mla.py``)
and a mixture of routed and shared experts after a few dense layers.

The MLA sizes are integer flags read from config.json (``q_lora_rank``, ``kv_lora_rank``,
``qk_nope_dim``, ``qk_rope_dim``, ``v_head_dim``); the first ``dense_layers`` layers
(``first_k_dense_replace``) are a stack of their own with a dense FFN of width ``dense_ff``.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family, Preset
from .decoders import CHOICES, FLAG_HELP, FLAGS
from .fields import Fields, Reader

MLA_FLAGS = {
    "q_lora_rank": 1536,      # None: one q_proj (DeepSeek-V2-Lite)
    "kv_lora_rank": 512,
    "qk_nope_dim": 128,
    "qk_rope_dim": 64,
    "v_head_dim": 128,
    "attention_bias": False,  # q_a_proj, kv_a_proj_with_mqa and o_proj have biases
    "n_group": None,          # group-limited routing: groups of experts (no parameters)
    "topk_group": None,       # groups kept per token
    "complex_rope": False,    # RoPE by complex products (DeepSeek-V2 in transformers): one complex table
    "mtp_layers": None,       # multi-token-prediction modules (DeepSeek-V3: 1; transformers builds none)
}

MLA_HELP = {
    "q_lora_rank": "rank of the query compression (q_a_proj); unset: one q_proj",
    "kv_lora_rank": "rank of the key/value latent (what the cache holds per token)",
    "qk_nope_dim": "each query/key head's dimensions without positions",
    "qk_rope_dim": "each query/key head's rotary dimensions (the shared rotary key's width)",
    "v_head_dim": "each value head's dimensions",
    "attention_bias": "q_a_proj, kv_a_proj_with_mqa and o_proj have biases",
    "n_group": "group-limited routing: the experts fall in n_group groups (no parameters)",
    "topk_group": "group-limited routing: the groups each token may use",
    "complex_rope": "RoPE as a complex product (DeepSeek-V2 in transformers: a complex table, half the storage)",
    "mtp_layers": "multi-token-prediction modules (DeepSeek-V3 Sec. 2.2), each an MoE layer with its own "
                  "norms and projection, sharing the embedding and the output head",
}


def mla_family(name, description, changes, mla, help=None):
    """A multi-latent-attention family: DeepSeek's flags with *changes*, the MLA flags with *mla*
    (*help*: the help lines of a family's own flags besides the MLA ones)."""
    return Family(
        name=name, description=description,
        flags=Extended(FLAGS, {"gqa": False, "moe": True, "shared_expert": "plain", **changes}, {**MLA_FLAGS, **mla}),
        sizes=("L", "d", "h", "V"), optional=("d_ff", "T_max", "E", "k"),
        build=partial(Ref("symgpt.families.blocks.mla", "build"), name=name),
        flag_help=Extended(FLAG_HELP, added={**MLA_HELP, **(help or {})}), choices=Extended(CHOICES))


#: DeepSeek-V3 as transformers' DeepseekV3Config defaults it (the 671B model); V2 the 236B one
FAMILIES = (
    mla_family("deepseek_v3", "DeepSeek-V3: multi-latent attention, 3 dense layers then routed (sigmoid) + shared experts",
            {"dense_layers": 3, "router": "sigmoid"}, {"n_group": 8, "topk_group": 4}),
    mla_family("deepseek_v2", "DeepSeek-V2: multi-latent attention, routed (softmax) + shared experts",
            {"dense_layers": 1, "router": "softmax", "topk_norm": False},
            {"n_group": 8, "topk_group": 3, "complex_rope": True}),
)

#: fields that choose among experts or scale numbers and change no count
_ROUTING = ("topk_method", "routed_scaling_factor",
            "scoring_func", "ep_size", "aux_loss_alpha", "seq_aux", "quantization_config",
            "rope_interleave", "num_nextn_predict_layers", "max_window_layers", "use_sliding_window",
            "sliding_window", "cache_implementation", "rope_local_base_freq", "use_qk_norm",
            "sliding_window_size", "layer_norm_epsilon", "norm_epsilon", "mlp_type", "norm_type")


def read_mla(f: Fields, name, D):
    sizes = {"V": f.int("vocab_size", D["V"]), "d": f.int("hidden_size", D["d"]),
             "L": f.int("num_hidden_layers", D["L"]), "h": f.int("num_attention_heads", D["h"]),
             "T_max": f.int("max_position_embeddings", D["T_max"]),
             "d_ff": f.int("moe_intermediate_size", D["moe_ff"]),
             "E": f.int("n_routed_experts", D["E"])}
    k = f.int("num_experts_per_tok", D["k"], optional=True)
    if k is None:  # DeepseekV2Config's default: the model builds, its router cannot run
        f.notes.append("num_experts_per_tok is null: k (experts per token) is left a symbol; the parameters "
                       "do not depend on it (transformers builds the model, but its forward needs k)")
    else:
        sizes["k"] = k
    kv = f.int("num_key_value_heads", None, optional=True)
    if kv not in (None, sizes["h"]):
        raise SymgptError(f"{f.where}: multi-latent attention with num_key_value_heads != "
                          "num_attention_heads is not modelled")
    f.int("head_dim", None, optional=True)  # transformers sets it to qk_rope_head_dim
    f.int("qk_head_dim", None, optional=True)  # transformers derives it: qk_nope_head_dim + qk_rope_head_dim
    flags = {"tied": f.bool("tie_word_embeddings", False),
             "activation": f.activation("hidden_act", "silu"),
             "attention_bias": f.bool("attention_bias", False),
             "q_lora_rank": f.int("q_lora_rank", D.get("q_lora", 1536), optional=True),
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
    grouped = D["grouped"] or f.str("topk_method", "greedy") == "group_limited_greedy"
    n_group, keep = f.int("n_group", D["groups"][0], optional=True), f.int("topk_group", D["groups"][1], optional=True)
    flags["n_group"], flags["topk_group"] = (n_group, keep) if grouped and n_group and keep else (None, None)
    if name == "deepseek_v2":
        flags["topk_norm"] = False   # transformers' DeepSeek-V2 router does not renormalise
        flags["complex_rope"] = True
    mtp = f.int("num_nextn_predict_layers", 0, optional=True, minimum=0)
    if mtp:
        f.notes.append(f"num_nextn_predict_layers={mtp}: the multi-token-prediction module is not "
                       "counted (transformers does not build it either)")
    f.silent(*_ROUTING)
    return name, flags, sizes


def read_v2(f: Fields):
    """transformers' DeepseekV2Config."""
    return read_mla(f, "deepseek_v2", dict(V=102400, d=4096, L=32, h=32, T_max=2048, moe_ff=1407, E=64,
                                        k=None, ff=11008, dense=0, shared=2, scoring="softmax", norm=False,
                                        groups=(None, None), grouped=False))


def read_v3(f: Fields):
    """transformers' DeepseekV3Config."""
    return read_mla(f, "deepseek_v3", dict(V=129280, d=7168, L=61, h=128, T_max=4096, moe_ff=2048, E=256,
                                        k=8, ff=18432, dense=3, shared=1, scoring="sigmoid", norm=True,
                                        groups=(8, 4), grouped=True))


def read_mistral4(f: Fields):
    """transformers' Mistral4Config (Mistral4ForCausalLM): DeepSeek-V3's layers (multi-latent
    attention, routed and shared experts) with a softmax router. Its queries' Llama 4 position
    scaling (rope_parameters.llama_4_scaling_beta) is an elementwise product: no parameters, no matmuls."""
    name, flags, sizes = read_mla(f, "deepseek_v3", dict(V=131072, d=4096, L=36, h=32, T_max=1048576, moe_ff=2048,
                                                       E=128, k=4, ff=12288, dense=0, shared=1, scoring="softmax",
                                                       norm=True, groups=(1, 1), grouped=True))
    f.notes.append("Mistral 4: DeepSeek-V3's layers with a softmax router; the queries' Llama 4 position scaling "
                   "(llama_4_scaling_beta) is an elementwise product, not counted")
    return name, flags, sizes


READERS = {"deepseek_v2": Reader(read_v2, ("DeepseekV2ForCausalLM",)),
           "deepseek_v3": Reader(read_v3, ("DeepseekV3ForCausalLM",)),
           # Mistral 4: DeepSeek-V3's layers, a softmax router
           "mistral4": Reader(read_mistral4, ("Mistral4ForCausalLM",))}

_HF = "its config.json on the Hugging Face Hub"

PRESETS = (
    Preset("deepseek-v3", "deepseek_v3",
           {"L": 61, "h": 128, "d": 7168, "d_ff": 2048, "V": 129280, "T_max": 163840, "E": 256, "k": 8},
           flags={"dense_ff": 18432, "shared_ff": 2048},
           source="DeepSeek-AI 2024 (DeepSeek-V3 Technical Report); deepseek-ai/DeepSeek-V3 " + _HF,
           note="671,026,404,352 parameters; published: 671B (the main model; the multi-token-"
                "prediction module's further 11.5B are not counted, as transformers does not build it). "
                "3 dense layers, then 58 with 256 routed experts (8 active) and 1 shared"),
    Preset("deepseek-v2-lite", "deepseek_v2",
           {"L": 27, "h": 16, "d": 2048, "d_ff": 1408, "V": 102400, "T_max": 163840, "E": 64, "k": 6},
           flags={"dense_ff": 10944, "shared_ff": 2816, "q_lora_rank": None, "n_group": None,
                  "topk_group": None},
           source="deepseek-ai/DeepSeek-V2-Lite " + _HF,
           note="15,706,484,224 parameters; published: 15.7B. Queries without compression (q_proj)"),
    Preset("deepseek-r1", "deepseek_v3",
           {"L": 61, "h": 128, "d": 7168, "d_ff": 2048, "V": 129280, "T_max": 163840, "E": 256, "k": 8},
           flags={"dense_ff": 18432, "shared_ff": 2048},
           source="DeepSeek-AI 2025 (DeepSeek-R1); deepseek-ai/DeepSeek-R1 " + _HF,
           note="671,026,404,352 parameters; published: 671B in total, 37B activated (the main model; "
                "the multi-token-prediction module is not counted, as transformers does not build it). "
                "DeepSeek-V3's architecture"),
    Preset("kimi-k2-instruct", "deepseek_v3",
           {"L": 61, "h": 64, "d": 7168, "d_ff": 2048, "V": 163840, "T_max": 131072, "E": 384, "k": 8},
           flags={"dense_ff": 18432, "shared_ff": 2048, "dense_layers": 1, "n_group": 1, "topk_group": 1},
           source="Kimi Team 2025 (Kimi K2); moonshotai/Kimi-K2-Instruct " + _HF,
           note="1,026,408,209,408 parameters; published: 1T in total, 32B activated. DeepSeek-V3's "
                "architecture (its config names DeepseekV3ForCausalLM) with 384 routed experts, 64 heads "
                "and 1 dense layer; the config's model_type is kimi_k2, which symgpt does not read: "
                "load the preset, or the config with model_type deepseek_v3 (the model card's workaround)"),
)

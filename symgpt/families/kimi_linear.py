"""Kimi Delta Attention hybrids: Kimi Linear (Kimi Team 2025, "Kimi Linear: An Expressive, Efficient
Attention Architecture"; transformers' ``KimiLinearForCausalLM``) and Ling 3 (inclusionAI;
``BailingHybridForCausalLM``): linear-attention layers (Kimi Delta Attention, ``blocks/kda.py``)
among DeepSeek-V3's multi-latent attention layers (``blocks/mla.py``), as ``layer_types`` lists
them; the first layers (``mlp_layer_types``) a dense SwiGLU MLP, the others routed (sigmoid) plus
shared experts.

Kimi Linear's MLA has no positions (its rotary parts are not rotated) and two-step (low-rank)
forget and output gates in its KDA layers; Ling 3's MLA rotates them and gates each head's output
by sigmoid(x·W_g) (a d x h projection), its KDA gates being one projection each. The layer pattern
is data: ``linear_layers`` KDA layers, ``dense_linear`` of them among the ``dense_layers`` first
layers; the order of the layers changes no count. The KDA layers are counted by the chunked
algorithm of transformers' PyTorch path (``ops.KimiDeltaRule``: chunks of 64). At inference the
state of a KDA layer (``inference.state``: its conv state and its H x d_k x d_v state in fp32) is
not a KV cache: the KV cache holds the attention layers' latents and rotary keys.
"""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .deepseek import mla_family
from .fields import Fields, Reader

#: the flags these families add to DeepSeek's (read by ``blocks/stacks.py``, ``blocks/mla.py`` and
#: ``blocks/kda.py``)
ADDED = {"mixer": "attention", "linear_mixer": "kda", "linear_layers": 20, "full_layers": None, "dense_linear": 1,
         "kda_heads": 32, "kda_head_dim": 128, "kda_conv": 4, "kda_chunk": 64, "kda_low_rank": True,
         "mla_nope": True, "mla_head_gate": False}
ADDED_HELP = {
    "mixer": "attention or kda: the token mixer of the layers of a stack",
    "linear_mixer": "the mixer of the linear-attention layers (kda: Kimi Delta Attention)",
    "linear_layers": "how many of the L layers are linear-attention layers (the others attention layers)",
    "full_layers": "unused here (no sliding-window layers)",
    "dense_linear": "how many of the dense_layers first layers are linear-attention layers",
    "kda_heads": "Kimi Delta Attention: heads (linear_num_heads)",
    "kda_head_dim": "Kimi Delta Attention: width of a head (linear_head_dim), keys and values alike",
    "kda_conv": "Kimi Delta Attention: kernel of the causal conv1d over q, k and v (linear_conv_kernel_dim)",
    "kda_chunk": "Kimi Delta Attention: chunk length of the chunked algorithm (64 in transformers' PyTorch path)",
    "kda_low_rank": "the forget and output gates are two projections d -> d_k -> H·d_k (Kimi Linear), not one",
    "mla_nope": "the attention layers have no positions: the rotary parts are not rotated (Kimi Linear)",
    "mla_head_gate": "the attention output of each head times sigmoid(x·W_g), W_g of d x h (Ling 3)",
}

FAMILIES = (
    mla_family("kimi_linear", "Kimi Linear: Kimi Delta Attention layers among multi-latent attention layers "
               "without positions (3:1), a dense first layer, then routed (sigmoid) + shared experts",
               {"dense_layers": 1, "router": "sigmoid"},
               {**ADDED, "n_group": 1, "topk_group": 1, "q_lora_rank": None}, ADDED_HELP),
    mla_family("bailing_hybrid", "Ling 3: Kimi Delta Attention layers among multi-latent attention layers with "
               "a gate per head (5:1), two dense first layers, then routed (sigmoid) + shared experts",
               {"dense_layers": 2, "router": "sigmoid"},
               {**ADDED, "linear_layers": 35, "dense_linear": 2, "kda_low_rank": False, "mla_nope": False,
                "mla_head_gate": True, "n_group": 8, "topk_group": 4, "q_lora_rank": None}, ADDED_HELP),
)

_SILENT = ("routed_scaling_factor", "rope_theta", "rope_parameters", "rope_interleave", "pretraining_tp",
           "kda_safe_gate", "kda_lower_bound", "mtp_loss_scaling_factor", "head_dim", "qk_head_dim",
           "layer_group_size", "first_k_dense_replace", "topk_method", "scoring_func", "aux_loss_alpha",
           "seq_aux", "use_grouped_topk")


def _types(f: Fields, key: str, kinds: tuple[str, str], default: list[str], L: int) -> list[str]:
    types = f.cfg.get(key)
    f.used.add(key)
    if types is None:
        types = default
    if not isinstance(types, list) or not all(t in kinds for t in types):
        raise SymgptError(f"{f.where}: field {key!r} must list {' / '.join(map(repr, kinds))} per layer")
    if len(types) != L:
        raise SymgptError(f"{f.where}: {key} lists {len(types)} layers, num_hidden_layers is {L}")
    return types


def _read(f: Fields, name: str, D: dict, layer_default, linear: dict):
    sizes = {"V": f.int("vocab_size", D["V"]), "d": f.int("hidden_size", D["d"]),
             "L": f.int("num_hidden_layers", D["L"]), "h": f.int("num_attention_heads", D["h"]),
             "T_max": f.aliased("model_max_length", "max_position_embeddings", D["T_max"]),
             "d_ff": f.int("moe_intermediate_size", D["moe_ff"]),
             "E": f.aliased("num_experts", "num_local_experts", D["E"]),
             "k": f.aliased("num_experts_per_token", "num_experts_per_tok", D["k"])}
    L, h = sizes["L"], sizes["h"]
    kv = f.int("num_key_value_heads", None, optional=True)
    if kv not in (None, h):
        raise SymgptError(f"{f.where}: multi-latent attention with num_key_value_heads != num_attention_heads "
                          "is not modelled")
    if f.str("hidden_act", "silu") != "silu":
        raise SymgptError(f"{f.where}: hidden_act {f.cfg['hidden_act']!r} is not modelled (the convolution's "
                          "activation and the experts' are silu)")
    flags = {"tied": f.bool("tie_word_embeddings", False), "activation": "silu",
             "attention_bias": f.bool("attention_bias", False),
             "q_lora_rank": f.int("q_lora_rank", None, optional=True),
             "kv_lora_rank": f.int("kv_lora_rank", 512), "qk_nope_dim": f.int("qk_nope_head_dim", 128),
             "qk_rope_dim": f.int("qk_rope_head_dim", 64), "v_head_dim": f.int("v_head_dim", 128),
             "dense_ff": f.int("intermediate_size", D["ff"])}
    types = _types(f, "layer_types", ("linear_attention", "full_attention"), layer_default(f, L), L)
    n = types.count("linear_attention")
    if n == 0 or n == L:
        raise SymgptError(f"{f.where}: layer_types must mix linear_attention and full_attention layers "
                          "(a model of one kind is not modelled as this type)")
    dense_default = ["dense" if i < D["dense"] else "sparse" for i in range(L)]
    mlp = _types(f, "mlp_layer_types", ("dense", "sparse"), dense_default, L)
    n_dense = mlp.count("dense")
    if mlp != ["dense"] * n_dense + ["sparse"] * (L - n_dense) or n_dense == L:
        raise SymgptError(f"{f.where}: mlp_layer_types other than some dense layers first, then expert layers, "
                          "is not modelled")
    flags.update(dense_layers=n_dense or None, dense_linear=types[:n_dense].count("linear_attention"),
                 linear_layers=n, full_layers=None, kda_chunk=64, **linear)
    key = "num_shared_experts" if "num_shared_experts" in f.cfg else "n_shared_experts"
    shared = f.int(key, D["shared"], optional=True, minimum=0) or 0
    f.used.update({"num_shared_experts", "n_shared_experts"})
    flags["shared_expert"] = "plain" if shared else "none"
    flags["shared_ff"] = shared * sizes["d_ff"] if shared else None
    norm = f.cfg.get("moe_renormalize", f.cfg.get("norm_topk_prob"))
    f.used.update({"moe_renormalize", "norm_topk_prob"})
    if norm is not None and not isinstance(norm, bool):
        raise SymgptError(f"{f.where}: field 'moe_renormalize' must be true or false")
    flags["router"], flags["topk_norm"] = "sigmoid", True if norm is None else norm
    groups = f.aliased("num_expert_group", "n_group", D["groups"][0])
    keep = f.int("topk_group", D["groups"][1], optional=True)
    flags["n_group"], flags["topk_group"] = (groups, keep) if groups and keep else (None, None)
    key = "num_nextn_predict_layers" if "num_nextn_predict_layers" in f.cfg else "num_mtp_layers"
    mtp = f.int(key, 0, optional=True, minimum=0) or 0
    f.used.update({"num_nextn_predict_layers", "num_mtp_layers"})
    if mtp:
        f.notes.append(f"num_nextn_predict_layers={mtp}: the multi-token-prediction layers are not counted "
                       "(transformers does not build them)")
    if f.int("moe_layer_freq", 1) != 1:
        raise SymgptError(f"{f.where}: moe_layer_freq other than 1 is not modelled")
    # fields of the released configs that transformers' classes do not read (its MLA has no positions
    # and its router is a sigmoid whatever they say)
    f.silent("mla_use_nope", "moe_router_activation_func")
    f.silent(*_SILENT)
    return name, flags, sizes


def _kimi_layers(f: Fields, L: int) -> list[str]:
    """KimiLinearConfig's pattern: from ``linear_attn_config`` (1-indexed ``full_attn_layers`` and
    ``kda_layers``, the released checkpoints' form), else every fourth layer after the first full."""
    lac = f.cfg.get("linear_attn_config") or {}
    if isinstance(lac, dict) and "full_attn_layers" in lac and "kda_layers" in lac:
        types = [None] * L
        try:
            for i in lac["full_attn_layers"]:
                types[i - 1] = "full_attention"
            for i in lac["kda_layers"]:
                types[i - 1] = "linear_attention"
        except (TypeError, IndexError):
            raise SymgptError(f"{f.where}: linear_attn_config's full_attn_layers / kda_layers must be layer "
                              f"numbers from 1 to {L}") from None
        return types
    return ["full_attention" if i and i % 4 == 0 else "linear_attention" for i in range(L)]


def read_kimi_linear(f: Fields):
    """transformers' KimiLinearConfig (and the released config.json's ``linear_attn_config``)."""
    lac = f.cfg.get("linear_attn_config")
    f.used.add("linear_attn_config")
    if lac is not None and not isinstance(lac, dict):
        raise SymgptError(f"{f.where}: field 'linear_attn_config' must be an object")
    lac = lac or {}
    heads = lac.get("num_heads", f.int("linear_num_heads", 32))
    dim = lac.get("head_dim", f.int("linear_head_dim", 128))
    conv = lac.get("short_conv_kernel_size", f.int("linear_conv_kernel_dim", 4))
    for key, v in (("num_heads", heads), ("head_dim", dim), ("short_conv_kernel_size", conv)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise SymgptError(f"{f.where}: linear_attn_config's {key} must be a positive integer")
    linear = dict(kda_heads=heads, kda_head_dim=dim, kda_conv=conv, kda_low_rank=True, mla_nope=True,
                  mla_head_gate=False)
    return _read(f, "kimi_linear", dict(V=163840, d=2304, L=27, h=32, T_max=1048576, moe_ff=1024, E=256, k=8,
                                        ff=9216, dense=f.int("first_k_dense_replace", 1, minimum=0), shared=1,
                                        groups=(1, 1)), _kimi_layers, linear)


def read_bailing_hybrid(f: Fields):
    """transformers' BailingHybridConfig: the KDA sizes are ``linear_*`` when the file has them, else
    the attention's (``head_dim``, ``num_attention_heads``, ``short_conv_kernel_size``), as its
    ``__post_init__`` sets them."""
    h = f.int("num_attention_heads", 32)
    heads = f.int("linear_num_heads", h) if "linear_num_heads" in f.cfg else h
    dim = f.int("linear_head_dim", 128) if "linear_head_dim" in f.cfg else f.int("head_dim", 128)
    conv = (f.int("linear_conv_kernel_dim", 4) if "linear_conv_kernel_dim" in f.cfg
            else f.int("short_conv_kernel_size", 4))
    f.used.update({"short_conv_kernel_size", "head_dim"})
    group = f.int("layer_group_size", 6)
    linear = dict(kda_heads=heads, kda_head_dim=dim, kda_conv=conv, kda_low_rank=False, mla_nope=False,
                  mla_head_gate=True)
    return _read(f, "bailing_hybrid", dict(V=157184, d=2560, L=42, h=32, T_max=262144, moe_ff=768, E=512, k=8,
                                           ff=6144, dense=f.int("first_k_dense_replace", 2, minimum=0), shared=1,
                                           groups=(8, 4)),
                 lambda f, L: ["full_attention" if (i + 1) % group == 0 else "linear_attention" for i in range(L)],
                 linear)


READERS = {"kimi_linear": Reader(read_kimi_linear, ("KimiLinearForCausalLM",)),
           "bailing_hybrid": Reader(read_bailing_hybrid, ("BailingHybridForCausalLM",))}

PRESETS: tuple[Preset, ...] = (
    # Kimi Linear (Kimi Team 2025), the released checkpoint
    Preset("kimi-linear-48b-a3b", "kimi_linear",
           {"V": 163840, "d": 2304, "L": 27, "h": 32, "T_max": 1048576, "d_ff": 1024, "E": 256, "k": 8},
           flags={"dense_ff": 9216, "shared_ff": 1024},
           source="Kimi Team 2025 (Kimi Linear, arXiv 2510.26692); moonshotai/Kimi-Linear-48B-A3B-Instruct its "
                  "config.json on the Hugging Face Hub",
           note="49,122,675,072 parameters (the checkpoint's 49,122,681,728 adds the 26 MoE layers' expert-score "
                "correction biases, 6,656 numbers transformers keeps as buffers); published: 48B in total, 3B "
                "active. 27 layers: 20 KDA (32 heads of 128, short conv 4), 7 MLA (layers 4, 8, ..., 24, 27); "
                "layer 1 a dense SwiGLU of 9,216, the rest 256 experts (8 active) and one shared expert"),
)

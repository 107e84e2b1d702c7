"""Decoders with DeepSeek's multi-latent attention (DeepSeek-AI 2024, "DeepSeek-V2", Sec. 2.1;
``blocks/mla.py``) besides DeepSeek's own. Dense ones, a SwiGLU FFN in every layer:

* MiniCPM3 (OpenBMB, the openbmb/MiniCPM3-4B model card; transformers' ``MiniCPM3ForCausalLM``),
  whose μP-style scalings (embeddings × scale_emb, each branch × scale_depth/√L, hidden states ÷
  hidden_size/dim_model_base before the head) are elementwise and not modelled -- a note says so;
* Youtu-LLM (Tencent Youtu; transformers' ``YoutuForCausalLM``).

and the GLM-4 MoE "lite" model (``glm4_moe_lite``, transformers' ``Glm4MoeLiteForCausalLM``): DeepSeek-V3's
layout -- dense layers, then sigmoid-routed experts plus a shared expert -- counted by the
``deepseek_v3`` family.
"""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .deepseek import mla_family
from .fields import Fields, Reader

_DENSE = {"moe": False, "shared_expert": "none", "dense_layers": None, "router": "softmax"}
_NO_ROUTING = {"n_group": None, "topk_group": None}

FAMILIES = (
    mla_family("minicpm3", "MiniCPM3: multi-latent attention and a SwiGLU FFN in every layer, tied embeddings",
            {**_DENSE, "tied": True}, {**_NO_ROUTING, "q_lora_rank": 768, "kv_lora_rank": 256, "qk_nope_dim": 64,
                                       "qk_rope_dim": 32, "v_head_dim": 64}),
    mla_family("youtu", "Youtu-LLM: multi-latent attention and a SwiGLU FFN in every layer, tied embeddings",
            {**_DENSE, "tied": True}, _NO_ROUTING),
)


def _read(f: Fields, name: str, D: dict):
    sizes = {"V": f.int("vocab_size", D["V"]), "d": f.int("hidden_size", D["d"]),
             "L": f.int("num_hidden_layers", D["L"]), "h": f.int("num_attention_heads", D["h"]),
             "T_max": f.int("max_position_embeddings", D["T_max"]), "d_ff": f.int("intermediate_size", D["ff"])}
    kv = f.int("num_key_value_heads", D["h"], optional=True)
    if kv not in (None, sizes["h"]):
        raise SymgptError(f"{f.where}: multi-latent attention with num_key_value_heads != "
                          "num_attention_heads is not modelled")
    f.int("head_dim", None, optional=True)  # transformers sets it to qk_rope_head_dim
    v = f.int("v_head_dim", D["v"], optional=True)
    flags = {**_DENSE, **_NO_ROUTING, "tied": f.bool("tie_word_embeddings", True),
             "activation": f.activation("hidden_act", "silu"),
             "attention_bias": f.bool("attention_bias", False),
             "q_lora_rank": f.int("q_lora_rank", D["q_rank"], optional=True),
             "kv_lora_rank": f.int("kv_lora_rank", D["kv_rank"]),
             "qk_nope_dim": f.int("qk_nope_head_dim", D["nope"]),
             "qk_rope_dim": f.int("qk_rope_head_dim", D["rope"]),
             "v_head_dim": v if v is not None else sizes["d"] // sizes["h"],
             "mlp_bias": f.bool("mlp_bias", False) if D["mlp_bias"] else False}
    f.silent("rope_interleave", "qk_head_dim")
    return name, flags, sizes


def read_minicpm3(f: Fields):
    """transformers' MiniCPM3Config."""
    out = _read(f, "minicpm3", dict(V=73448, d=2560, L=62, h=40, T_max=32768, ff=6400, v=None, q_rank=768,
                                    kv_rank=256, nope=64, rope=32, mlp_bias=True))
    f.silent("pretraining_tp")
    scales = [k for k, default in (("scale_emb", 12), ("scale_depth", 1.4), ("dim_model_base", 256))
              if f.get(k, default)[0] is not None]
    if scales:
        f.notes.append("MiniCPM3's scalings (" + ", ".join(scales) + ") are elementwise products not modelled: "
                       "parameters and matmul FLOPs are exact, elementwise counts miss them")
    return out


def read_youtu(f: Fields):
    """transformers' YoutuConfig."""
    f.silent("embedding_initializer_range")
    return _read(f, "youtu", dict(V=128256, d=2048, L=32, h=16, T_max=131072, ff=6144, v=128, q_rank=1536,
                                  kv_rank=512, nope=128, rope=64, mlp_bias=False))


def read_glm4_moe_lite(f: Fields):
    """transformers' Glm4MoeLiteConfig: the MLA sizes, then dense layers (``mlp_layer_types``:
    'dense' first, then 'sparse') and DeepSeek-V3's mixture."""
    sizes = {"V": f.int("vocab_size", 154880), "d": f.int("hidden_size", 2048),
             "L": f.int("num_hidden_layers", 47), "h": f.int("num_attention_heads", 20),
             "T_max": f.int("max_position_embeddings", 202752),
             "d_ff": f.int("moe_intermediate_size", 1536),
             "E": f.aliased("n_routed_experts", "num_local_experts", 64), "k": f.int("num_experts_per_tok", 4)}
    kv = f.int("num_key_value_heads", 20, optional=True)
    if kv not in (None, sizes["h"]):
        raise SymgptError(f"{f.where}: multi-latent attention with num_key_value_heads != "
                          "num_attention_heads is not modelled")
    f.int("head_dim", None, optional=True)  # transformers' attribute_map: qk_rope_head_dim
    L = sizes["L"]
    mlp = f.cfg.get("mlp_layer_types")
    f.used.add("mlp_layer_types")
    if mlp is None:
        mlp = ["dense"] + ["sparse"] * (L - 1)
    if not isinstance(mlp, list) or len(mlp) != L or not set(mlp) <= {"sparse", "dense"}:
        raise SymgptError(f"{f.where}: field 'mlp_layer_types' must list 'sparse' or 'dense' for each of the "
                          f"{L} layers")
    dense = mlp.index("sparse") if "sparse" in mlp else L
    if dense == L or mlp != ["dense"] * dense + ["sparse"] * (L - dense):
        raise SymgptError(f"{f.where}: mlp_layer_types other than dense layers first, then expert layers, "
                          "is not modelled")
    shared = f.int("n_shared_experts", 1, minimum=0)
    flags = {"tied": f.bool("tie_word_embeddings", False), "activation": f.activation("hidden_act", "silu"),
             "attention_bias": f.bool("attention_bias", False),
             "q_lora_rank": f.int("q_lora_rank", 768, optional=True),
             "kv_lora_rank": f.int("kv_lora_rank", 512), "qk_nope_dim": f.int("qk_nope_head_dim", 192),
             "qk_rope_dim": f.int("qk_rope_head_dim", 64), "v_head_dim": f.int("v_head_dim", 256),
             "dense_ff": f.int("intermediate_size", 10240), "dense_layers": dense or None,
             "shared_expert": "plain" if shared else "none", "shared_ff": shared * sizes["d_ff"] if shared else None,
             "router": "sigmoid", "topk_norm": f.bool("norm_topk_prob", True),
             "n_group": f.int("n_group", 1), "topk_group": f.int("topk_group", 1), "mtp_layers": None}
    f.silent("routed_scaling_factor", "rope_interleave", "pretraining_tp", "qk_head_dim")
    return "deepseek_v3", flags, sizes


READERS = {"glm4_moe_lite": Reader(read_glm4_moe_lite, ("Glm4MoeLiteForCausalLM",)),
           "minicpm3": Reader(read_minicpm3, ("MiniCPM3ForCausalLM",)),
           "youtu": Reader(read_youtu, ("YoutuForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()

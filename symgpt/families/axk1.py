"""A.X K1 (SK Telecom; transformers' ``AXK1ForCausalLM``): DeepSeek-V3's layout -- multi-latent
attention with query compression in every layer (``blocks/mla.py``), dense layers first, then
sigmoid-routed experts with group-limited routing and a shared expert -- with an RMSNorm on each
mixture's output before its residual add (``AXK1MoE.post_mlp_layernorm``; the dense layers have
none)."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .deepseek import mla_family
from .fields import Fields, Reader

FAMILIES = (
    mla_family("axk1", "A.X K1: multi-latent attention, a dense layer then sigmoid-routed + shared experts, an "
            "RMSNorm on each mixture's output", {"dense_layers": 1, "router": "sigmoid"},
            {"n_group": 8, "topk_group": 4, "post_moe_norm": True},
            {"post_moe_norm": "an RMSNorm of each mixture's output (routed + shared experts) before its residual "
                              "add; the dense layers have none"}),
)


def _dense_first(f: Fields, L: int) -> int:
    """How many dense layers come first: ``mlp_layer_types`` ('dense' / 'sparse' per layer), or
    the legacy ``first_k_dense_replace`` / ``moe_layer_freq`` AXK1Config derives it from."""
    mlp = f.cfg.get("mlp_layer_types")
    f.used.add("mlp_layer_types")
    if mlp is None:
        first = f.int("first_k_dense_replace", 1, minimum=0)
        freq = f.int("moe_layer_freq", 1)
        mlp = ["sparse" if i >= first and i % freq == 0 else "dense" for i in range(L)]
    if not isinstance(mlp, list) or len(mlp) != L or not set(mlp) <= {"sparse", "dense"}:
        raise SymgptError(f"{f.where}: field 'mlp_layer_types' must list 'sparse' or 'dense' for each of the "
                          f"{L} layers")
    dense = mlp.index("sparse") if "sparse" in mlp else L
    if dense == L or mlp != ["dense"] * dense + ["sparse"] * (L - dense):
        raise SymgptError(f"{f.where}: mlp_layer_types other than dense layers first, then expert layers, "
                          "is not modelled")
    return dense


def read(f: Fields):
    """transformers' AXK1Config (query compression always on: q_lora_rank is an integer)."""
    sizes = {"V": f.int("vocab_size", 163840), "d": f.int("hidden_size", 7168),
             "L": f.int("num_hidden_layers", 61), "h": f.int("num_attention_heads", 64),
             "T_max": f.int("max_position_embeddings", 32768),
             "d_ff": f.int("moe_intermediate_size", 2048),
             "E": f.aliased("n_routed_experts", "num_local_experts", 192), "k": f.int("num_experts_per_tok", 8)}
    kv = f.int("num_key_value_heads", 64, optional=True)
    if kv not in (None, sizes["h"]):
        raise SymgptError(f"{f.where}: multi-latent attention with num_key_value_heads != "
                          "num_attention_heads is not modelled")
    f.int("head_dim", None, optional=True)      # AXK1Config sets it to qk_rope_head_dim
    f.int("qk_head_dim", None, optional=True)   # ... and this to qk_nope_head_dim + qk_rope_head_dim
    dense = _dense_first(f, sizes["L"])
    shared = f.int("n_shared_experts", 1, minimum=0)
    # AXK1Config: bool | None, default True; a null field leaves the router's weights as they are
    norm = f.bool("norm_topk_prob", True) if f.cfg.get("norm_topk_prob", True) is not None else False
    f.used.add("norm_topk_prob")
    flags = {"tied": f.bool("tie_word_embeddings", False), "activation": f.activation("hidden_act", "silu"),
             "attention_bias": f.bool("attention_bias", False),
             "q_lora_rank": f.int("q_lora_rank", 1536),
             "kv_lora_rank": f.int("kv_lora_rank", 512), "qk_nope_dim": f.int("qk_nope_head_dim", 128),
             "qk_rope_dim": f.int("qk_rope_head_dim", 64), "v_head_dim": f.int("v_head_dim", 128),
             "dense_ff": f.int("intermediate_size", 18432), "dense_layers": dense or None,
             "shared_expert": "plain" if shared else "none", "shared_ff": shared * sizes["d_ff"] if shared else None,
             "router": "sigmoid", "topk_norm": bool(norm),
             "n_group": f.int("n_group", 8), "topk_group": f.int("topk_group", 4), "mtp_layers": None,
             "post_moe_norm": True}
    f.silent("routed_scaling_factor", "rope_interleave", "pretraining_tp")
    return "axk1", flags, sizes


READERS = {"axk1": Reader(read, ("AXK1ForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()

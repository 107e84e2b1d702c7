"""Falcon: parallel attention and GELU MLP, multi-query attention (h_kv), one shared LayerNorm
(Falcon-7B) or two (the new decoder architecture of Falcon-40B)."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, rotary_pct

FAMILIES = (decoder_family(
    "falcon", "Falcon: parallel attention + GELU MLP, multi-query (h_kv), one shared LayerNorm",
    norm="layernorm", ffn="mlp", activation="gelu", fused_qkv=True, parallel=True, shared_norm=True,
    tied=True, gqa=True, kv_index=True),)


def read(f: Fields):
    """transformers' FalconConfig."""
    d = f.int("n_embed", None, optional=True) or f.int("hidden_size", 4544)
    sizes = {"V": f.int("vocab_size", 65024), "d": d, "L": f.int("num_hidden_layers", 32),
             "h": f.int("num_attention_heads", 71), "T_max": f.int("max_position_embeddings", 2048)}
    new = f.bool("new_decoder_architecture", False)
    multi_query = f.bool("multi_query", True)
    parallel = f.bool("parallel_attn", True)
    if f.bool("apply_residual_connection_post_layernorm", False):
        raise SymgptError(f"{f.where}: apply_residual_connection_post_layernorm=true is not supported")
    if new and not parallel:
        raise SymgptError(f"{f.where}: new_decoder_architecture with parallel_attn=false is not "
                          "a buildable Falcon (transformers fails on it too)")
    kv = f.int("num_kv_heads", None, optional=True) or sizes["h"]
    sizes["h_kv"] = kv if (new or not multi_query) else 1
    lns = f.int("num_ln_in_parallel_attn", None, optional=True) or (2 if new else 1)
    ffn = f.int("ffn_hidden_size", None, optional=True)
    if ffn is not None:
        sizes["d_ff"] = ffn
    bias = f.bool("bias", False)
    flags = {"tied": f.bool("tie_word_embeddings", True), "activation": f.activation("activation", "gelu"),
             "positions": "alibi" if f.bool("alibi", False) else "rotary", "rotary_pct": rotary_pct(f),
             "qkv_bias": bias, "proj_bias": bias, "mlp_bias": bias,
             "parallel": new or parallel, "shared_norm": (new or parallel) and not (new and lns == 2),
             "kv_index": new or multi_query}  # qkv[..., [-2], :]: a list index (not when K, V have h heads)
    return "falcon", flags, sizes


READERS = {"falcon": Reader(read, ("FalconForCausalLM",))}

PRESETS = (
    Preset("falcon-7b", "falcon",
           {"L": 32, "h": 71, "h_kv": 1, "d": 4544, "V": 65024, "T_max": 2048},
           source="tiiuae/falcon-7b its config.json on the Hugging Face Hub",
           note="multi-query attention (one key/value head), parallel attention and MLP"),
)

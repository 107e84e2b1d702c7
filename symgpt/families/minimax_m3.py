"""MiniMax-M3's language model (MiniMax; transformers' ``MiniMaxM3VLForCausalLM`` on a
``minimax_m3_vl_text`` configuration): grouped-query attention with an RMSNorm on each query and key
head, Gemma-style RMSNorms (scaled by 1 + w), dense first layers (``mlp_layer_types``, of width
``dense_intermediate_size``), then SwiGLU experts chosen by a sigmoid router (top-k renormalised; its
score-correction bias is a buffer, not a parameter) plus a shared expert of width
``shared_intermediate_size``; every FFN has one fused gate/up projection. The sparse-attention
indexer layers (``minimax_m3_sparse``) are not modelled."""

from __future__ import annotations

from ..core.errors import SymgptError
from .decoders import decoder_family
from .exaone_moe import dense_prefix
from .fields import Fields, Reader, llama_like

FAMILIES = (decoder_family(
    "minimax_m3_vl_text", "MiniMax-M3 (text): GQA with per-head Q/K RMSNorm, dense first layers, then "
    "sigmoid-routed SwiGLU experts plus a shared expert, fused gate/up projections",
    gqa=True, qk_norm="head", norm_offset=True, moe=True, router="sigmoid", shared_expert="plain",
    fused_gate_up=True),)

_NOTE = ("MiniMax-M3's clamped SwiGLU ((up + 1)·gate·σ(swiglu_alpha·gate), clamped at swiglu_limit) is counted "
         "as a SwiGLU: the same parameters and matmuls; its few extra elementwise operations and the tensors "
         "its eager form keeps are not modelled")


def read(f: Fields):
    """transformers' MiniMaxM3VLTextConfig (``num_experts`` is its alias of num_local_experts;
    ``hidden_act`` is always silu; ``rotary_dim`` is not read by the modeling code, which rotates
    ``partial_rotary_factor`` of each head)."""
    f.rename({"num_experts": "num_local_experts"})
    flags, sizes = llama_like(f, dict(V=200064, d=6144, d_ff=3072, L=60, h=64, h_kv=4, T_max=524288,
                                      head_dim=128))
    flags["activation"] = "silu"
    L = sizes["L"]
    types = f.cfg.get("layer_types")
    f.used.add("layer_types")
    if types is not None and (not isinstance(types, list) or len(types) != L or set(types) != {"full_attention"}):
        raise SymgptError(f"{f.where}: layer_types other than every layer 'full_attention' is not modelled "
                          "(the minimax_m3_sparse indexer layers)")
    if "sparse_attention_config" in f.cfg or "moe_layer_freq" in f.cfg:
        raise SymgptError(f"{f.where}: the legacy fields sparse_attention_config / moe_layer_freq are not "
                          "read; give layer_types and mlp_layer_types")
    f.silent("index_n_heads", "index_head_dim", "index_block_size", "index_topk_blocks", "index_local_blocks",
             "rotary_dim", "routed_scaling_factor", "swiglu_alpha", "swiglu_limit")
    dense = dense_prefix(f, L, 0, first_k_key=None)
    flags["dense_layers"], flags["dense_ff"] = ((dense, f.int("dense_intermediate_size", 12288)) if dense
                                                else (None, None))
    f.used.add("dense_intermediate_size")
    sizes["E"] = f.int("num_local_experts", 128)
    sizes["k"] = f.int("num_experts_per_tok", 4)
    flags["topk_norm"] = True
    flags["shared_ff"] = f.int("shared_intermediate_size", 3072)
    f.notes.append(_NOTE)
    return "minimax_m3_vl_text", flags, sizes


READERS = {"minimax_m3_vl_text": Reader(read, ("MiniMaxM3VLForCausalLM",))}

PRESETS = ()

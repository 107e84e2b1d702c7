"""MiniMax-M2 (MiniMax 2025, the MiniMaxAI/MiniMax-M2 model card): a decoder of grouped-query
attention with an RMSNorm over all query heads and one over all key heads, a partial rotary, and
in every layer a mixture of SwiGLU experts chosen by a sigmoid router (transformers'
``MiniMaxM2ForCausalLM``; the router's score-correction bias is a buffer, not a parameter)."""

from __future__ import annotations

from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like

FAMILIES = (decoder_family(
    "minimax_m2", "MiniMax-M2: GQA with RMSNorm over all query/key heads, sigmoid-routed SwiGLU experts",
    gqa=True, moe=True, qk_norm="full", router="sigmoid"),)


def read(f: Fields):
    """transformers' MiniMaxM2Config."""
    flags, sizes = llama_like(f, dict(V=200064, d=3072, d_ff=1536, L=62, h=48, h_kv=8, T_max=196608,
                                      head_dim=128))
    flags.update(qk_norm="full", router="sigmoid", topk_norm=True)
    sizes["E"] = f.aliased("num_local_experts", "num_experts", 256)
    sizes["k"] = f.int("num_experts_per_tok", 8)
    return "minimax_m2", flags, sizes


READERS = {"minimax_m2": Reader(read, ("MiniMaxM2ForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()

"""OLMo (Groeneveld et al. 2024; transformers' ``OlmoForCausalLM``): the LLaMA block with
parameter-free LayerNorms (no scale, no shift). EXAONE 4.0 (LG AI Research 2025;
``Exaone4ForCausalLM``): OLMo 2's norms (after each branch only) with an RMSNorm on each query
and key head, and sliding-window layers with one full-attention layer without positions in every 4."""

from __future__ import annotations

from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, exaone_windows, llama_like

FAMILIES = (
    decoder_family("olmo", "OLMo: the LLaMA block with parameter-free LayerNorms", norm="layernorm",
                   norm_affine=False),
    decoder_family("exaone4", "EXAONE 4.0: norms after each branch only, per-head Q/K RMSNorm, "
                   "sliding-window layers with one full-attention layer without positions in every 4",
                   pre_norm=False, branch_norms=True, qk_norm="head", window=True, full_every=4, nope_full=True),
)


def read_olmo(f: Fields):
    """transformers' OlmoConfig."""
    flags, sizes = llama_like(f, dict(V=50304, d=4096, d_ff=11008, L=32, h=32, T_max=2048))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    clip, _ = f.get("clip_qkv", None)
    if clip is not None:
        f.notes.append("clip_qkv: the clamp of Q, K and V is not modelled (elementwise work only; "
                       "parameters and matmul FLOPs are unaffected)")
    return "olmo", flags, sizes


def read_exaone4(f: Fields):
    """transformers' Exaone4Config: ``sliding_window_pattern`` p makes every p-th layer full
    (none when sliding_window is null); the full layers have no rotary when a window is set."""
    flags, sizes = llama_like(f, dict(V=102400, d=4096, d_ff=16384, L=32, h=32, h_kv=32, T_max=2048))
    exaone_windows(f, flags, sizes)
    return "exaone4", flags, sizes


READERS = {"olmo": Reader(read_olmo, ("OlmoForCausalLM",)),
           "exaone4": Reader(read_exaone4, ("Exaone4ForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()

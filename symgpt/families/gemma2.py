"""Gemma 2 and Gemma 3 (text) (Gemma Team 2024, 2025): norms before and after each branch,
sliding-window layers with one full-attention layer in every p (Gemma 2: 2, Gemma 3: 6); Gemma 2
soft-caps scores and logits, Gemma 3 norms each query and key head instead. One reader."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, every_pth_full, layer_types, llama_like, windows

FAMILIES = (
    decoder_family("gemma2", "Gemma 2: norms before and after each branch, soft-capped scores and logits, "
                   "sliding-window and full layers alternating",
                   activation="gelu_tanh", embed_scale=True, tied=True, gqa=True, norm_offset=True,
                   branch_norms=True, attn_softcap=50, logit_softcap=30, window=True, full_every=2),
    decoder_family("gemma3_text", "Gemma 3 (text): Gemma 2's block with Q/K norms, no soft-capping, one full layer in six",
                   activation="gelu_tanh", embed_scale=True, tied=True, gqa=True, norm_offset=True,
                   local_rope=True, branch_norms=True, qk_norm="head", window=True, full_every=6),
)


def _read(f: Fields, name, defaults, pattern):
    flags, sizes = llama_like(f, {**defaults, "act": "gelu_pytorch_tanh", "tied": True})
    act = f.str("hidden_activation", None, optional=True)
    if act is not None:
        flags["activation"] = f.activation("hidden_activation", act)
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    scalar = f.int("query_pre_attn_scalar", 256)
    flags["query_scalar"] = None if scalar == sizes.get("d_head") else scalar
    flags["attn_softcap"] = f.whole("attn_logit_softcapping", defaults["caps"][0])
    flags["logit_softcap"] = f.whole("final_logit_softcapping", defaults["caps"][1])
    window = f.int("sliding_window", 4096, optional=True)
    p = f.int("sliding_window_pattern", pattern) if pattern != 2 else 2
    L = sizes["L"]
    default = every_pth_full(L, p)
    if window is None:
        default = ["full_attention"] * L
    windows(f, flags, sizes, layer_types(f, L, default), window)
    f.silent("cache_implementation", "sliding_window_size", "rope_local_base_freq")
    # transformers 5's Gemma 2 / 3 configs save null (causal) when the field is unset
    if f.cfg.get("use_bidirectional_attention") is not None and f.bool("use_bidirectional_attention", False):
        raise SymgptError(f"{f.where}: use_bidirectional_attention=true is not a decoder")
    return name, flags, sizes


def read_gemma2(f: Fields):
    """transformers' Gemma2Config."""
    return _read(f, "gemma2", dict(V=256000, d=2304, d_ff=9216, L=26, h=8, h_kv=4, T_max=8192,
                                   head_dim=256, caps=(50, 30)), 2)


def read_gemma3_text(f: Fields):
    """transformers' Gemma3TextConfig."""
    return _read(f, "gemma3_text", dict(V=262208, d=2304, d_ff=9216, L=26, h=8, h_kv=4, T_max=131072,
                                        head_dim=256, caps=(None, None)), 6)


READERS = {"gemma2": Reader(read_gemma2, ("Gemma2ForCausalLM",)),
           "gemma3_text": Reader(read_gemma3_text, ("Gemma3ForCausalLM",))}

_HF = "its config.json on the Hugging Face Hub"

PRESETS = (
    Preset("gemma-2-9b", "gemma2",
           {"L": 42, "h": 16, "h_kv": 8, "d_head": 256, "d": 3584, "d_ff": 14336, "V": 256000,
            "T_max": 8192, "W": 4096},
           flags={"query_scalar": 224},
           source="Gemma Team 2024 (Gemma 2), Table 1; google/gemma-2-9b " + _HF,
           note="9,241,705,984 parameters; published: 9B (8,324M non-embedding + 917,504K embedding). "
                "21 sliding-window layers and 21 full-attention ones"),
    Preset("gemma-3-1b", "gemma3_text",
           {"L": 26, "h": 4, "h_kv": 1, "d_head": 256, "d": 1152, "d_ff": 6912, "V": 262144,
            "T_max": 32768, "W": 512},
           source="Gemma Team 2025 (Gemma 3); google/gemma-3-1b-pt " + _HF,
           note="999,885,952 parameters; published: 1B (KerasHub's preset lists 999,885,952). "
                "22 sliding-window layers, 4 full-attention ones"),
)

"""Cohere Command R (``cohere``) and Command R7B / A (``cohere2``): attention and a SwiGLU MLP in
parallel on one LayerNorm without a shift, a tied head whose logits are scaled by ``logit_scale``
(transformers' ``CohereForCausalLM``, ``Cohere2ForCausalLM``). Cohere2 has sliding-window layers
with one full-attention layer in every 4, and the full layers have no positions at all (no
rotary)."""

from __future__ import annotations

from fractions import Fraction

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, every_pth_full, layer_types, llama_like, periodic_windows

COHERE_FLAGS = dict(norm="layernorm", norm_bias=False, parallel=True, shared_norm=True, tied=True, logit_divisor=16)

FAMILIES = (
    decoder_family("cohere", "Cohere Command R: parallel attention and SwiGLU on one LayerNorm without shift, "
                   "tied head, logits scaled by logit_scale", **COHERE_FLAGS),
    decoder_family("cohere2", "Cohere2 (Command R7B): Command R's block; sliding-window layers with one "
                   "full-attention layer without positions in every 4", window=True, full_every=4,
                   nope_full=True, **COHERE_FLAGS),
)


def cohere_fields(f: Fields, name: str, defaults: dict):
    flags, sizes = llama_like(f, {**defaults, "tied": True})
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    scale = f.get("logit_scale", 0.0625)[0]
    if scale is None:
        flags["logit_divisor"] = None
    else:
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale <= 0:
            raise SymgptError(f"{f.where}: field 'logit_scale' must be a positive number")
        inverse = 1 / Fraction(str(scale))
        if inverse.denominator != 1:
            raise SymgptError(f"{f.where}: a logit_scale of {scale} is not 1/n for a whole n (not modelled)")
        flags["logit_divisor"] = None if inverse == 1 else int(inverse)
    return flags, sizes


def read_cohere(f: Fields):
    """transformers' CohereConfig."""
    flags, sizes = cohere_fields(f, "cohere", dict(V=256000, d=8192, d_ff=22528, L=40, h=64, T_max=8192))
    if f.bool("use_qk_norm", False):
        raise SymgptError(f"{f.where}: use_qk_norm=true (a LayerNorm weight per query and key head) "
                          "is not modelled")
    return "cohere", flags, sizes


def read_cohere2(f: Fields):
    """transformers' Cohere2Config (``head_dim`` is always hidden_size // num_attention_heads;
    ``sliding_window_pattern`` is the older spelling of layer_types)."""
    flags, sizes = cohere_fields(f, "cohere2", dict(V=256000, d=8192, d_ff=22528, L=40, h=64, T_max=8192))
    dh = sizes.pop("d_head", None)
    if dh is not None and dh != sizes["d"] // sizes["h"]:
        raise SymgptError(f"{f.where}: head_dim {dh} is not hidden_size // num_attention_heads, which "
                          "transformers' Cohere2Config always uses")
    p = f.int("sliding_window_pattern", 4)
    L = sizes["L"]
    types = layer_types(f, L, every_pth_full(L, p))
    flags["full_every"] = None
    periodic_windows(f, flags, sizes, types, f.int("sliding_window", 4096, optional=True))
    flags["nope_full"] = bool(flags["full_every"])
    if not flags["window"]:
        raise SymgptError(f"{f.where}: every layer is full-attention: Cohere2 layers without positions "
                          "are not modelled")
    return "cohere2", flags, sizes


READERS = {"cohere": Reader(read_cohere, ("CohereForCausalLM",)),
           "cohere2": Reader(read_cohere2, ("Cohere2ForCausalLM",))}

PRESETS: tuple[Preset, ...] = (
    Preset("command-r", "cohere",
           {"L": 40, "h": 64, "d": 8192, "d_ff": 22528, "V": 256000, "T_max": 8192},
           source="Cohere 2024 (C4AI Command R model card); CohereForAI/c4ai-command-r-v01, its sizes as two public "
                  "partial copies of its config.json agree",
           note="34,980,831,232 parameters; published: 35B. The output head is the embedding matrix (tied), "
                "counted once; the logits are scaled by logit_scale 0.0625 (an elementwise product)"),
)

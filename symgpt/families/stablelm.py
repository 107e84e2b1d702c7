"""StableLM (Stability AI; transformers' ``StableLmForCausalLM``): a LLaMA-like SwiGLU decoder with
LayerNorm (with shift), partial rotary (25% by default), optional Q/K/V biases and an optional
parallel block on one LayerNorm. GLM-4 (Team GLM 2024; ``Glm4ForCausalLM``): norms before and
after each branch, one fused gate/up projection, Q/K/V biases, partial rotary (50%)."""

from __future__ import annotations

from fractions import Fraction

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like, rotary_pct

FAMILIES = (
    decoder_family("stablelm", "StableLM: SwiGLU with LayerNorm, partial rotary (25%), optional Q/K/V biases "
                   "and parallel block", norm="layernorm", rotary_pct=25),
    decoder_family("glm4", "GLM-4: norms before and after each branch, fused gate/up, Q/K/V biases, "
                   "partial rotary (50%), grouped-query attention", branch_norms=True, fused_gate_up=True,
                   qkv_bias=True, rotary_pct=50, gqa=True),
)


def read_stablelm(f: Fields):
    """transformers' StableLmConfig (the head dimension is always hidden_size // heads)."""
    flags, sizes = llama_like(f, dict(V=50304, d=2560, d_ff=6912, L=32, h=32, h_kv=32, T_max=4096))
    flags["rotary_pct"] = rotary_pct(f, default=Fraction(1, 4))
    if sizes.get("d_head", sizes["d"] // sizes["h"]) != sizes["d"] // sizes["h"]:
        raise SymgptError(f"{f.where}: head_dim {sizes['d_head']} is not hidden_size // num_attention_heads, "
                          "which StableLmAttention always uses")
    sizes.pop("d_head", None)
    if f.bool("qk_layernorm", False):
        raise SymgptError(f"{f.where}: qk_layernorm=true (a LayerNorm per query and key head) is not modelled")
    flags["qkv_bias"] = f.bool("use_qkv_bias", False)
    parallel = f.bool("use_parallel_residual", False)
    flags.update(parallel=parallel, shared_norm=parallel)
    return "stablelm", flags, sizes


def read_glm4(f: Fields):
    """transformers' Glm4Config."""
    flags, sizes = llama_like(f, dict(V=151552, d=4096, d_ff=13696, L=40, h=32, h_kv=2, T_max=131072,
                                      head_dim=128))
    flags["rotary_pct"] = rotary_pct(f, default=Fraction(1, 2))
    flags["qkv_bias"] = f.bool("attention_bias", True)
    return "glm4", flags, sizes


READERS = {"stablelm": Reader(read_stablelm, ("StableLmForCausalLM",)),
           "glm4": Reader(read_glm4, ("Glm4ForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()

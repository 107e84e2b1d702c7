"""Phi-2: parallel attention and GELU MLP on one LayerNorm, partial rotary (40%), biases and an LM
head with a bias."""

from __future__ import annotations

from fractions import Fraction

from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like, rotary_pct

FAMILIES = (decoder_family(
    "phi", "Phi-2: parallel attention and GELU MLP on one LayerNorm, partial rotary (40%), biases, "
    "an LM head with a bias",
    norm="layernorm", ffn="mlp", activation="gelu_new", parallel=True, shared_norm=True, qkv_bias=True,
    proj_bias=True, mlp_bias=True, head_bias=True, rotary_pct=40),)


def read(f: Fields):
    """transformers' PhiConfig."""
    flags, sizes = llama_like(f, dict(V=51200, d=2048, d_ff=8192, L=24, h=32, T_max=2048, act="gelu_new"))
    flags["rotary_pct"] = rotary_pct(f, default=Fraction(1, 2))
    if f.bool("qk_layernorm", False):
        flags["qk_norm"] = "head"
    return "phi", flags, sizes


READERS = {"phi": Reader(read, ("PhiForCausalLM",))}

PRESETS = (
    Preset("phi-2", "phi",
           {"L": 32, "h": 32, "d": 2560, "d_ff": 10240, "V": 51200, "T_max": 2048},
           source="microsoft/phi-2 its config.json on the Hugging Face Hub",
           note="2,779,683,840 parameters; published: 2.7B"),
)

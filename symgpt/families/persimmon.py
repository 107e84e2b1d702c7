"""The squared-ReLU decoders (relu(x)², So et al. 2021, "Primer") with a plain two-matrix MLP.

Persimmon (Adept 2023; transformers' ``PersimmonForCausalLM``): one fused Q/K/V projection with
biases, a LayerNorm (with shift) on each query and key head, partial rotary (50%), LayerNorms and
biases. Arcee (AFM; ``ArceeForCausalLM``): the LLaMA block with an up/down MLP. Jais 2
(``Jais2ForCausalLM``): the same with LayerNorm and biases. NanoChat (Karpathy 2025;
``NanoChatForCausalLM``): parameter-free RMSNorms, also on the embeddings and on each query and
key head after the rotary, and soft-capped logits."""

from __future__ import annotations

from fractions import Fraction

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like, rotary_pct

FAMILIES = (
    decoder_family("persimmon", "Persimmon: squared-ReLU MLP, fused Q/K/V with biases, per-head Q/K LayerNorm, "
                   "partial rotary (50%)", norm="layernorm", ffn="mlp", activation="relu2", fused_qkv=True,
                   qkv_bias=True, proj_bias=True, mlp_bias=True, qk_norm="head", rotary_pct=50),
    decoder_family("arcee", "Arcee (AFM): the LLaMA block with a squared-ReLU up/down MLP", ffn="mlp",
                   activation="relu2"),
    decoder_family("jais2", "Jais 2: squared-ReLU up/down MLP, LayerNorm, biases", norm="layernorm", ffn="mlp",
                   activation="relu2", qkv_bias=True, proj_bias=True, mlp_bias=True),
    decoder_family("nanochat", "NanoChat: parameter-free RMSNorms (also on the embeddings and, after RoPE, "
                   "on each Q/K head), squared-ReLU up/down MLP, soft-capped logits", ffn="mlp",
                   activation="relu2", norm_affine=False, embed_norm=True, qk_norm="head", qk_norm_after_rope=True,
                   logit_softcap=15),
)


def read_persimmon(f: Fields):
    """transformers' PersimmonConfig (the head dimension is always hidden_size // heads)."""
    flags, sizes = llama_like(f, dict(V=262144, d=4096, d_ff=16384, L=36, h=64, T_max=16384, act="relu2"))
    flags["rotary_pct"] = rotary_pct(f, default=Fraction(1, 2))
    if sizes.pop("h_kv") != sizes["h"] or sizes.get("d_head", sizes["d"] // sizes["h"]) != sizes["d"] // sizes["h"]:
        raise SymgptError(f"{f.where}: Persimmon has h heads of hidden_size // h (num_key_value_heads and "
                          "head_dim are not read by PersimmonAttention)")
    sizes.pop("d_head", None)
    flags["qk_norm"] = "head" if f.bool("qk_layernorm", True) else "none"
    return "persimmon", flags, sizes


def read_arcee(f: Fields):
    """transformers' ArceeConfig."""
    flags, sizes = llama_like(f, dict(V=32000, d=2560, d_ff=18432, L=32, h=32, T_max=4096, act="relu2"))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, mlp_bias=f.bool("mlp_bias", False))
    return "arcee", flags, sizes


def read_jais2(f: Fields):
    """transformers' Jais2Config."""
    flags, sizes = llama_like(f, dict(V=150272, d=3328, d_ff=26624, L=32, h=26, T_max=8192, act="relu2"))
    bias = f.bool("attention_bias", True)
    flags.update(qkv_bias=bias, proj_bias=bias, mlp_bias=f.bool("mlp_bias", True))
    return "jais2", flags, sizes


def read_nanochat(f: Fields):
    """transformers' NanoChatConfig."""
    flags, sizes = llama_like(f, dict(V=50304, d=768, d_ff=8192, L=12, h=6, T_max=2048, act="relu2"))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, logit_softcap=f.whole("final_logit_softcapping", 15))
    return "nanochat", flags, sizes


READERS = {"persimmon": Reader(read_persimmon, ("PersimmonForCausalLM",)),
           "arcee": Reader(read_arcee, ("ArceeForCausalLM",)),
           "jais2": Reader(read_jais2, ("Jais2ForCausalLM",)),
           "nanochat": Reader(read_nanochat, ("NanoChatForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()

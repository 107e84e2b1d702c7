"""GLM-4 (Team GLM 2024, THUDM/glm-4-9b-hf; transformers' GlmForCausalLM): LLaMA's block with Q/K/V
biases, one fused gate/up projection and rotary embeddings on half of each head
(``partial_rotary_factor`` 0.5)."""

from __future__ import annotations

from fractions import Fraction

from .decoders import INTERLEAVED, decoder_family
from .fields import Fields, Reader, llama_like, rotary_pct

FAMILIES = (decoder_family("glm", "GLM-4: LLaMA's block with Q/K/V biases, fused gate/up, RoPE on half of each head",
                           gqa=True, qkv_bias=True, fused_gate_up=True, rotary_pct=50,
                           **INTERLEAVED),)


def read(f: Fields):
    """transformers' GlmConfig (``attention_bias`` on Q, K, V: GlmAttention's o_proj has none)."""
    flags, sizes = llama_like(f, dict(V=151552, d=4096, d_ff=13696, L=40, h=32, h_kv=2, T_max=131072,
                                      head_dim=128))
    flags["rotary_pct"] = rotary_pct(f, default=Fraction(1, 2))
    flags["qkv_bias"] = f.bool("attention_bias", True)
    return "glm", flags, sizes


READERS = {"glm": Reader(read, ("GlmForCausalLM",))}

PRESETS = ()

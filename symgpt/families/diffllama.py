"""DiffLlama (transformers' DiffLlamaForCausalLM): LLaMA's decoder with differential attention
(Ye et al. 2024, "Differential Transformer", arXiv:2410.05258) -- two softmax maps per head over
the same queries and keys, each reading one half of the value heads, combined as
Z1 − λ·Z2 with four learned λ vectors of d_head per layer, normed per pair of heads by a
parameter-free RMSNorm of 2·d_head (``blocks/differential.py``)."""

from __future__ import annotations

from ..core.errors import SymgptError
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like

FAMILIES = (decoder_family(
    "diffllama", "DiffLlama: LLaMA with differential attention (two softmax maps per head, learned λ vectors)",
    added={"diff_attention": True},
    added_help={"diff_attention": "differential attention (DiffLlamaAttention): two attention maps over the same "
                                  "Q and K, each over one half of V's heads, combined with learned λ vectors"}),)


def read(f: Fields):
    """transformers' DiffLlamaConfig."""
    flags, sizes = llama_like(f, dict(V=32000, d=2048, d_ff=8192, L=16, h=32, T_max=2048))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    dropout, _ = f.get("attention_dropout", 0.0)
    if dropout not in (None, 0, 0.0):
        raise SymgptError(f"{f.where}: DiffLlama refuses attention_dropout > 0 (transformers raises)")
    if sizes["h_kv"] % 2 or sizes["h"] % 2:
        raise SymgptError(f"{f.where}: DiffLlama needs an even number of attention and key/value heads")
    f.silent("lambda_std_dev")
    return "diffllama", flags, sizes


READERS = {"diffllama": Reader(read, ("DiffLlamaForCausalLM",))}

PRESETS = ()

"""VaultGemma (Google 2025, google/vaultgemma-1b; a Gemma trained with differential privacy):
Gemma's block (GeGLU, embeddings scaled by sqrt(d), RMSNorm by (1 + w), tied head) with Gemma 2's
soft-capped scores and logits, queries scaled by ``query_pre_attn_scalar`` and sliding-window
layers alternating with full ones, but no norms after the branches (transformers'
VaultGemmaForCausalLM)."""

from __future__ import annotations

from .decoders import decoder_family
from .fields import Fields, Reader, every_pth_full, layer_types, llama_like, windows

FAMILIES = (decoder_family("vaultgemma", "VaultGemma: Gemma's block with soft-capped scores and logits, "
                           "sliding-window and full layers alternating",
                           activation="gelu_tanh", embed_scale=True, tied=True, gqa=True, norm_offset=True,
                           attn_softcap=50, logit_softcap=30, window=True, full_every=2),)


def read(f: Fields):
    """transformers' VaultGemmaConfig."""
    flags, sizes = llama_like(f, dict(V=256000, d=2304, d_ff=9216, L=26, h=8, h_kv=4, T_max=8192,
                                      head_dim=256, tied=True, act="gelu_pytorch_tanh"))
    act = f.str("hidden_activation", "gelu_pytorch_tanh")
    flags["activation"] = f.activation("hidden_activation", act)  # VaultGemmaMLP reads this one
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    scalar = f.int("query_pre_attn_scalar", 256)
    flags["query_scalar"] = None if scalar == sizes.get("d_head") else scalar
    flags["attn_softcap"] = f.whole("attn_logit_softcapping", 50)
    flags["logit_softcap"] = f.whole("final_logit_softcapping", 30)
    window = f.int("sliding_window", 4096, optional=True)
    L = sizes["L"]
    default = every_pth_full(L, 2)
    types = layer_types(f, L, default)
    if window is None:  # VaultGemmaAttention: a null window is no window
        types = ["full_attention"] * L
    windows(f, flags, sizes, types, window)
    return "vaultgemma", flags, sizes


READERS = {"vaultgemma": Reader(read, ("VaultGemmaForCausalLM",))}

PRESETS = ()

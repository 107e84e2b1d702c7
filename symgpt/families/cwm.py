"""CWM, Code World Model (Meta FAIR 2025, facebook/cwm): LLaMA's block with grouped-query
attention, three sliding-window layers to one full-attention layer (transformers' CwmForCausalLM:
layer i attends to every key when i is a multiple of 4)."""

from __future__ import annotations

from .decoders import decoder_family
from .fields import Fields, Reader, layer_types, llama_like, windows

FAMILIES = (decoder_family("cwm", "CWM: LLaMA's block, GQA, sliding-window layers with one full-attention layer in four",
                           gqa=True, window=True, full_every=4),)


def read(f: Fields):
    """transformers' CwmConfig (no attention biases: CwmAttention's projections have none)."""
    flags, sizes = llama_like(f, dict(V=128256, d=6144, d_ff=21504, L=64, h=48, h_kv=8, T_max=131072,
                                      head_dim=128))
    flags["mlp_bias"] = f.bool("mlp_bias", False)
    L = sizes["L"]
    window = f.int("sliding_window", 8192, optional=True)  # null: the sliding layers see every key
    default = ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(L)]
    types = layer_types(f, L, default)
    if window is None:
        types = ["full_attention"] * L
    windows(f, flags, sizes, types, window)
    return "cwm", flags, sizes


READERS = {"cwm": Reader(read, ("CwmForCausalLM",))}

PRESETS = ()

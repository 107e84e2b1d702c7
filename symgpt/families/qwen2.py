"""Qwen2: LLaMA's block with Q/K/V biases."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like

FAMILIES = (decoder_family("qwen2", "Qwen2: LLaMA with Q/K/V biases", gqa=True, qkv_bias=True),)


def read(f: Fields):
    """transformers' Qwen2Config; every layer must attend alike (all sliding or all full)."""
    flags, sizes = llama_like(f, dict(V=151936, d=4096, d_ff=22016, L=32, h=32, h_kv=32, T_max=32768))
    use = f.bool("use_sliding_window", False)
    window = f.int("sliding_window", 4096, optional=True) if use else None
    f.used.add("sliding_window")
    first = f.int("max_window_layers", 28, minimum=0)
    types = f.cfg.get("layer_types")
    f.used.add("layer_types")
    if types is not None:
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise SymgptError(f"{f.where}: field 'layer_types' must be a list of strings")
        kinds = set(types)
    else:
        # layer i slides iff a window is set and i >= first (decided without a loop over L)
        kinds = {"full_attention"} if window is None or first > 0 else set()
        if window is not None and first < sizes["L"]:
            kinds.add("sliding_attention")
    if len(kinds) > 1:
        raise SymgptError(f"{f.where}: layers mix full and sliding-window attention, which symgpt "
                          "does not model (every block is the same)")
    flags["window"] = kinds == {"sliding_attention"}
    if flags["window"]:
        if window is None:
            raise SymgptError(f"{f.where}: sliding_attention layers need a 'sliding_window' length")
        sizes["W"] = window
    return "qwen2", flags, sizes


READERS = {"qwen2": Reader(read, ("Qwen2ForCausalLM",))}

_HF = "its config.json on the Hugging Face Hub"

PRESETS = (
    Preset("qwen2-0.5b", "qwen2",
           {"L": 24, "h": 14, "h_kv": 2, "d": 896, "d_ff": 4864, "V": 151936, "T_max": 131072},
           flags={"tied": True}, source="Qwen/Qwen2-0.5B " + _HF),
    Preset("qwen2.5-7b", "qwen2",
           {"L": 28, "h": 28, "h_kv": 4, "d": 3584, "d_ff": 18944, "V": 152064, "T_max": 131072},
           source="Qwen Team 2024 (Qwen2.5 Technical Report); Qwen/Qwen2.5-7B " + _HF,
           note="7,615,616,512 parameters; published: 7B"),
    Preset("qwen2.5-72b-instruct", "qwen2",
           {"L": 80, "h": 64, "h_kv": 8, "d": 8192, "d_ff": 29568, "V": 152064, "T_max": 32768},
           source="Qwen Team 2024 (Qwen2.5 Technical Report); Qwen/Qwen2.5-72B-Instruct " + _HF,
           note="72,706,203,648 parameters; published: 72B. The instruction-tuned checkpoint's "
                "config (context 32,768)"),
)

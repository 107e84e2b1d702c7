"""SmolLM3 (Hugging Face 2025, HuggingFaceTB/SmolLM3-3B): LLaMA's block with grouped-query
attention and a tied head; every fourth layer applies no rotary embedding (NoPE layers,
``no_rope_layers``), which has no parameters and no matmul (transformers' SmolLM3ForCausalLM)."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, layer_types, windows
from .llama import read_llama_like

FAMILIES = (decoder_family("smollm3", "SmolLM3: LLaMA's block, GQA, tied head, no RoPE in every fourth layer",
                           gqa=True, tied=True),)


def read(f: Fields):
    """transformers' SmolLM3Config."""
    flags, sizes = read_llama_like(f, dict(V=128256, d=2048, d_ff=11008, L=36, h=16, h_kv=4, T_max=32768,
                                           tied=True))
    L = sizes["L"]
    interval = f.int("no_rope_layer_interval", 4)
    rope = f.cfg.get("no_rope_layers")
    f.used.add("no_rope_layers")
    if rope is None:
        rope = [int((i + 1) % interval != 0) for i in range(L)]
    if not isinstance(rope, list) or len(rope) < L or not all(v in (0, 1) and not isinstance(v, bool) for v in rope):
        raise SymgptError(f"{f.where}: field 'no_rope_layers' must list 0 or 1 for each of the {L} layers")
    nope = L - sum(rope[:L])
    if nope:
        f.notes.append(f"{nope} of the {L} layers apply no rotary embedding (no_rope_layers): symgpt counts "
                       "RoPE's elementwise work in every layer (parameters and matmul FLOPs are the same)")
    # a sliding window only where use_sliding_window is set and the layer type says so
    use = f.bool("use_sliding_window", False)
    window = f.int("sliding_window", None, optional=True)
    default = ["sliding_attention" if use and window is not None and not rope[i] else "full_attention"
               for i in range(L)]
    types = layer_types(f, L, default)
    if not use or window is None:
        types = ["full_attention"] * L
    windows(f, flags, sizes, types, window)
    f.silent("max_window_layers")  # in SmolLM3-3B's config.json (Qwen2's field): no SmolLM3 class reads it
    return "smollm3", flags, sizes


READERS = {"smollm3": Reader(read, ("SmolLM3ForCausalLM",))}

PRESETS = (
    Preset("smollm3-3b", "smollm3",
           {"L": 36, "h": 16, "h_kv": 4, "d": 2048, "d_ff": 11008, "V": 128256, "T_max": 65536},
           source="Hugging Face 2025 (SmolLM3 blog post); HuggingFaceTB/SmolLM3-3B its config.json on the "
                  "Hugging Face Hub",
           note="3,075,098,624 parameters; published: 3B. 9 of the 36 layers apply no rotary embedding "
                "(NoPE): RoPE's elementwise work is counted in every layer"),
)

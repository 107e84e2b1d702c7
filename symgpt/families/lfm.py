"""Liquid AI's LFM2 and LFM3 (transformers' ``Lfm2ForCausalLM``, ``Lfm3ForCausalLM``): gated short
causal convolutions (``Lfm2ShortConv``: in_proj d -> B, C, x; B·x through a depthwise causal
conv1d of kernel ``conv_L_cache``; C times its output; out_proj) interleaved with GQA attention
layers with per-head Q/K RMSNorms, each layer with a SwiGLU FFN, pre-norm RMSNorms and a final
norm (``embedding_norm``, applied after the layers). LFM3 adds sliding-window attention layers
(their own rotary table), a sigmoid output gate per attention head (``g_proj``: d -> h) and
sandwich norms (a norm on each branch's output). Each layer kind is its own stack
(``blocks/kinds.py``); a short-convolution layer keeps its last conv_L_cache inputs per channel as
its inference state (``inference.state``, transformers' conv state), not a KV cache."""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family, Preset
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader

ADDED = {"conv_layers": None, "full_layers": None, "conv_bias": False, "attn_gate": "none", "attn_gate_per_head": False}
ADDED_HELP = {
    "conv_layers": "how many layers are short-convolution layers (in_proj to B, C, x; B·x; causal conv1d; "
                   "C·conv; out_proj) instead of attention",
    "full_layers": "with window: how many attention layers are full-attention, the others sliding-window",
    "conv_bias": "the short convolution, its in_proj and out_proj have biases (conv_bias)",
    "attn_gate": "none or sigmoid: each attention head's output times sigmoid(x·W_g) (W_g: d x h, with "
                 "attn_gate_per_head)",
    "attn_gate_per_head": "with attn_gate: one gate per head (LFM3's g_proj)",
}
_BUILD = Ref("symgpt.families.blocks.kinds", "build")


def _family(name, description, **changes) -> Family:
    return Family(name=name, description=description, flags=Extended(FLAGS, changes, ADDED),
                  sizes=SIZES + ("d_conv",), optional=OPTIONAL, build=partial(_BUILD, name=name),
                  flag_help=Extended(FLAG_HELP, added=ADDED_HELP),
                  choices=Extended(CHOICES, added={"attn_gate": ("none", "sigmoid")}))


FAMILIES = (
    _family("lfm2", "LFM2: gated short causal convolutions interleaved with GQA attention layers (per-head "
                    "Q/K RMSNorms), SwiGLU FFNs, pre-norm RMSNorm", gqa=True, qk_norm="head", tied=True),
    _family("lfm3", "LFM3: LFM2's short convolutions among full and sliding-window GQA attention layers with "
                    "a sigmoid gate per head, sandwich norms", gqa=True, qk_norm="head", tied=True,
            branch_norms=True, local_rope=True),
)


def _layer_types(f: Fields, L: int, default: list[str], allowed: tuple[str, ...]) -> list[str]:
    types = f.cfg.get("layer_types")
    f.used.add("layer_types")
    if types is None:
        return default
    if not isinstance(types, list) or not all(t in allowed for t in types):
        raise SymgptError(f"{f.where}: field 'layer_types' must list one of {', '.join(allowed)} per layer")
    if len(types) != L:
        raise SymgptError(f"{f.where}: layer_types lists {len(types)} layers, num_hidden_layers is {L}")
    return types


def _common(f: Fields, D: dict):
    sizes = {"V": f.int("vocab_size", D["V"]), "d": f.int("hidden_size", D["d"]),
             "L": f.int("num_hidden_layers", D["L"]), "h": f.int("num_attention_heads", D["h"]),
             "h_kv": f.int("num_key_value_heads", D["h_kv"]), "d_conv": f.int("conv_L_cache", D["d_conv"]),
             "T_max": f.int("max_position_embeddings", 128_000)}
    if sizes["h"] % sizes["h_kv"]:
        raise SymgptError(f"{f.where}: num_attention_heads {sizes['h']} is not a multiple of num_key_value_heads "
                          f"{sizes['h_kv']}")
    flags = {"conv_bias": f.bool("conv_bias", False)}
    # numerics, initialisation and the positions' frequencies: no count (every head dimension is rotated)
    f.silent("norm_eps", "initializer_range")
    return flags, sizes


def read_lfm2(f: Fields):
    """transformers' Lfm2Config (with its aliases ``block_ff_dim`` for intermediate_size and
    ``tie_embedding`` for tie_word_embeddings, which win when present): the FFN width is
    ``intermediate_size``, or with ``block_auto_adjust_ff_dim`` int(2/3 of it), times
    ``block_ffn_dim_multiplier`` and rounded up to ``block_multiple_of`` (``Lfm2MLP``)."""
    flags, sizes = _common(f, {"V": 65536, "d": 2560, "L": 32, "h": 32, "h_kv": 8, "d_conv": 3})
    ff = f.int("block_ff_dim") if "block_ff_dim" in f.cfg else f.int("intermediate_size", 12288)
    f.silent("intermediate_size")
    if f.bool("block_auto_adjust_ff_dim", True):
        ff = int(2 * ff / 3)  # Lfm2MLP's arithmetic, as written there
        mult, _ = f.get("block_ffn_dim_multiplier", 1.0)
        if mult is not None:
            if isinstance(mult, bool) or not isinstance(mult, (int, float)) or mult <= 0:
                raise SymgptError(f"{f.where}: field 'block_ffn_dim_multiplier' must be a positive number")
            m = f.int("block_multiple_of", 256)
            ff = m * ((int(mult * ff) + m - 1) // m)
    f.silent("block_ffn_dim_multiplier", "block_multiple_of")
    sizes["d_ff"] = ff
    tied = f.bool("tie_embedding") if "tie_embedding" in f.cfg else f.bool("tie_word_embeddings", True)
    f.silent("tie_word_embeddings")
    L = sizes["L"]
    idxs = f.cfg.get("full_attn_idxs")
    f.used.add("full_attn_idxs")
    if idxs is None:
        idxs = list(range(L))
    elif not isinstance(idxs, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in idxs):
        raise SymgptError(f"{f.where}: field 'full_attn_idxs' must list layer indices")
    default = ["full_attention" if i in idxs else "conv" for i in range(L)]
    types = _layer_types(f, L, default, ("full_attention", "conv"))
    flags.update(tied=tied, conv_layers=types.count("conv") or None)
    return "lfm2", flags, sizes


def read_lfm3(f: Fields):
    """transformers' Lfm3Config (``rms_norm_eps`` is an alias of ``norm_eps``). Full-attention
    layers' "proportional" RoPE rotates every head dimension (its unrotated share has zero
    frequencies), as the sliding layers' default RoPE does: the same work."""
    f.rename({"rms_norm_eps": "norm_eps"})
    flags, sizes = _common(f, {"V": 128000, "d": 2048, "L": 24, "h": 16, "h_kv": 4, "d_conv": 7})
    sizes["d_ff"] = f.int("intermediate_size", 7680)
    sizes["d_head"] = f.int("head_dim", 128)
    L = sizes["L"]
    default = ["full_attention" if i % 4 == 2 else "sliding_attention" if i % 4 == 0 and i > 0 else "conv"
               for i in range(L)]
    types = _layer_types(f, L, default, ("full_attention", "sliding_attention", "conv"))
    bias = f.bool("attention_bias", False)
    gate = f.bool("use_attention_gate", True)
    flags.update(tied=f.bool("tie_word_embeddings", True), conv_layers=types.count("conv") or None,
                 branch_norms=f.bool("use_sandwich_norm", True), qkv_bias=bias, proj_bias=bias,
                 attn_gate="sigmoid" if gate else "none", attn_gate_per_head=gate)
    window = f.int("sliding_window", 256, optional=True)
    flags["window"] = "sliding_attention" in types
    if flags["window"]:
        if window is None:
            raise SymgptError(f"{f.where}: sliding_attention layers need a 'sliding_window' length")
        sizes["W"] = window
        flags["full_layers"] = types.count("full_attention")
    return "lfm3", flags, sizes


READERS = {
    "lfm2": Reader(read_lfm2, ("Lfm2ForCausalLM",)),
    "lfm3": Reader(read_lfm3, ("Lfm3ForCausalLM",)),
}

PRESETS = (
    Preset("lfm2-1.2b", "lfm2",
           {"V": 65536, "d": 2048, "L": 16, "h": 32, "h_kv": 8, "d_conv": 3, "T_max": 128000, "d_ff": 8192},
           flags={"conv_layers": 10},
           source="Liquid AI 2025 (LFM2); LiquidAI/LFM2-1.2B its config.json on the Hugging Face Hub",
           note="1,170,340,608 parameters; published: 1.2B. 10 short-convolution layers and 6 attention "
                "layers (full_attn_idxs 2, 5, 8, 10, 12, 14); the FFN width 8,192 is Lfm2MLP's adjustment "
                "of block_ff_dim 12,288 (2/3, rounded up to a multiple of 256); the output head is the "
                "embedding matrix (tied), counted once"),
)

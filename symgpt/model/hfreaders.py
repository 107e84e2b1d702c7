"""What each ``model_type``'s config.json fields mean: one reader per family.

A reader takes :class:`symgpt.model.hfconfig.Fields` (typed access with defaults, remembering what
was read) and returns ``(family name, flags, sizes)``. Defaults are transformers' (its
configuration classes' ``__init__`` defaults, transformers 5.x), so a missing field means what it
means there.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Callable

from ..core.errors import SymgptError

if TYPE_CHECKING:
    from .hfconfig import Fields


def _rotary_pct(f: Fields, legacy_key: str | None = None, default=Fraction(1)) -> int | None:
    """Percent of the head dimension rotated, from rope_parameters / partial_rotary_factor /
    a legacy key; None for 100%."""
    rope = f.cfg.get("rope_parameters")
    if rope is not None and not isinstance(rope, dict):
        raise SymgptError(f"{f.where}: field 'rope_parameters' must be an object")
    if isinstance(rope, dict) and "partial_rotary_factor" in rope:
        frac = type(f)(rope, f"{f.where}: rope_parameters").fraction("partial_rotary_factor")
    elif "partial_rotary_factor" in f.cfg:
        frac = f.fraction("partial_rotary_factor")
    elif legacy_key and legacy_key in f.cfg:
        frac = f.fraction(legacy_key)
    else:
        frac = default
    f.used.update({"partial_rotary_factor", legacy_key} - {None})
    pct = frac * 100
    if pct.denominator != 1:
        raise SymgptError(f"{f.where}: a partial rotary factor of {float(frac)} is not a whole percentage")
    return None if pct == 100 else int(pct)


def _heads(f: Fields, sizes: dict, kv_default=None, head_dim_default=None) -> None:
    """h, h_kv (bound when the config says so) and d_head (bound when the config sets head_dim)."""
    kv = f.int("num_key_value_heads", kv_default, optional=True)
    sizes["h_kv"] = kv if kv is not None else sizes["h"]
    head_dim = f.int("head_dim", head_dim_default, optional=True)
    if head_dim is not None:
        sizes["d_head"] = head_dim


def _window(f: Fields, flags: dict, sizes: dict, default=None) -> None:
    w = f.int("sliding_window", default, optional=True)
    flags["window"] = w is not None
    if w is not None:
        sizes["W"] = w


def _llama_like(f: Fields, defaults: dict) -> tuple[dict, dict]:
    """The fields LLaMA, Mistral, Mixtral, Qwen2, Gemma and Phi-3 share."""
    D = defaults
    sizes = {"V": f.int("vocab_size", D["V"]), "d": f.int("hidden_size", D["d"]),
             "d_ff": f.int("intermediate_size", D["d_ff"]), "L": f.int("num_hidden_layers", D["L"]),
             "h": f.int("num_attention_heads", D["h"]),
             "T_max": f.int("max_position_embeddings", D["T_max"])}
    flags = {"tied": f.bool("tie_word_embeddings", D.get("tied", False)),
             "activation": f.activation("hidden_act", D.get("act", "silu")),
             "rotary_pct": _rotary_pct(f)}
    _heads(f, sizes, kv_default=D.get("h_kv"), head_dim_default=D.get("head_dim"))
    return flags, sizes


def _llama(f):
    flags, sizes = _llama_like(f, dict(V=32000, d=4096, d_ff=11008, L=32, h=32, T_max=2048))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, mlp_bias=f.bool("mlp_bias", False))
    return "llama", flags, sizes


def _mistral(f):
    flags, sizes = _llama_like(f, dict(V=32000, d=4096, d_ff=14336, L=32, h=32, h_kv=8, T_max=131072))
    _window(f, flags, sizes, 4096)
    return "mistral", flags, sizes


def _mixtral(f):
    flags, sizes = _llama_like(f, dict(V=32000, d=4096, d_ff=14336, L=32, h=32, h_kv=8, T_max=131072))
    _window(f, flags, sizes, None)
    sizes["E"] = f.int("num_local_experts", 8)
    sizes["k"] = f.int("num_experts_per_tok", 2)
    return "mixtral", flags, sizes


def _qwen2(f):
    flags, sizes = _llama_like(f, dict(V=151936, d=4096, d_ff=22016, L=32, h=32, h_kv=32, T_max=32768))
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


def _gemma(f):
    flags, sizes = _llama_like(f, dict(V=256000, d=3072, d_ff=24576, L=28, h=16, h_kv=16, T_max=8192,
                                       head_dim=256, tied=True, act="gelu_pytorch_tanh"))
    act = f.str("hidden_activation", None, optional=True)
    if act is not None:
        flags["activation"] = f.activation("hidden_activation", act)
    elif f.cfg.get("hidden_act", "gelu_pytorch_tanh") == "gelu":
        flags["activation"] = "gelu_tanh"  # transformers reads Gemma's legacy "gelu" as tanh-GELU
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    return "gemma", flags, sizes


def _phi3(f):
    flags, sizes = _llama_like(f, dict(V=32064, d=3072, d_ff=8192, L=32, h=32, T_max=4096))
    _window(f, flags, sizes, None)
    f.used.add("attention_bias")  # transformers' Phi-3 has no biases whatever this says
    return "phi3", flags, sizes


def _falcon(f):
    d = f.int("n_embed", None, optional=True) or f.int("hidden_size", 4544)
    sizes = {"V": f.int("vocab_size", 65024), "d": d, "L": f.int("num_hidden_layers", 32),
             "h": f.int("num_attention_heads", 71), "T_max": f.int("max_position_embeddings", 2048)}
    new = f.bool("new_decoder_architecture", False)
    multi_query = f.bool("multi_query", True)
    parallel = f.bool("parallel_attn", True)
    if f.bool("apply_residual_connection_post_layernorm", False):
        raise SymgptError(f"{f.where}: apply_residual_connection_post_layernorm=true is not supported")
    if new and not parallel:
        raise SymgptError(f"{f.where}: new_decoder_architecture with parallel_attn=false is not "
                          "a buildable Falcon (transformers fails on it too)")
    kv = f.int("num_kv_heads", None, optional=True) or sizes["h"]
    sizes["h_kv"] = kv if (new or not multi_query) else 1
    lns = f.int("num_ln_in_parallel_attn", None, optional=True) or (2 if new else 1)
    ffn = f.int("ffn_hidden_size", None, optional=True)
    if ffn is not None:
        sizes["d_ff"] = ffn
    bias = f.bool("bias", False)
    flags = {"tied": f.bool("tie_word_embeddings", True), "activation": f.activation("activation", "gelu"),
             "positions": "alibi" if f.bool("alibi", False) else "rotary", "rotary_pct": _rotary_pct(f),
             "qkv_bias": bias, "proj_bias": bias, "mlp_bias": bias,
             "parallel": new or parallel, "shared_norm": (new or parallel) and not (new and lns == 2),
             "kv_index": new or multi_query}  # qkv[..., [-2], :]: a list index (not when K, V have h heads)
    return "falcon", flags, sizes


def _gpt_neox(f):
    sizes = {"V": f.int("vocab_size", 50432), "d": f.int("hidden_size", 6144),
             "L": f.int("num_hidden_layers", 44), "h": f.int("num_attention_heads", 64),
             "d_ff": f.int("intermediate_size", 24576), "T_max": f.int("max_position_embeddings", 2048)}
    bias = f.bool("attention_bias", True)
    flags = {"tied": f.bool("tie_word_embeddings", False), "activation": f.activation("hidden_act", "gelu"),
             "rotary_pct": _rotary_pct(f, "rotary_pct", Fraction(1, 4)),
             "parallel": f.bool("use_parallel_residual", True), "qkv_bias": bias, "proj_bias": bias}
    return "gpt_neox", flags, sizes


def _opt(f):
    d = f.int("hidden_size", 768)
    sizes = {"V": f.int("vocab_size", 50272), "d": d, "L": f.int("num_hidden_layers", 12),
             "h": f.int("num_attention_heads", 12), "d_ff": f.int("ffn_dim", 3072),
             "T_max": f.int("max_position_embeddings", 2048)}
    if not f.bool("layer_norm_elementwise_affine", True):
        raise SymgptError(f"{f.where}: layer_norm_elementwise_affine=false (LayerNorms without "
                          "parameters) is not supported")
    before = f.bool("do_layer_norm_before", True)
    proj = f.int("word_embed_proj_dim", None, optional=True)
    bias = f.bool("enable_bias", True)
    flags = {"tied": f.bool("tie_word_embeddings", True),
             "activation": f.activation("activation_function", "relu"),
             "post_norm": not before, "final_norm": before and not f.bool("_remove_final_layer_norm", False),
             "embed_dim": proj if proj not in (None, d) else None,
             "qkv_bias": bias, "proj_bias": bias, "mlp_bias": bias}
    return "opt", flags, sizes


def _gpt2(f):
    f.int("n_ctx", None, optional=True)  # the legacy twin of n_positions
    sizes = {"V": f.int("vocab_size", 50257), "T_max": f.int("n_positions", 1024),
             "d": f.int("n_embd", 768), "L": f.int("n_layer", 12), "h": f.int("n_head", 12)}
    inner = f.int("n_inner", None, optional=True)
    if inner is not None:
        sizes["d_ff"] = inner
    act = f.activation("activation_function", "gelu_new")
    if act not in ("gelu", "gelu_tanh", "gelu_new"):
        f.notes.append(f"activation_function {f.cfg['activation_function']!r}: the gpt2 family "
                       "counts GELU (only elementwise costs differ)")
    for key in ("scale_attn_weights", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"):
        f.bool(key, key == "scale_attn_weights")
    if f.bool("add_cross_attention", False):
        raise SymgptError(f"{f.where}: add_cross_attention=true is not supported")
    return "gpt2", {"tied": f.bool("tie_word_embeddings", True)}, sizes


#: model_type -> reader(fields) -> (family, flags, sizes)
READERS: dict[str, Callable] = {
    "llama": _llama, "mistral": _mistral, "mixtral": _mixtral, "qwen2": _qwen2, "gemma": _gemma,
    "phi3": _phi3, "falcon": _falcon, "gpt_neox": _gpt_neox, "opt": _opt, "gpt2": _gpt2,
}

# encoders, encoder--decoders and ViT: their readers live in hfreaders_encdec (one table row each)
from .hfreaders_encdec import READERS as _ENCDEC_READERS  # noqa: E402

READERS.update(_ENCDEC_READERS)

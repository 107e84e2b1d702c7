"""Gemma 4 (text) (Gemma Team 2026, "Gemma 4"): transformers' ``Gemma4ForCausalLM`` and
``Gemma4UnifiedForCausalLM`` (``blocks/gemma4.py`` builds them): Gemma 3's block with a norm of each
value head and no score scaling, full-attention layers with wider heads of their own, per-layer
embeddings (PLE), and KV sharing (the last layers reuse the keys and values of earlier ones)."""

from __future__ import annotations

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader, every_pth_full, layer_types, llama_like, note_leftovers, sub_fields, windows

FLAGS = {
    "tied": True,
    "activation": "gelu_tanh",
    "attn_bias": False,
    "window": True,            # sliding-window layers among the full ones
    "full_every": 6,           # one full-attention layer in every p
    "global_head_dim": None,   # the full-attention layers' head width (None: d_head; Gemma 4: 512)
    "global_kv_heads": None,   # the full-attention layers' key/value heads (None: h_kv)
    "k_eq_v": False,           # full-attention layers take their values from the key projection
    "kv_shared": None,         # the last n layers reuse earlier layers' keys and values
    "double_wide": False,      # the sharing layers' FFN is 2·d_ff wide
    "ple": None,               # per-layer input width p (None: no per-layer embeddings; Gemma 4: 256)
    "ple_vocab": None,         # rows of the per-layer embedding table (with ple)
    "logit_softcap": None,
    "loss": True,
}
CHOICES = {"activation": ("silu", "gelu", "gelu_tanh", "gelu_new", "relu")}
FLAG_HELP = {
    "tied": "the LM head shares the token embedding",
    "activation": "the FFN's (and the per-layer gate's) activation",
    "attn_bias": "the attention projections have biases",
    "window": "sliding-window layers (W keys) among the full-attention ones",
    "full_every": "with window: one layer in every p is full attention",
    "global_head_dim": "the full-attention layers' head width (unset: d_head)",
    "global_kv_heads": "the full-attention layers' key/value heads (unset: h_kv)",
    "k_eq_v": "full-attention layers have no value projection: values are the key projection, normed",
    "kv_shared": "the last n layers hold no key/value projections and no cache: each reads the keys and "
                 "values of the last earlier layer of its kind",
    "double_wide": "the KV-sharing layers' FFN is 2·d_ff wide",
    "ple": "per-layer embeddings of width p: a (V_ple, L·p) table and a d -> L·p projection feeding each "
           "layer's gate (unset: none)",
    "ple_vocab": "rows of the per-layer embedding table",
    "logit_softcap": "logits soft-capped to c*tanh(z/c)",
    "loss": "the graph ends in the cross-entropy loss over the T positions",
}

FAMILIES = (Family(
    name="gemma4",
    description="Gemma 4 (text): value norms, wider full-attention heads, per-layer embeddings, KV sharing",
    flags=FLAGS, sizes=("L", "d", "h", "V", "d_ff", "h_kv", "d_head"), optional=("W", "T_max"),
    build=Ref("symgpt.families.blocks.gemma4", "build"), flag_help=FLAG_HELP, choices=CHOICES),)

_DEFAULTS = dict(V=262144, d=2304, d_ff=9216, L=30, h=8, h_kv=4, head_dim=256, act="gelu_pytorch_tanh",
                 tied=True)


def _per_layer(f: Fields, types: list[str], k_eq_v: bool) -> tuple[int, int | None]:
    """The full-attention layers' head width and key/value heads from ``per_layer_config`` (a
    sparse map from layer index to the fields that differ): every full layer alike, no sliding
    layer overridden; the configuration class's default when the field is absent."""
    raw = f.cfg.get("per_layer_config")
    f.used.update({"per_layer_config", "global_head_dim", "num_global_key_value_heads"})
    if raw is None:
        gkv = f.cfg.get("num_global_key_value_heads") if k_eq_v else None
        return f.int("global_head_dim", 512), (int(gkv) if gkv is not None else None)
    if not isinstance(raw, dict):
        raise SymgptError(f"{f.where}: field 'per_layer_config' must be an object of layer index -> fields")
    seen = set()
    for key, over in raw.items():
        try:
            i = int(key)
        except (TypeError, ValueError):
            raise SymgptError(f"{f.where}: per_layer_config key {key!r} is not a layer index") from None
        if not 0 <= i < len(types) or not isinstance(over, dict):
            raise SymgptError(f"{f.where}: per_layer_config entry {key!r} is not a layer's fields")
        unknown = sorted(set(over) - {"head_dim", "num_key_value_heads"})
        if unknown:
            raise SymgptError(f"{f.where}: per_layer_config overrides {unknown[0]!r} of layer {i} (not supported)")
        if types[i] != "full_attention":
            raise SymgptError(f"{f.where}: per_layer_config overrides sliding-window layer {i} (not supported)")
        seen.add((over.get("head_dim"), over.get("num_key_value_heads")))
    full = [i for i, t in enumerate(types) if t == "full_attention"]
    keys = {int(k) for k in raw}
    if len(seen) > 1 or (seen and keys != set(full)):
        raise SymgptError(f"{f.where}: per_layer_config gives the full-attention layers different fields "
                          "(not supported)")
    hd, kv = next(iter(seen)) if seen else (None, None)
    for name, v in (("head_dim", hd), ("num_key_value_heads", kv)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v <= 0):
            raise SymgptError(f"{f.where}: per_layer_config {name} must be a positive integer, got {v!r}")
    return hd, kv


def _read(f: Fields, defaults: dict, ple: bool, T_max: int, window: int, shared_all: bool = False):
    flags, sizes = llama_like(f, {**defaults, "T_max": T_max})
    flags.pop("rotary_pct")  # Gemma 4's partial rotary is in rope_parameters: the same counts
    flags["activation"] = f.activation("hidden_activation", defaults["act"])
    f.used.add("hidden_act")
    sizes["d_head"] = f.int("head_dim", defaults["head_dim"])
    flags["attn_bias"] = f.bool("attention_bias", False)
    bidi = f.cfg.get("use_bidirectional_attention", None if ple else "vision")
    f.used.add("use_bidirectional_attention")
    if bidi == "all":
        raise SymgptError(f"{f.where}: use_bidirectional_attention='all' is not a causal decoder")
    if bidi not in (None, "vision"):
        raise SymgptError(f"{f.where}: use_bidirectional_attention must be null, 'all' or 'vision', got {bidi!r}")
    L = sizes["L"]
    types = list(layer_types(f, L, every_pth_full(L, 6)))
    types[-1] = "full_attention"  # the configuration class forces the last layer full
    w = f.int("sliding_window", window)
    windows(f, flags, sizes, types, w)
    flags["k_eq_v"] = f.bool("attention_k_eq_v", False)
    hd, kv = _per_layer(f, types, flags["k_eq_v"])
    flags["global_head_dim"] = hd if hd is not None and hd != sizes["d_head"] else None
    flags["global_kv_heads"] = kv if kv is not None and kv != sizes["h_kv"] else None
    n = f.int("num_kv_shared_layers", 0, optional=True, minimum=0) or 0
    if shared_all and n == 0:
        n = L
    if not 0 <= n <= L:
        raise SymgptError(f"{f.where}: num_kv_shared_layers {n} is not between 0 and num_hidden_layers {L}")
    if n == L:
        raise SymgptError(f"{f.where}: num_kv_shared_layers {n}: every layer reads keys and values it does not "
                          "compute (another model's, as an assistant's; not supported)")
    if 0 < n < L and set(types[: L - n]) != set(types):
        raise SymgptError(f"{f.where}: the layers that keep keys and values lack a kind the sharing layers read "
                          "(transformers refuses this configuration)")
    flags["kv_shared"] = n or None
    flags["double_wide"] = f.bool("use_double_wide_mlp", False)
    flags["logit_softcap"] = f.whole("final_logit_softcapping", None)
    if ple:
        p = f.int("hidden_size_per_layer_input", 256, optional=True, minimum=0)
        flags["ple"] = p or None
        flags["ple_vocab"] = f.int("vocab_size_per_layer_input", 262144)
        if f.bool("enable_moe_block", False):
            raise SymgptError(f"{f.where}: enable_moe_block=true (Gemma 4's mixture-of-experts block beside the "
                              "MLP) is not supported")
        f.used.update({"num_experts", "top_k_experts", "moe_intermediate_size"})  # read by the MoE block only
    else:
        flags["ple"] = None
    if flags["window"] and not flags["full_every"]:
        raise SymgptError(f"{f.where}: every layer is sliding-window but the last (not supported)")
    return "gemma4", flags, sizes


def read_gemma4_text(f: Fields):
    """transformers' Gemma4TextConfig, as Gemma4ForCausalLM."""
    return _read(f, _DEFAULTS, ple=True, T_max=131072, window=512)


def read_gemma4_unified_text(f: Fields):
    """transformers' Gemma4UnifiedTextConfig, as Gemma4UnifiedForCausalLM: no per-layer embeddings;
    use_bidirectional_attention 'vision' (the default) is causal over text."""
    return _read(f, _DEFAULTS, ple=False, T_max=262144, window=1024)


# Gemma 4's multimodal classes (Gemma4ForConditionalGeneration, config gemma4, and
# Gemma4UnifiedForConditionalGeneration, config gemma4_unified) read as their text decoders when
# their configuration has no tower: with vision_config and audio_config null, transformers builds no
# vision or audio model and the class is its text model (token embedding tied to the LM head). A
# configuration with either tower is refused in one line: the towers are not modelled.


def _read_conditional(f: Fields, text_type: str, read_text, name: str):
    for key in ("vision_config", "audio_config"):
        if f.cfg.get(key) is not None:
            raise SymgptError(f"{f.where}: {name}'s {key.split('_')[0]} tower is not modelled ({key} is set; "
                              "symgpt reads this class only without towers, as its text decoder)")
        f.silent(key)
    text = sub_fields(f, "text_config")
    mt = text.cfg.get("model_type", text_type)
    if mt != text_type:
        raise SymgptError(f"{f.where}: a {name} text_config of model_type {str(mt)[:40]!r} is not modelled")
    family, flags, sizes = read_text(text)
    note_leftovers(f, text, "text_config")
    if not f.bool("tie_word_embeddings", True):
        raise SymgptError(f"{f.where}: {name} without tied word embeddings is not modelled")
    f.notes.append(f"no vision or audio tower in this config (vision_config and audio_config are null): "
                   f"{name} is its text decoder, counted as {family}")
    f.silent("audio_token_id", "boa_token_id", "boi_token_id", "eoa_token_index", "eoa_token_id", "eoi_token_id",
             "image_token_id", "video_token_id", "initializer_range", "id2label", "label2id",
             "vision_soft_tokens_per_image", "audio_soft_tokens_per_second")
    return family, flags, sizes


def read_gemma4(f: Fields):
    """transformers' Gemma4Config: text_config (Gemma4TextConfig), vision_config, audio_config."""
    return _read_conditional(f, "gemma4_text", read_gemma4_text, "Gemma 4")


def read_gemma4_unified(f: Fields):
    """transformers' Gemma4UnifiedConfig: text_config (Gemma4UnifiedTextConfig), vision_config, audio_config."""
    return _read_conditional(f, "gemma4_unified_text", read_gemma4_unified_text, "Gemma 4 (unified)")


READERS = {
    "gemma4_text": Reader(read_gemma4_text, ("Gemma4ForCausalLM",)),
    "gemma4_unified_text": Reader(read_gemma4_unified_text, ("Gemma4UnifiedForCausalLM",)),
    "gemma4": Reader(read_gemma4, ("Gemma4ForConditionalGeneration",)),
    "gemma4_unified": Reader(read_gemma4_unified, ("Gemma4UnifiedForConditionalGeneration",)),
}

PRESETS = ()

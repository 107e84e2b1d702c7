"""GPT-Neo (Black et al. 2021): GPT-2's block with learned positions, no Q/K/V biases, unscaled
attention scores, and local attention (a window of ``window_size`` keys) in every other layer
(transformers' ``GPTNeoForCausalLM``). GPT-BigCode (SantaCoder, StarCoder; Allal et al. 2023):
GPT-2's block with multi-query attention (one key/value head) in one fused projection
(``GPTBigCodeForCausalLM``). GPT-1 (Radford et al. 2018): post-LN blocks (a LayerNorm after each
residual add), no final LayerNorm, learned positions (``OpenAIGPTLMHeadModel``)."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, periodic_windows

_GPT2 = dict(norm="layernorm", positions="learned", ffn="mlp", mlp_bias=True, proj_bias=True, tied=True)

FAMILIES = (
    decoder_family("gpt_neo", "GPT-Neo: learned positions, unscaled scores, no Q/K/V bias, local attention "
                   "(a window of W keys) in every other layer", activation="gelu_new", scores_scaled=False,
                   window=True, full_every=2, **_GPT2),
    decoder_family("gpt_bigcode", "GPT-BigCode (SantaCoder, StarCoder): GPT-2 with multi-query attention "
                   "in one fused projection", activation="gelu_tanh", fused_qkv=True, qkv_bias=True, gqa=True,
                   **_GPT2),
    decoder_family("openai_gpt", "GPT-1: post-LN blocks, no final LayerNorm, learned positions, GELU MLP",
                   activation="gelu", fused_qkv=True, qkv_bias=True, post_norm=True, final_norm=False, **_GPT2),
)


def read_gpt_neo(f: Fields):
    """transformers' GPTNeoConfig (``attention_types`` expands to one kind per layer)."""
    sizes = {"V": f.int("vocab_size", 50257), "T_max": f.int("max_position_embeddings", 2048),
             "d": f.int("hidden_size", 2048), "L": f.aliased("num_layers", "num_hidden_layers", 24),
             "h": f.aliased("num_heads", "num_attention_heads", 16)}
    inner = f.int("intermediate_size", None, optional=True)
    if inner is not None:
        sizes["d_ff"] = inner
    kinds, _ = f.get("attention_types", [[["global", "local"], 12]])
    try:
        expanded = [k for group, n in kinds for _ in range(n) for k in group]
    except (TypeError, ValueError):
        raise SymgptError(f"{f.where}: field 'attention_types' must be a list of [[kinds...], count]") from None
    f.silent("attention_layers")  # the expansion transformers saves beside attention_types
    f.silent("embed_dropout", "resid_dropout")  # dropout probabilities (noted when set)
    if len(expanded) != sizes["L"] or not set(expanded) <= {"global", "local"}:
        raise SymgptError(f"{f.where}: attention_types gives {len(expanded)} layers of global/local "
                          f"attention, num_layers is {sizes['L']}")
    flags = {"tied": f.bool("tie_word_embeddings", True),
             "activation": f.activation("activation_function", "gelu_new"), "full_every": None}
    types = ["full_attention" if k == "global" else "sliding_attention" for k in expanded]
    periodic_windows(f, flags, sizes, types, f.int("window_size", 256))
    return "gpt_neo", flags, sizes


def read_gpt_bigcode(f: Fields):
    """transformers' GPTBigCodeConfig."""
    sizes = {"V": f.int("vocab_size", 50257), "T_max": f.aliased("n_positions", "max_position_embeddings", 1024),
             "d": f.aliased("n_embd", "hidden_size", 768), "L": f.aliased("n_layer", "num_hidden_layers", 12),
             "h": f.aliased("n_head", "num_attention_heads", 12)}
    inner = f.int("n_inner", None, optional=True)
    if inner is not None:
        sizes["d_ff"] = inner
    sizes["h_kv"] = 1 if f.bool("multi_query", True) else sizes["h"]
    kv = f.int("num_key_value_heads", None, optional=True)  # saved by transformers, derived from multi_query
    if kv is not None and kv != sizes["h_kv"]:
        raise SymgptError(f"{f.where}: num_key_value_heads {kv} disagrees with multi_query "
                          f"(transformers builds {sizes['h_kv']} key/value heads)")
    if not f.bool("scale_attn_weights", True):
        raise SymgptError(f"{f.where}: scale_attn_weights=false (scores multiplied by 1) is not modelled")
    if f.bool("add_cross_attention", False):
        raise SymgptError(f"{f.where}: add_cross_attention=true is not supported")
    f.silent("scale_attention_softmax_in_fp32", "attention_softmax_in_fp32", "n_ctx")
    flags = {"tied": f.bool("tie_word_embeddings", True),
             "activation": f.activation("activation_function", "gelu_pytorch_tanh")}
    return "gpt_bigcode", flags, sizes


def read_openai_gpt(f: Fields):
    """transformers' OpenAIGPTConfig (the sequence-summary fields belong to the double-heads model)."""
    sizes = {"V": f.int("vocab_size", 40478), "T_max": f.aliased("n_positions", "max_position_embeddings", 512),
             "d": f.aliased("n_embd", "hidden_size", 768), "L": f.aliased("n_layer", "num_hidden_layers", 12),
             "h": f.aliased("n_head", "num_attention_heads", 12)}
    f.int("n_ctx", None, optional=True)
    flags = {"tied": f.bool("tie_word_embeddings", True), "activation": f.activation("afn", "gelu")}
    return "openai_gpt", flags, sizes


READERS = {"gpt_neo": Reader(read_gpt_neo, ("GPTNeoForCausalLM",)),
           "gpt_bigcode": Reader(read_gpt_bigcode, ("GPTBigCodeForCausalLM",)),
           "openai-gpt": Reader(read_openai_gpt, ("OpenAIGPTLMHeadModel",))}

PRESETS: tuple[Preset, ...] = ()

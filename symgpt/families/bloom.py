"""BLOOM (BigScience 2022) and MPT (MosaicML 2023): ALiBi instead of position embeddings.

BLOOM: a LayerNorm on the word embeddings, one fused Q/K/V projection, LayerNorm and biases
everywhere, a GELU MLP of 4d, a tied head (transformers' ``BloomForCausalLM``). MPT: the same
block without any bias (LayerNorms without a shift), a GELU MLP of 4d, a tied head
(``MptForCausalLM``, which builds the MLP as 4d and no biases whatever the config says: the fields
it ignores are refused when they ask for something else)."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader

FAMILIES = (
    decoder_family("bloom", "BLOOM: ALiBi, a LayerNorm on the embeddings, fused Q/K/V, LayerNorm and biases, "
                   "GELU MLP, tied head",
                   norm="layernorm", positions="alibi", embed_norm=True, fused_qkv=True, qkv_bias=True,
                   proj_bias=True, ffn="mlp", activation="gelu_tanh", mlp_bias=True, tied=True),
    decoder_family("mpt", "MPT: ALiBi, fused Q/K/V, LayerNorm without shift, no biases, GELU MLP, tied head",
                   norm="layernorm", norm_bias=False, positions="alibi", fused_qkv=True, ffn="mlp",
                   activation="gelu", tied=True),
)


def read_bloom(f: Fields):
    """transformers' BloomConfig (``n_embed`` is an alias of hidden_size)."""
    d = f.int("n_embed", None, optional=True)
    hidden = f.int("hidden_size", 64)
    sizes = {"V": f.int("vocab_size", 250880), "d": d if d is not None else hidden,
             "L": f.aliased("n_layer", "num_hidden_layers", 2), "h": f.aliased("n_head", "num_attention_heads", 8)}
    if f.bool("apply_residual_connection_post_layernorm", False):
        raise SymgptError(f"{f.where}: apply_residual_connection_post_layernorm=true is not supported")
    f.bool("slow_but_exact", False)  # the same matmuls, sliced
    f.silent("seq_length", "n_inner", "offset_alibi", "skip_bias_add", "skip_bias_add_qkv",
             "masked_softmax_fusion", "unk_token_id", "attention_softmax_in_fp32")
    return "bloom", {"tied": f.bool("tie_word_embeddings", True)}, sizes


#: MptConfig fields MptForCausalLM does not read, with the only value it builds
_MPT_FIXED = {"expansion_ratio": 4, "no_bias": True}
_MPT_ATTN_FIXED = {"attn_type": "multihead_attention", "qk_ln": False, "alibi": True, "prefix_lm": False,
                   "attn_uses_sequence_id": False}


def read_mpt(f: Fields):
    """transformers' MptConfig and its ``attn_config`` (MptAttentionConfig)."""
    sizes = {"V": f.int("vocab_size", 50368), "d": f.aliased("d_model", "hidden_size", 2048),
             "L": f.aliased("n_layers", "num_hidden_layers", 24),
             "h": f.aliased("n_heads", "num_attention_heads", 16)}
    sizes["T_max"] = f.int("max_seq_len", 2048)  # the ALiBi table's length: no parameters
    for key, value in _MPT_FIXED.items():
        got, _ = f.get(key, value)
        if got != value:
            raise SymgptError(f"{f.where}: {key}={got!r} is not what transformers' MptForCausalLM builds "
                              f"(it always builds {key}={value!r})")
    attn, _ = f.get("attn_config", None)
    attn = attn or {}
    if not isinstance(attn, dict):
        raise SymgptError(f"{f.where}: field 'attn_config' must be an object")
    for key, value in _MPT_ATTN_FIXED.items():
        if attn.get(key, value) != value:
            raise SymgptError(f"{f.where}: attn_config.{key}={attn[key]!r} is not what transformers' "
                              f"MptForCausalLM builds (it always builds {key}={value!r})")
    if attn.get("clip_qkv") is not None:
        f.notes.append("attn_config.clip_qkv: the clamp of the fused Q/K/V output is not modelled "
                       "(elementwise work only; parameters and matmul FLOPs are unaffected)")
    if f.get("logit_scale", None)[0] is not None:
        f.notes.append("logit_scale is ignored by transformers' MptForCausalLM (whose count this is): "
                       "its logits are not scaled")
    # learned_pos_emb (no table is built: ALiBi), embedding_fraction (a gradient scale): no count
    f.silent("learned_pos_emb", "embedding_fraction")
    f.silent("norm_type", "init_device", "emb_pdrop", "verbose", "init_config", "fc_type", "ffn_config",
             "use_pad_tok_in_ffn", "n_positions")
    return "mpt", {"tied": f.bool("tie_word_embeddings", True)}, sizes


READERS = {"bloom": Reader(read_bloom, ("BloomForCausalLM",)),
           "mpt": Reader(read_mpt, ("MptForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()

"""The decoder of an encoder--decoder run alone as a causal LM: transformers' ``BartForCausalLM``,
``MBartForCausalLM``, ``MarianForCausalLM``, ``PegasusForCausalLM``, ``BlenderbotForCausalLM``,
``BlenderbotSmallForCausalLM``, ``PLBartForCausalLM``, ``MvpForCausalLM``, ``TrOCRForCausalLM``,
``BigBirdPegasusForCausalLM`` and ``WhisperForCausalLM`` (``blocks/seq2seq_decoder.py`` builds them).

Each holds every decoder layer's cross-attention but runs it only when ``encoder_hidden_states``
are passed: counted from token ids alone, its parameters are counted and its FLOPs are not, and
the answer says so."""

from __future__ import annotations

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader

FLAGS = {
    "norm": "post",          # post (BART, Marian, BlenderbotSmall, PLBart, MVP, TrOCR) | pre (mBART, Pegasus, ...)
    "positions": "learned",  # learned | sinusoidal_table (a (T_max, d) parameter) | sinusoidal (no parameters)
    "pos_offset": 2,         # extra rows of the learned table (BART's 2)
    "embed_norm": "after",   # after (BART's layernorm_embedding) | before (BlenderbotSmall's) | none
    "embed_scale": False,    # token embeddings × √d (scale_embedding)
    "attn_bias": True,       # biases of the attention projections (BigBirdPegasus: use_bias)
    "k_bias": True,          # the key projections' bias, where attn_bias (Whisper: none)
    "activation": "gelu",
    "tied": True,
    "head": "lm",
    "dropout": False,
    "loss": True,
}
CHOICES = {"norm": ("post", "pre"), "positions": ("learned", "sinusoidal_table", "sinusoidal"),
           "embed_norm": ("after", "before", "none"), "head": ("lm", "none"),
           "activation": ("gelu", "gelu_tanh", "gelu_new", "relu", "silu")}
FLAG_HELP = {
    "norm": "post (each sublayer's LayerNorm after its residual add) or pre (before it, and a final LayerNorm)",
    "positions": "learned (T_max + pos_offset rows), sinusoidal_table (sinusoids in a (T_max, d) parameter: "
                 "Marian, Pegasus) or sinusoidal (no parameters)",
    "pos_offset": "extra rows of the learned position table (BART: 2)",
    "embed_norm": "a LayerNorm of the embeddings: after adding positions (BART), before (BlenderbotSmall), none",
    "embed_scale": "token embeddings are multiplied by sqrt(d) (scale_embedding)",
    "attn_bias": "the attention projections have biases",
    "k_bias": "with attn_bias, the key projections have biases too (Whisper's k_proj has none)",
    "activation": "the FFN's activation",
    "tied": "the LM head shares the token embedding",
    "head": "lm (the LM head and loss) or none (the decoder's hidden states)",
    "dropout": "dropout layers present (masks saved for backward)",
    "loss": "the graph ends in the cross-entropy loss over the T positions",
}

FAMILIES = (Family(
    name="seq2seq_decoder",
    description="an encoder-decoder's decoder run alone as a causal LM (BartForCausalLM and kin): "
                "causal self-attention, cross-attention held but not run, FFN",
    flags=FLAGS, sizes=("L", "d", "h", "V", "d_ff", "T_max"),
    build=Ref("symgpt.families.blocks.seq2seq_decoder", "build"), flag_help=FLAG_HELP, choices=CHOICES),)

#: fields of the encoder--decoder configurations that change nothing the decoder alone holds
_ENCODER_ONLY = {"encoder_layers", "encoder_attention_heads", "encoder_ffn_dim", "encoder_layerdrop",
                 "decoder_layerdrop", "classif_dropout", "classifier_dropout", "init_std", "gradient_checkpointing",
                 "forced_bos_token_id", "forced_eos_token_id", "early_stopping", "no_repeat_ngram_size",
                 "num_beams", "encoder_no_repeat_ngram_size", "attention_type", "block_size",
                 "num_random_blocks", "add_cross_attention"}


def held_note(f: Fields, cls: str) -> None:
    f.notes.append(
        f"{cls} holds each decoder layer's cross-attention (encoder_attn and its LayerNorm) "
        "and runs it only with encoder_hidden_states: its parameters are counted and its FLOPs are not "
        "(token ids alone); training memory counts gradients and optimizer states for those weights, which "
        "PyTorch does not allocate while no gradient reaches them")


def read_causal(f: Fields, cls: str, defaults: dict, **flags):
    """The decoder of a BART-like configuration (``d_model``, ``decoder_layers``,
    ``decoder_attention_heads``, ``decoder_ffn_dim``, ``activation_function``,
    ``scale_embedding``, ``tie_word_embeddings``) counted as the class *cls*; *defaults* holds the configuration class's
    ``V``, ``d``, ``L``, ``h``, ``d_ff``, ``T_max``; *flags* the type's architecture."""
    D = defaults
    sizes = {"V": f.int("vocab_size", D["V"]), "d": f.aliased("d_model", "hidden_size", D["d"]),
             "L": f.int("decoder_layers", D["L"]), "h": f.int("decoder_attention_heads", D["h"]),
             "d_ff": f.int("decoder_ffn_dim", D["d_ff"]), "T_max": f.int("max_position_embeddings", D["T_max"])}
    f.used.update(_ENCODER_ONLY)
    f.used.update({"num_hidden_layers", "num_attention_heads"})  # the encoder's, by attribute_map
    out = {"activation": f.activation("activation_function", D.get("act", "gelu")),
           "embed_scale": f.bool("scale_embedding", D.get("scale", False)),
           "tied": f.bool("tie_word_embeddings", True), **flags}
    held_note(f, cls)
    return "seq2seq_decoder", out, sizes


_BART = {"V": 50265, "d": 1024, "L": 12, "h": 16, "d_ff": 4096, "T_max": 1024}


def read_bart_causal(f: Fields):
    """transformers' BartConfig, as BartForCausalLM (``bart.py`` reads the other classes)."""
    return read_causal(f, "BartForCausalLM", _BART)


def read_mbart(f: Fields):
    """transformers' MBartConfig, as MBartForCausalLM: pre-LN, layernorm_embedding, a final LayerNorm."""
    return read_causal(f, "MBartForCausalLM", _BART, norm="pre")


def read_marian(f: Fields):
    """transformers' MarianConfig, as MarianForCausalLM: post-LN, sinusoids in a parameter table."""
    V = f.int("vocab_size", 58101)
    dec = f.int("decoder_vocab_size", None, optional=True)
    f.bool("share_encoder_decoder_embeddings", True)  # the encoder's tables: not in the decoder alone
    if dec is not None and dec != V:
        raise SymgptError(f"{f.where}: decoder_vocab_size {dec} differs from vocab_size {V}: MarianForCausalLM's "
                          "token table and LM head would differ in rows (not supported)")
    return read_causal(f, "MarianForCausalLM", {**_BART, "V": 58101}, positions="sinusoidal_table",
                       pos_offset=None, embed_norm="none")


def read_pegasus(f: Fields):
    """transformers' PegasusConfig, as PegasusForCausalLM: pre-LN, sinusoids in a parameter table."""
    return read_causal(f, "PegasusForCausalLM", _BART, norm="pre", positions="sinusoidal_table", pos_offset=None,
                       embed_norm="none")


def read_blenderbot(f: Fields):
    """transformers' BlenderbotConfig, as BlenderbotForCausalLM: pre-LN, learned positions without offset."""
    return read_causal(f, "BlenderbotForCausalLM",
                       {"V": 8008, "d": 2560, "L": 24, "h": 32, "d_ff": 10240, "T_max": 128},
                       norm="pre", pos_offset=None, embed_norm="none")


def read_blenderbot_small(f: Fields):
    """transformers' BlenderbotSmallConfig, as BlenderbotSmallForCausalLM: post-LN, a LayerNorm of
    the token embeddings before the positions are added."""
    return read_causal(f, "BlenderbotSmallForCausalLM",
                       {"V": 50265, "d": 512, "L": 8, "h": 16, "d_ff": 2048, "T_max": 512},
                       pos_offset=None, embed_norm="before")


def read_plbart(f: Fields):
    """transformers' PLBartConfig, as PLBartForCausalLM: BART's decoder (scale_embedding defaults true)."""
    return read_causal(f, "PLBartForCausalLM",
                       {"V": 50005, "d": 768, "L": 6, "h": 12, "d_ff": 3072, "T_max": 1024, "scale": True})


def read_mvp(f: Fields):
    """transformers' MvpConfig, as MvpForCausalLM: BART's decoder; prompts refused."""
    if f.bool("use_prompt", False):
        raise SymgptError(f"{f.where}: use_prompt=true (MVP's prompt modules) is not supported")
    f.used.update({"prompt_length", "prompt_mid_dim"})  # read by the prompt modules only
    return read_causal(f, "MvpForCausalLM", {**_BART, "V": 50267})


def read_bigbird_pegasus(f: Fields):
    """transformers' BigBirdPegasusConfig, as BigBirdPegasusForCausalLM: pre-LN with a final
    LayerNorm (named layernorm_embedding), learned positions without offset, no attention biases,
    an LM head of its own. The decoder's self-attention is full attention (block-sparse attention
    is the encoder's)."""
    bias = f.bool("use_bias", False)
    defaults = {"V": 96103, "d": 1024, "L": 16, "h": 16, "d_ff": 4096, "T_max": 4096, "act": "gelu_new",
                "scale": True}
    name, flags, sizes = read_causal(f, "BigBirdPegasusForCausalLM", defaults, norm="pre", pos_offset=None,
                                     embed_norm="none", attn_bias=bias)
    flags["tied"] = False  # BigBirdPegasusForCausalLM declares no tied weights
    f.notes.append("BigBirdPegasusForCausalLM ties no weights: its lm_head is counted apart from the token table")
    return name, flags, sizes


def read_trocr(f: Fields):
    """transformers' TrOCRConfig, as TrOCRForCausalLM: post-LN; learned positions (offset 2) or
    fixed sinusoids; layernorm_embedding optional."""
    cross = f.int("cross_attention_hidden_size", None, optional=True)
    d = f.cfg.get("d_model", f.cfg.get("hidden_size", 1024))
    if cross is not None and cross != d:
        raise SymgptError(f"{f.where}: cross_attention_hidden_size {cross} differs from d_model: the held "
                          "cross-attention's key and value widths are not modelled")
    learned = f.bool("use_learned_position_embeddings", True)
    norm = f.bool("layernorm_embedding", True)
    return read_causal(f, "TrOCRForCausalLM", {**_BART, "T_max": 512},
                       positions="learned" if learned else "sinusoidal", embed_norm="after" if norm else "none")


#: WhisperConfig's fields read by the encoder, the audio classifier or generation only
_WHISPER_ELSEWHERE = {"num_mel_bins", "max_source_positions", "suppress_tokens", "begin_suppress_tokens",
                      "use_weighted_layer_sum", "classifier_proj_size", "apply_spec_augment", "mask_time_prob",
                      "mask_time_length", "mask_time_min_masks", "mask_feature_prob", "mask_feature_length",
                      "mask_feature_min_masks", "median_filter_width"}


def read_whisper(f: Fields):
    """transformers' WhisperConfig, as WhisperForCausalLM (the text decoder alone): pre-LN with a
    final LayerNorm, learned positions (max_target_positions rows, no offset), no embedding
    LayerNorm, every attention's k_proj without a bias, proj_out tied to the token table."""
    f.used.update(_WHISPER_ELSEWHERE)
    T_max = f.int("max_target_positions", 448)
    name, flags, sizes = read_causal(
        f, "WhisperForCausalLM", {"V": 51865, "d": 384, "L": 4, "h": 6, "d_ff": 1536, "T_max": T_max},
        norm="pre", pos_offset=None, embed_norm="none", k_bias=False)
    sizes["T_max"] = T_max  # the decoder's position table: max_target_positions rows
    return name, flags, sizes


READERS = {
    "mbart": Reader(read_mbart, ("MBartForCausalLM",)),
    "marian": Reader(read_marian, ("MarianForCausalLM",)),
    "pegasus": Reader(read_pegasus, ("PegasusForCausalLM",)),
    "blenderbot": Reader(read_blenderbot, ("BlenderbotForCausalLM",)),
    "blenderbot-small": Reader(read_blenderbot_small, ("BlenderbotSmallForCausalLM",)),
    "plbart": Reader(read_plbart, ("PLBartForCausalLM",)),
    "mvp": Reader(read_mvp, ("MvpForCausalLM",)),
    "bigbird_pegasus": Reader(read_bigbird_pegasus, ("BigBirdPegasusForCausalLM",)),
    "trocr": Reader(read_trocr, ("TrOCRForCausalLM",)),
}

PRESETS = ()

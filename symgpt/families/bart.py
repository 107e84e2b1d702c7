"""BART (Lewis et al. 2020): a post-LN encoder-decoder with learned positions (two rows of
offset), a LayerNorm of the embeddings, GELU and a tied head (``blocks/bart.py`` builds it; the
original Transformer, ``transformer.py``, is the same builder with other flags).

Only the classes the reader names are counted: ``BartForCausalLM`` (the decoder alone, with
cross-attention weights it does not run) is the ``seq2seq_decoder`` family, never counted as the
encoder-decoder."""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family, Preset
from .fields import Fields, Reader

FLAGS = {
    "positions": "learned",  # learned (BART, T_max + pos_offset rows per stack) | sinusoidal
    "pos_offset": 2,         # BART's two extra rows of each position table
    "embed_norm": True,      # a LayerNorm of the embeddings (layernorm_embedding)
    "embed_scale": False,    # token embeddings × √d (scale_embedding; the original Transformer)
    "activation": "gelu",    # gelu | gelu_tanh | relu | silu
    "tied": True,
    "head": "lm",             # lm (...ForConditionalGeneration) | none (...Model: the decoder's hidden states)
    "dropout": False,
    "loss": True,
}
CHOICES = {"head": ("lm", "none"), "positions": ("learned", "sinusoidal"),
           "activation": ("gelu", "gelu_tanh", "relu", "silu")}
FLAG_HELP = {
    "positions": "learned (a table of T_max + pos_offset rows per stack) or sinusoidal (no parameters)",
    "pos_offset": "extra rows of each learned position table (BART: 2)",
    "embed_norm": "a LayerNorm after the embeddings of each stack (BART's layernorm_embedding)",
    "embed_scale": "token embeddings are multiplied by sqrt(d) (scale_embedding)",
    "activation": "the FFN's activation: gelu (BART), relu (the original Transformer), ...",
    "tied": "the LM head shares the token embedding",
    "head": "lm (the LM head and loss: ForConditionalGeneration) or none (the bare Model)",
    "dropout": "dropout layers present (masks saved for backward)",
    "loss": "the graph ends in the cross-entropy loss over the T_dec positions",
}

#: the BART builder, shared with the original Transformer
BUILD = Ref("symgpt.families.blocks.bart", "build")

FAMILIES = (Family(
    name="bart", description="BART: post-LN encoder-decoder, learned positions (offset 2), GELU, tied head",
    flags=FLAGS, sizes=("L", "L_dec", "d", "h", "V", "d_ff", "T_max"), build=partial(BUILD, name="bart"),
    flag_help=FLAG_HELP, choices=CHOICES),)

#: the transformers class -> the head counted (the first is the default)
HEADS = {"BartForConditionalGeneration": "lm", "BartModel": "none"}


def read(f: Fields):
    """transformers' BartConfig (``BartForCausalLM``: its decoder alone, ``seq2seq_decoder.py``)."""
    if f.architecture == "BartForCausalLM":
        from .seq2seq_decoder import read_bart_causal

        return read_bart_causal(f)
    sizes = {"V": f.int("vocab_size", 50265), "d": f.aliased("d_model", "hidden_size", 1024),
             "L": f.aliased("encoder_layers", "num_hidden_layers", 12),
             "L_dec": f.int("decoder_layers", 12),
             "h": f.aliased("encoder_attention_heads", "num_attention_heads", 16),
             "d_ff": f.int("encoder_ffn_dim", 4096), "T_max": f.int("max_position_embeddings", 1024)}
    if f.int("decoder_attention_heads", 16) != sizes["h"] or f.int("decoder_ffn_dim", 4096) != sizes["d_ff"]:
        raise SymgptError(f"{f.where}: encoder and decoder with different heads or FFN widths are not "
                          "supported (one h and one d_ff)")
    for key, want in (("add_final_layer_norm", False), ("normalize_before", False), ("add_bias_logits", False),
                      ("normalize_embedding", True)):
        if f.bool(key, want) != want:
            raise SymgptError(f"{f.where}: {key}={str(not want).lower()} is not BART's architecture "
                              "(mBART-style variants are not supported)")
    f.used.update({"classif_dropout", "classifier_dropout", "encoder_layerdrop",
                   "decoder_layerdrop", "init_std", "gradient_checkpointing", "forced_bos_token_id",
                   "forced_eos_token_id", "early_stopping", "no_repeat_ngram_size", "num_beams"})
    flags = {"activation": f.activation("activation_function", "gelu"),
             "embed_scale": f.bool("scale_embedding", False),
             "tied": f.bool("tie_word_embeddings", True),
             "head": HEADS.get(f.architecture, "lm")}
    return "bart", flags, sizes


READERS = {"bart": Reader(read, (*HEADS, "BartForCausalLM"))}

PRESETS = (
    Preset("bart-base", "bart", {"L": 6, "L_dec": 6, "h": 12, "d": 768, "d_ff": 3072, "V": 50265, "T_max": 1024},
           flags={"head": "lm"},
           source="Lewis et al. 2020 (BART); facebook/bart-base its config.json on the Hugging Face Hub",
           note="counted as BartForConditionalGeneration (the tied LM head); the checkpoint's config "
                "names BartModel, which head=none counts (the same parameters: the head is tied)"),
)

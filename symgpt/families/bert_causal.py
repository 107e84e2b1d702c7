"""Encoder families run as causal LMs: transformers' ``ElectraForCausalLM``,
``MegatronBertForCausalLM``, ``XLMRobertaXLForCausalLM``, ``RobertaPreLayerNormForCausalLM`` and
``BertGenerationDecoder`` -- a BERT-style encoder (``blocks/bert.py``) and its LM head, the
attention run under a causal mask when the config says ``is_decoder`` (bidirectional otherwise):
the same parameters and matmuls either way.

* ELECTRA (Clark et al. 2020): embeddings of ``embedding_size`` projected to the hidden size, and
  the generator's head (dense to ``embedding_size``, GELU, LayerNorm, the tied decoder);
* Megatron-BERT (Shoeybi et al. 2019), XLM-RoBERTa-XL (Goyal et al. 2021) and RoBERTa-PreLayerNorm:
  pre-norm blocks and a final LayerNorm (the first two without a LayerNorm of the embeddings);
* BertGeneration (Rothe et al. 2020): no token types, and the tied decoder alone as its head.

Generation with a KV cache is not modelled for them: the answer says so."""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .bert import CHOICES as _BERT_CHOICES, FLAG_HELP as _BERT_HELP, FLAGS as _BERT_FLAGS
from .fields import NO_GENERATION, Fields, Reader

FLAGS = {**_BERT_FLAGS, "norm": "post", "embed_norm": True, "embed_dim": None}
CHOICES = {**_BERT_CHOICES, "head": ("mlm", "lm", "none"), "norm": ("post", "pre")}
FLAG_HELP = {
    **_BERT_HELP,
    "head": "mlm (dense, activation, LayerNorm, the tied decoder), lm (the tied decoder alone) or none",
    "norm": "post (a LayerNorm after each residual add) or pre (before each sublayer, and a final LayerNorm)",
    "embed_norm": "a LayerNorm of the embeddings",
    "embed_dim": "embedding width when it differs from d (ELECTRA's embedding_size): projected to d",
}


def _family(name, description, changes):
    return Family(
        name=name, description=description, flags={**FLAGS, **changes},
        sizes=("L", "d", "h", "V", "T_max"), optional=("d_ff",),
        build=partial(Ref("symgpt.families.blocks.bert", "build"), name=name),
        flag_help=FLAG_HELP, choices=CHOICES)


FAMILIES = (
    _family("electra", "ELECTRA run as a causal LM: narrow embeddings projected to d, the generator's head",
            {"embed_dim": 128, "head_activation": "gelu"}),
    _family("megatron_bert", "Megatron-BERT run as a causal LM: pre-LN blocks, a final LayerNorm",
            {"norm": "pre", "embed_norm": False}),
    _family("xlm_roberta_xl", "XLM-RoBERTa-XL run as a causal LM: pre-LN blocks, a final LayerNorm, "
            "positions offset by the padding index", {"norm": "pre", "embed_norm": False, "type_vocab": 1,
                                                      "pos_offset": 2, "head_activation": "gelu"}),
    _family("roberta_prelayernorm", "RoBERTa-PreLayerNorm run as a causal LM: pre-LN blocks, a final LayerNorm",
            {"norm": "pre", "pos_offset": 2, "head_activation": "gelu"}),
    _family("bert_generation", "BertGeneration's decoder: BERT without token types, the tied decoder as its head",
            {"type_vocab": None, "head": "lm"}),
)


def _note(f: Fields, cls: str) -> None:
    f.notes.append(f"{cls} runs this encoder as a causal LM (under a causal mask when is_decoder is set): "
                   f"parameters and FLOPs are counted; {NO_GENERATION} for it")


def _encoder(f: Fields, cls: str, D: dict) -> tuple[dict, dict]:
    """The fields these configurations share, with the class's defaults *D*."""
    sizes = {"V": f.int("vocab_size", D["V"]), "d": f.int("hidden_size", D["d"]),
             "L": f.int("num_hidden_layers", D["L"]), "h": f.int("num_attention_heads", D["h"]),
             "d_ff": f.int("intermediate_size", D["d_ff"]), "T_max": f.int("max_position_embeddings", D["T_max"])}
    if f.bool("add_cross_attention", False):
        raise SymgptError(f"{f.where}: add_cross_attention=true (cross-attention layers in {cls}) is not supported")
    if not f.bool("tie_word_embeddings", True):
        raise SymgptError(f"{f.where}: tie_word_embeddings=false ({cls} with an LM head of its own) is not supported")
    f.bool("is_decoder", False)  # a causal mask or none: the same parameters and matmuls
    flags = {"activation": f.activation("hidden_act", "gelu")}
    if "type_vocab" in D:
        types = f.int("type_vocab_size", D["type_vocab"], minimum=0)
        flags["type_vocab"] = types or None
    f.used.update({"gradient_checkpointing", "classifier_dropout", "hidden_dropout_prob",
                   "attention_probs_dropout_prob"})
    _note(f, cls)
    return flags, sizes


def read_electra(f: Fields):
    """transformers' ElectraConfig, as ElectraForCausalLM."""
    flags, sizes = _encoder(f, "ElectraForCausalLM", {"V": 30522, "d": 256, "L": 12, "h": 4, "d_ff": 1024,
                                                        "T_max": 512, "type_vocab": 2})
    e = f.int("embedding_size", 128)
    flags["embed_dim"] = None if e == sizes["d"] else e  # no embeddings_project when they agree
    f.used.update({"summary_type", "summary_use_proj", "summary_activation", "summary_last_dropout"})
    return "electra", flags, sizes


def read_megatron_bert(f: Fields):
    """transformers' MegatronBertConfig, as MegatronBertForCausalLM."""
    flags, sizes = _encoder(f, "MegatronBertForCausalLM", {"V": 29056, "d": 1024, "L": 24, "h": 16, "d_ff": 4096,
                                                             "T_max": 512, "type_vocab": 2})
    return "megatron_bert", flags, sizes


def _roberta_positions(f: Fields, flags: dict, sizes: dict, pad_default: int) -> None:
    # positions count from padding_idx + 1: the table keeps pad + 1 rows no token uses
    offset = f.int("pad_token_id", pad_default, minimum=0) + 1
    if sizes["T_max"] <= offset:
        raise SymgptError(f"{f.where}: max_position_embeddings must exceed pad_token_id + 1 = {offset}")
    sizes["T_max"] -= offset
    flags["pos_offset"] = offset


def read_xlm_roberta_xl(f: Fields):
    """transformers' XLMRobertaXLConfig, as XLMRobertaXLForCausalLM."""
    flags, sizes = _encoder(f, "XLMRobertaXLForCausalLM", {"V": 250880, "d": 2560, "L": 36, "h": 32,
                                                             "d_ff": 10240, "T_max": 514, "type_vocab": 1})
    _roberta_positions(f, flags, sizes, 1)
    return "xlm_roberta_xl", flags, sizes


def read_roberta_prelayernorm(f: Fields):
    """transformers' RobertaPreLayerNormConfig, as RobertaPreLayerNormForCausalLM."""
    flags, sizes = _encoder(f, "RobertaPreLayerNormForCausalLM", {"V": 50265, "d": 768, "L": 12, "h": 12,
                                                                    "d_ff": 3072, "T_max": 512, "type_vocab": 2})
    _roberta_positions(f, flags, sizes, 1)
    return "roberta_prelayernorm", flags, sizes


def read_bert_generation(f: Fields):
    """transformers' BertGenerationConfig, as BertGenerationDecoder."""
    flags, sizes = _encoder(f, "BertGenerationDecoder", {"V": 50358, "d": 1024, "L": 24, "h": 16, "d_ff": 4096,
                                                           "T_max": 512})
    return "bert_generation", flags, sizes


READERS = {
    "electra": Reader(read_electra, ("ElectraForCausalLM",)),
    "megatron-bert": Reader(read_megatron_bert, ("MegatronBertForCausalLM",)),
    "xlm-roberta-xl": Reader(read_xlm_roberta_xl, ("XLMRobertaXLForCausalLM",)),
    "roberta-prelayernorm": Reader(read_roberta_prelayernorm, ("RobertaPreLayerNormForCausalLM",)),
    "bert-generation": Reader(read_bert_generation, ("BertGenerationDecoder",)),
}

PRESETS = ()

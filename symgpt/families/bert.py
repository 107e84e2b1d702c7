"""BERT-style encoders: BERT, RoBERTa, DistilBERT (Devlin et al. 2019; Liu et al. 2019; Sanh et al.
2019): bidirectional post-norm blocks, learned positions, and the head the ``head`` flag names
(``blocks/bert.py`` builds them). The head read from a config.json follows the transformers class
its ``architectures`` field names."""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family, Preset
from .fields import NO_GENERATION, Fields, Reader

HEADS = ("mlm", "pooler", "none")

FLAGS = {
    "head": "mlm",          # mlm | pooler | none
    "type_vocab": 2,        # rows of the token-type table (None: no token types, DistilBERT)
    "pos_offset": None,     # extra rows of the position table (RoBERTa: 2, its padding offset)
    "activation": "gelu",   # gelu | gelu_tanh | relu | silu
    "head_activation": None,  # the MLM transform's activation when it differs (RoBERTa: always gelu)
    "dropout": False,
}
CHOICES = {"head": HEADS, "activation": ("gelu", "gelu_tanh", "relu", "silu"),
           "head_activation": ("gelu", "gelu_tanh", "relu", "silu")}
FLAG_HELP = {
    "head": "mlm (masked-LM head, tied decoder), pooler (BertModel's pooler) or none",
    "type_vocab": "rows of the token-type (segment) embedding table; unset: none (DistilBERT)",
    "pos_offset": "extra rows of the learned position table (RoBERTa: 2)",
    "activation": "the FFN's activation (and the MLM transform's unless head_activation says)",
    "head_activation": "the MLM transform's activation when it differs from the FFN's",
    "dropout": "dropout layers present (masks saved for backward)",
}


def _family(name, description, changes, builds=None):
    """A BERT-style family; *builds* names the graph it is when that is another family's under
    another name (CamemBERT is RoBERTa's: its node names and position ids)."""
    return Family(
        name=name, description=description, flags={**FLAGS, **changes},
        sizes=("L", "d", "h", "V", "T_max"), optional=("d_ff",),
        build=partial(Ref("symgpt.families.blocks.bert", "build"), name=builds or name),
        flag_help=FLAG_HELP, choices=CHOICES)


_ROBERTA = {"type_vocab": 1, "pos_offset": 2, "head_activation": "gelu"}


FAMILIES = (
    _family("bert", "BERT: bidirectional post-LN encoder, token-type embeddings, masked-LM head or pooler", {}),
    _family("roberta", "RoBERTa: BERT with one token type and a position table offset by 2", _ROBERTA),
    _family("distilbert", "DistilBERT: BERT without token types or pooler", {"type_vocab": None}),
    # RoBERTa's architecture under other names (transformers' Camembert*, XLMRoberta*, Data2VecText*
    # classes are RoBERTa's, copied): CamemBERT (Martin et al. 2020), XLM-R (Conneau et al. 2020),
    # data2vec's text model (Baevski et al. 2022); ERNIE (Sun et al. 2019) is BERT's
    _family("camembert", "CamemBERT: RoBERTa's architecture (French)", _ROBERTA, builds="roberta"),
    _family("xlm-roberta", "XLM-RoBERTa: RoBERTa's architecture (multilingual)", _ROBERTA, builds="roberta"),
    _family("data2vec-text", "data2vec (text): RoBERTa's architecture", _ROBERTA, builds="roberta"),
    _family("ernie", "ERNIE: BERT's architecture (no task-type embeddings unless use_task_id)", {}, builds="bert"),
)

#: the transformers class -> the head counted, for each model type (the first is the default)
#: the classes counted, and the head each has. BertLMHeadModel and RobertaForCausalLM are the same
#: encoder and MLM head run under a causal mask (``is_decoder``): the same parameters and matmuls
BERT_HEADS = {"BertForMaskedLM": "mlm", "BertModel": "pooler", "BertLMHeadModel": "mlm"}
ROBERTA_HEADS = {"RobertaForMaskedLM": "mlm", "RobertaModel": "pooler", "RobertaForCausalLM": "mlm"}
#: the same heads under the names of the types that are RoBERTa's or BERT's architecture
CAMEMBERT_HEADS = {"CamembertForMaskedLM": "mlm", "CamembertModel": "pooler", "CamembertForCausalLM": "mlm"}
XLM_ROBERTA_HEADS = {"XLMRobertaForMaskedLM": "mlm", "XLMRobertaModel": "pooler", "XLMRobertaForCausalLM": "mlm"}
DATA2VEC_TEXT_HEADS = {"Data2VecTextForMaskedLM": "mlm", "Data2VecTextModel": "pooler",
                       "Data2VecTextForCausalLM": "mlm"}
ERNIE_HEADS = {"ErnieForMaskedLM": "mlm", "ErnieModel": "pooler", "ErnieForCausalLM": "mlm"}
#: causal-LM classes of an encoder family: counted, but generation with a KV cache is not modelled
CAUSAL_HEADS = frozenset({"BertLMHeadModel", "RobertaForCausalLM", "CamembertForCausalLM", "XLMRobertaForCausalLM",
                          "Data2VecTextForCausalLM", "ErnieForCausalLM"})
DISTILBERT_HEADS = {"DistilBertForMaskedLM": "mlm", "DistilBertModel": "none"}


def _bert_like(f: Fields, defaults: dict) -> tuple[dict, dict]:
    sizes = {"V": f.int("vocab_size", defaults["V"]), "d": f.int("hidden_size", 768),
             "L": f.int("num_hidden_layers", 12), "h": f.int("num_attention_heads", 12),
             "d_ff": f.int("intermediate_size", 3072), "T_max": f.int("max_position_embeddings", 512)}
    kind = f.str("position_embedding_type", "absolute", optional=True)
    if kind not in (None, "absolute"):
        raise SymgptError(f"{f.where}: position_embedding_type {kind!r} is not supported (absolute only)")
    if f.bool("is_decoder", False) or f.bool("add_cross_attention", False):
        raise SymgptError(f"{f.where}: a BERT-style decoder (is_decoder / add_cross_attention) is not supported")
    types = f.int("type_vocab_size", 2, minimum=0)
    if not f.bool("tie_word_embeddings", True):
        raise SymgptError(f"{f.where}: tie_word_embeddings=false (an MLM decoder of its own) is not modelled")
    flags = {"activation": f.activation("hidden_act", "gelu"), "type_vocab": types or None}
    f.used.update({"gradient_checkpointing", "classifier_dropout", "hidden_dropout_prob",
                   "attention_probs_dropout_prob"})
    return flags, sizes


def read_bert(f: Fields):
    """transformers' BertConfig."""
    flags, sizes = _bert_like(f, {"V": 30522})
    flags["head"] = BERT_HEADS.get(f.architecture, "mlm")
    _causal_note(f)
    return "bert", flags, sizes


def _causal_note(f: Fields) -> None:
    if f.architecture in CAUSAL_HEADS:
        f.notes.append(f"{f.architecture} runs this encoder under a causal mask: parameters and "
                       f"FLOPs are counted; {NO_GENERATION} for it")


def read_ernie(f: Fields):
    """transformers' ErnieConfig: BertConfig's fields and the task-type embedding (``use_task_id``)."""
    flags, sizes = _bert_like(f, {"V": 30522})
    f.int("task_type_vocab_size", 3)
    if f.bool("use_task_id", False):
        raise SymgptError(f"{f.where}: use_task_id=true (ERNIE's task-type embedding table) is not modelled")
    flags["head"] = ERNIE_HEADS.get(f.architecture, "mlm")
    _causal_note(f)
    return "ernie", flags, sizes


def read_roberta(f: Fields, name="roberta", heads=ROBERTA_HEADS, vocab=50265):
    """transformers' RobertaConfig (and the configuration classes that copy it, with their own
    vocabulary default)."""
    flags, sizes = _bert_like(f, {"V": vocab})
    # positions count from padding_idx + 1: the table keeps pad + 1 rows no token uses
    offset = f.int("pad_token_id", 1, minimum=0) + 1
    if sizes["T_max"] <= offset:
        raise SymgptError(f"{f.where}: max_position_embeddings must exceed pad_token_id + 1 = {offset}")
    sizes["T_max"] -= offset
    flags["pos_offset"] = offset
    flags["head"] = heads.get(f.architecture, "mlm")
    _causal_note(f)
    return name, flags, sizes


def read_camembert(f: Fields):
    """transformers' CamembertConfig."""
    return read_roberta(f, "camembert", CAMEMBERT_HEADS, 30522)


def read_xlm_roberta(f: Fields):
    """transformers' XLMRobertaConfig."""
    return read_roberta(f, "xlm-roberta", XLM_ROBERTA_HEADS, 30522)


def read_data2vec_text(f: Fields):
    """transformers' Data2VecTextConfig."""
    return read_roberta(f, "data2vec-text", DATA2VEC_TEXT_HEADS, 30522)


def read_distilbert(f: Fields):
    """transformers' DistilBertConfig."""
    sizes = {"V": f.int("vocab_size", 30522), "d": f.int("dim", 768), "L": f.int("n_layers", 6),
             "h": f.int("n_heads", 12), "d_ff": f.int("hidden_dim", 3072),
             "T_max": f.int("max_position_embeddings", 512)}
    f.bool("sinusoidal_pos_embds", False)  # fixed values in the same (T_max, d) parameter: same count
    f.bool("tie_weights_", True)
    f.used.update({"qa_dropout", "seq_classif_dropout"})
    flags = {"activation": f.activation("activation", "gelu"),
             "head": DISTILBERT_HEADS.get(f.architecture, "mlm")}
    return "distilbert", flags, sizes


READERS = {"bert": Reader(read_bert, tuple(BERT_HEADS)),
           "roberta": Reader(read_roberta, tuple(ROBERTA_HEADS)),
           "distilbert": Reader(read_distilbert, tuple(DISTILBERT_HEADS)),
           "camembert": Reader(read_camembert, tuple(CAMEMBERT_HEADS)),
           "xlm-roberta": Reader(read_xlm_roberta, tuple(XLM_ROBERTA_HEADS)),
           "data2vec-text": Reader(read_data2vec_text, tuple(DATA2VEC_TEXT_HEADS)),
           "ernie": Reader(read_ernie, tuple(ERNIE_HEADS))}

_HF = "its config.json on the Hugging Face Hub"

PRESETS = (
    Preset("bert-base", "bert", {"L": 12, "h": 12, "d": 768, "d_ff": 3072, "V": 30522, "T_max": 512},
           flags={"head": "mlm"},
           source="Devlin et al. 2019 (BERT), Sec. 3; google-bert/bert-base-uncased " + _HF,
           note="BertForMaskedLM (the masked-LM head, decoder tied to the token embedding); the paper "
                "says 110M; head=pooler counts BertModel (109,482,240)"),
    Preset("roberta-base", "roberta", {"L": 12, "h": 12, "d": 768, "d_ff": 3072, "V": 50265, "T_max": 512},
           flags={"head": "mlm", "type_vocab": 1, "pos_offset": 2},
           source="Liu et al. 2019 (RoBERTa); FacebookAI/roberta-base " + _HF,
           note="the position table has T_max + 2 = 514 rows (positions start after the padding index)"),
    Preset("distilbert-base", "distilbert", {"L": 6, "h": 12, "d": 768, "d_ff": 3072, "V": 30522, "T_max": 512},
           flags={"head": "mlm"},
           source="Sanh et al. 2019 (DistilBERT); distilbert/distilbert-base-uncased " + _HF),
)

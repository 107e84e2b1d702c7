"""More encoders run as causal LMs: transformers' ``RoFormerForCausalLM``, ``RemBertForCausalLM``,
``RoCBertForCausalLM``, ``XmodForCausalLM``, ``BigBirdForCausalLM`` and ``XLMWithLMHeadModel`` -- a BERT-style encoder
(``blocks/bert.py``) and its masked-LM head, under a causal mask when the config says
``is_decoder`` (bidirectional otherwise): the same parameters and matmuls either way.

* RoFormer (Su et al. 2021): no learned positions; rotary embeddings on the queries and keys
  (interleaved pairs) from a (max_position_embeddings, d_head) table of sinusoids that
  transformers keeps as a frozen parameter (``RoFormerSinusoidalPositionalEmbedding``), counted;
* RemBERT (Chung et al. 2021): embeddings of ``input_embedding_size`` always mapped to d
  (``embedding_hidden_mapping_in``), and a head of ``output_embedding_size`` with a decoder of its own;
* RoCBert (Su et al. 2022): shape and pronunciation embeddings concatenated with the token
  embeddings and mapped to d (``map_inputs_layer``);
* X-MOD (Pfeiffer et al. 2022): a language adapter after each FFN; every language the config
  lists holds one (counted), each token runs its language's (the work of one);
* BigBird (Zaheer et al. 2020): at T at most (5 + 2 num_random_blocks) block_size transformers
  runs full attention (modelled); past it block-sparse attention (refused). BigBirdModel's pooler
  runs under the LM head too;
* XLM (Lample & Conneau 2019), as ``XLMWithLMHeadModel``: post-LN blocks of FFN width 4d, no
  token types, the tied decoder (``pred_layer.proj``) alone as its head; the language embedding
  (n_langs > 1) is counted and runs only when ``langs`` are passed.

Generation with a KV cache is not modelled for them: the answer says so."""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .bert_causal import CHOICES as _CHOICES, FLAG_HELP as _HELP, FLAGS as _FLAGS
from .fields import NO_GENERATION, Fields, Reader

CHOICES = {**_CHOICES, "activation": (*_CHOICES["activation"], "gelu_new"),
           "head_activation": (*_CHOICES["head_activation"], "gelu_new"),
           "positions": ("learned", "rotary"), "adapter_norm": ("reuse", "own", "none")}
FLAG_HELP = {
    **_HELP,
    "positions": "learned (a position table added to the embeddings) or rotary (RoFormer: RoPE on Q and K "
                 "from a (T_max, d_head) table of sinusoids kept as a parameter)",
    "embed_project": "the embeddings are projected to d even when their width is d (RemBERT)",
    "head_dim": "the masked-LM head's width when it differs from the embeddings' (RemBERT's output_embedding_size)",
    "tied": "the head's decoder is tied to the token embeddings",
    "pooler": "BertModel's pooler runs too (its output unused by the LM head: BigBird)",
    "embed_scale": "the token embeddings are multiplied by sqrt(d) (BigBird's rescale_embeddings)",
    "qkv_bias": "the Q, K, V projections have biases",
    "block_sparse": "the longest T run with full attention (BigBird); past it block-sparse attention, refused",
    "extra_embeds": "RoCBert's shape and pronunciation embeddings, concatenated and mapped to d",
    "shape_vocab": "rows of RoCBert's shape embedding", "shape_dim": "width of RoCBert's shape embedding",
    "pron_vocab": "rows of RoCBert's pronunciation embedding",
    "pron_dim": "width of RoCBert's pronunciation embedding",
    "shape_run": "the shape embedding is run (enable_shape); otherwise held",
    "pron_run": "the pronunciation embedding is run (enable_pronunciation); otherwise held",
    "held_langs": "rows of XLM's language embedding, held and not run (added only when langs are passed)",
    "adapters": "X-MOD's language adapters per layer (one per language; one runs per token)",
    "adapter_dim": "the adapters' bottleneck width, d // adapter_reduction_factor",
    "adapter_norm": "the LayerNorm before the adapter: the output's own reused, one of its own, or none",
    "adapter_ln_first": "the adapter's residual is taken after its LayerNorm (ln_before_adapter)",
}


def _family(name, description, changes):
    return Family(
        name=name, description=description, flags={**_FLAGS, **changes},
        sizes=("L", "d", "h", "V", "T_max"), optional=("d_ff",),
        build=partial(Ref("symgpt.families.blocks.bert", "build"), name=name),
        flag_help=FLAG_HELP, choices=CHOICES)


FAMILIES = (
    _family("roformer", "RoFormer run as a causal LM: rotary positions from a sinusoid parameter table",
            {"positions": "rotary"}),
    _family("rembert", "RemBERT run as a causal LM: narrow input embeddings mapped to d, a wide untied head",
            {"embed_dim": 256, "embed_project": True, "head_dim": 1664, "tied": False}),
    _family("roc_bert", "RoCBert run as a causal LM: shape and pronunciation embeddings concatenated, mapped to d",
            {"extra_embeds": True, "shape_vocab": 24858, "shape_dim": 512, "pron_vocab": 910, "pron_dim": 768,
             "shape_run": True, "pron_run": True}),
    _family("xmod", "X-MOD run as a causal LM: a language adapter after each FFN, positions offset by the padding "
            "index", {"type_vocab": 2, "pos_offset": 2, "head_activation": "gelu", "adapters": 1, "adapter_dim": 384,
                      "adapter_norm": "reuse", "adapter_ln_first": True}),
    _family("big_bird", "BigBird run as a causal LM at lengths where it runs full attention; the pooler runs too",
            {"activation": "gelu_new", "pooler": True, "embed_scale": False, "qkv_bias": True, "block_sparse": 704}),
    _family("xlm", "XLM run as a causal LM: BERT-style post-LN blocks without token types, FFN 4d, the tied "
            "decoder alone as its head", {"type_vocab": None, "head": "lm", "held_langs": None}),
)


def _note(f: Fields, cls: str) -> None:
    f.notes.append(f"{cls} runs this encoder as a causal LM (under a causal mask when is_decoder is set): "
                   f"parameters and FLOPs are counted; {NO_GENERATION} for it")


def _encoder(f: Fields, cls: str, D: dict, tied_only: bool = True) -> tuple[dict, dict]:
    """The fields these configurations share, with the class's defaults *D*."""
    sizes = {"V": f.int("vocab_size", D["V"]), "d": f.int("hidden_size", D["d"]),
             "L": f.int("num_hidden_layers", D["L"]), "h": f.int("num_attention_heads", D["h"]),
             "d_ff": f.int("intermediate_size", D["d_ff"]), "T_max": f.int("max_position_embeddings", D["T_max"])}
    if f.bool("add_cross_attention", False):
        raise SymgptError(f"{f.where}: add_cross_attention=true (cross-attention layers in {cls}) is not supported")
    if tied_only and not f.bool("tie_word_embeddings", True):
        raise SymgptError(f"{f.where}: tie_word_embeddings=false ({cls} with an LM head of its own) is not supported")
    f.bool("is_decoder", False)  # a causal mask or none: the same parameters and matmuls
    types = f.int("type_vocab_size", 2, minimum=0)
    flags = {"activation": f.activation("hidden_act", D.get("act", "gelu")), "type_vocab": types or None}
    f.silent("gradient_checkpointing", "classifier_dropout", "classifier_dropout_prob", "hidden_dropout_prob",
             "attention_probs_dropout_prob")
    _note(f, cls)
    return flags, sizes


def read_roformer(f: Fields):
    """transformers' RoFormerConfig, as RoFormerForCausalLM."""
    flags, sizes = _encoder(f, "RoFormerForCausalLM", {"V": 50000, "d": 768, "L": 12, "h": 12, "d_ff": 3072,
                                                         "T_max": 1536})
    e = f.int("embedding_size", None, optional=True)
    flags["embed_dim"] = None if e is None or e == sizes["d"] else e  # embeddings_project only when they differ
    if f.bool("rotary_value", False):
        raise SymgptError(f"{f.where}: rotary_value=true (RoPE on the values too) is not supported")
    return "roformer", flags, sizes


def read_rembert(f: Fields):
    """transformers' RemBertConfig, as RemBertForCausalLM."""
    flags, sizes = _encoder(f, "RemBertForCausalLM", {"V": 250300, "d": 1152, "L": 32, "h": 18, "d_ff": 4608,
                                                        "T_max": 512}, tied_only=False)
    flags["embed_dim"] = f.int("input_embedding_size", 256)
    flags["head_dim"] = f.int("output_embedding_size", 1664)
    # RemBertForCausalLM declares no tied weights: its decoder is its own whatever tie_word_embeddings says
    f.bool("tie_word_embeddings", False)
    flags["tied"] = False
    return "rembert", flags, sizes


def read_roc_bert(f: Fields):
    """transformers' RoCBertConfig, as RoCBertForCausalLM."""
    flags, sizes = _encoder(f, "RoCBertForCausalLM", {"V": 30522, "d": 768, "L": 12, "h": 12, "d_ff": 3072,
                                                        "T_max": 512})
    if not f.bool("concat_input", True):
        raise SymgptError(f"{f.where}: concat_input=false (RoCBert's averaged embeddings) is not supported")
    flags.update(shape_vocab=f.int("shape_vocab_size", 24858), shape_dim=f.int("shape_embed_dim", 512),
                 pron_vocab=f.int("pronunciation_vocab_size", 910),
                 pron_dim=f.int("pronunciation_embed_dim", 768),
                 shape_run=f.bool("enable_shape", True), pron_run=f.bool("enable_pronunciation", True))
    return "roc_bert", flags, sizes


def read_xmod(f: Fields):
    """transformers' XmodConfig, as XmodForCausalLM."""
    flags, sizes = _encoder(f, "XmodForCausalLM", {"V": 30522, "d": 768, "L": 12, "h": 12, "d_ff": 3072,
                                                     "T_max": 512})
    if f.bool("pre_norm", False):
        raise SymgptError(f"{f.where}: pre_norm=true (X-MOD's pre-LN blocks) is not supported")
    offset = f.int("pad_token_id", 1, minimum=0) + 1  # positions count from padding_idx + 1, as RoBERTa's
    if sizes["T_max"] <= offset:
        raise SymgptError(f"{f.where}: max_position_embeddings must exceed pad_token_id + 1 = {offset}")
    sizes["T_max"] -= offset
    flags["pos_offset"] = offset
    langs, _ = f.get("languages", ["en_XX"])
    if not isinstance(langs, (list, tuple)) or not langs or not all(isinstance(x, str) for x in langs):
        raise SymgptError(f"{f.where}: field 'languages' must be a non-empty list of language names")
    flags["adapters"] = len(dict.fromkeys(langs))  # an nn.ModuleDict: a repeated name is one adapter
    factor = f.int("adapter_reduction_factor", 2)
    if sizes["d"] // factor < 1:
        raise SymgptError(f"{f.where}: hidden_size // adapter_reduction_factor must be positive")
    flags["adapter_dim"] = sizes["d"] // factor
    own = f.bool("adapter_layer_norm", False)
    reuse = f.bool("adapter_reuse_layer_norm", True)
    flags["adapter_norm"] = "own" if own else "reuse" if reuse else "none"
    flags["adapter_ln_first"] = f.bool("ln_before_adapter", True)
    default = f.str("default_language", None, optional=True)
    if default is not None and default not in langs:
        raise SymgptError(f"{f.where}: default_language {default!r} is not one of languages")
    f.notes.append(f"X-MOD: the adapters of all {flags['adapters']} language(s) are counted; each token runs "
                   "its language's adapter (the same work for any language)")
    return "xmod", flags, sizes


def read_big_bird(f: Fields):
    """transformers' BigBirdConfig, as BigBirdForCausalLM."""
    flags, sizes = _encoder(f, "BigBirdForCausalLM", {"V": 50358, "d": 768, "L": 12, "h": 12, "d_ff": 3072,
                                                        "T_max": 4096, "act": "gelu_new"})
    kind = f.str("attention_type", "block_sparse")
    if kind not in ("block_sparse", "original_full"):
        raise SymgptError(f"{f.where}: attention_type {kind!r} is not one of block_sparse, original_full")
    block, rand = f.int("block_size", 64), f.int("num_random_blocks", 3, minimum=0)
    flags["block_sparse"] = (5 + 2 * rand) * block if kind == "block_sparse" else None
    flags["qkv_bias"] = f.bool("use_bias", True)
    flags["embed_scale"] = f.bool("rescale_embeddings", False)
    if kind == "block_sparse":
        f.notes.append(f"BigBird: full attention is counted, as transformers runs it up to T = {flags['block_sparse']} "
                       "((5 + 2 num_random_blocks) block_size); block-sparse attention past it is not modelled")
    return "big_bird", flags, sizes


def read_xlm(f: Fields):
    """transformers' XLMConfig, as XLMWithLMHeadModel."""
    f.rename({"hidden_size": "emb_dim", "num_attention_heads": "n_heads", "num_hidden_layers": "n_layers",
              "n_words": "vocab_size"})
    sizes = {"V": f.int("vocab_size", 30145), "d": f.int("emb_dim", 2048), "L": f.int("n_layers", 12),
             "h": f.int("n_heads", 16), "T_max": f.int("max_position_embeddings", 512)}
    if not f.bool("is_encoder", True):
        raise SymgptError(f"{f.where}: is_encoder=false (XLM as a decoder: transformers refuses it) is not supported")
    if f.bool("asm", False):
        raise SymgptError(f"{f.where}: asm=true (XLM's adaptive softmax head) is not supported")
    f.bool("causal", False)  # a causal mask or none: the same parameters and matmuls
    f.bool("sinusoidal_embeddings", False)  # fixed values in the same (T_max, d) parameter: the same count
    if not f.bool("tie_word_embeddings", True):
        raise SymgptError(f"{f.where}: tie_word_embeddings=false (XLMPredLayer with a matrix of its own) is not "
                          "supported")
    langs = f.int("n_langs", 1)
    flags = {"activation": "gelu" if f.bool("gelu_activation", True) else "relu",
             "held_langs": langs if langs > 1 and f.bool("use_lang_emb", True) else None}
    f.silent("use_lang_emb", "embed_init_std", "unk_index", "mask_index", "start_n_top", "end_n_top",
             "mask_token_id", "lang_id", "lang2id", "id2lang", "asm_cutoffs", "asm_div_value", "gradient_checkpointing",
             "n_langs")
    f.notes.append("XLMWithLMHeadModel runs this encoder as a causal LM (under a causal mask when causal is set): "
                   f"parameters and FLOPs are counted; {NO_GENERATION} for it")
    if flags["held_langs"]:
        f.notes.append(f"XLM: the language embedding ({langs} rows) is counted; it runs only when langs are passed "
                       "(not modelled: an added lookup, no FLOPs)")
    return "xlm", flags, sizes


READERS = {
    "roformer": Reader(read_roformer, ("RoFormerForCausalLM",)),
    "rembert": Reader(read_rembert, ("RemBertForCausalLM",)),
    "roc_bert": Reader(read_roc_bert, ("RoCBertForCausalLM",)),
    "xmod": Reader(read_xmod, ("XmodForCausalLM",)),
    "big_bird": Reader(read_big_bird, ("BigBirdForCausalLM",)),
    "xlm": Reader(read_xlm, ("XLMWithLMHeadModel",)),
}

PRESETS = ()

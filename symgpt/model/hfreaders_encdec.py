"""What the config.json fields of encoders, encoder--decoders and the Vision Transformer mean: one
reader per ``model_type`` (``bert``, ``roberta``, ``distilbert``, ``t5``, ``bart``, ``vit``), as in
``hfreaders``. Defaults are transformers' (5.x configuration classes).

The head counted follows the class the config's ``architectures`` field names (``BertForMaskedLM``
-> the masked-LM head, ``BertModel`` -> the pooler, ``T5ForConditionalGeneration`` -> the LM head,
``ViTForImageClassification`` -> the classifier, ...); a class with a head symgpt does not model is
counted as the nearest one, with a note. ``--head`` (the ``head`` flag) overrides it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.errors import SymgptError

if TYPE_CHECKING:
    from .hfconfig import Fields


def _head(f: Fields, table: dict[str, str], default: str) -> str:
    """The head the ``architectures`` field names (its first class), from *table*."""
    arch = f.cfg.get("architectures")
    if arch is None:
        return default
    if not isinstance(arch, list) or not arch or not all(isinstance(a, str) for a in arch):
        raise SymgptError(f"{f.where}: field 'architectures' must be a list of class names")
    name = arch[0]
    if name in table:
        return table[name]
    f.notes.append(f"architectures {name[:60]!r}: its task head is not modelled; counted "
                   f"with head={default} (set --head to choose)")
    return default


def _aliased(f: Fields, key: str, alias: str, default):
    """An integer field that transformers also accepts under *alias* (its ``attribute_map``): the
    alias, when present, wins whatever the order (T5's ``num_hidden_layers`` sets ``num_layers``)."""
    if alias in f.cfg:
        f.used.add(key)
        return f.int(alias, default)
    return f.int(key, default)


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
    flags = {"activation": f.activation("hidden_act", "gelu"), "type_vocab": types or None}
    f.used.update({"gradient_checkpointing", "classifier_dropout", "hidden_dropout_prob",
                   "attention_probs_dropout_prob"})
    return flags, sizes


def bert(f: Fields):
    flags, sizes = _bert_like(f, {"V": 30522})
    flags["head"] = _head(f, {"BertForMaskedLM": "mlm", "BertModel": "pooler"},
                          "mlm")
    return "bert", flags, sizes


def roberta(f: Fields):
    flags, sizes = _bert_like(f, {"V": 50265})
    # positions count from padding_idx + 1: the table keeps pad + 1 rows no token uses
    offset = f.int("pad_token_id", 1, minimum=0) + 1
    if sizes["T_max"] <= offset:
        raise SymgptError(f"{f.where}: max_position_embeddings must exceed pad_token_id + 1 = {offset}")
    sizes["T_max"] -= offset
    flags["pos_offset"] = offset
    flags["head"] = _head(f, {"RobertaForMaskedLM": "mlm", "RobertaModel": "pooler"}, "mlm")
    return "roberta", flags, sizes


def distilbert(f: Fields):
    sizes = {"V": f.int("vocab_size", 30522), "d": f.int("dim", 768), "L": f.int("n_layers", 6),
             "h": f.int("n_heads", 12), "d_ff": f.int("hidden_dim", 3072),
             "T_max": f.int("max_position_embeddings", 512)}
    f.bool("sinusoidal_pos_embds", False)  # fixed values in the same (T_max, d) parameter: same count
    f.bool("tie_weights_", True)
    f.used.update({"qa_dropout", "seq_classif_dropout"})
    flags = {"activation": f.activation("activation", "gelu"),
             "head": _head(f, {"DistilBertForMaskedLM": "mlm", "DistilBertModel": "none"}, "mlm")}
    return "distilbert", flags, sizes


def t5(f: Fields):
    layers = _aliased(f, "num_layers", "num_hidden_layers", 6)
    sizes = {"V": f.int("vocab_size", 32128), "d": _aliased(f, "d_model", "hidden_size", 512),
             "d_head": _aliased(f, "d_kv", "head_dim", 64), "d_ff": f.int("d_ff", 2048), "L": layers,
             "h": _aliased(f, "num_heads", "num_attention_heads", 8)}
    dec = f.int("num_decoder_layers", None, optional=True)
    sizes["L_dec"] = dec if dec is not None else layers
    proj = f.str("feed_forward_proj", "relu")
    parts = proj.split("-")
    if len(parts) > 2 or (len(parts) == 2 and parts[0] != "gated"):
        raise SymgptError(f"{f.where}: feed_forward_proj {proj!r} is not 'ACT' or 'gated-ACT'")
    act = "gelu_new" if proj == "gated-gelu" else parts[-1]  # transformers' backward-compatible reading
    f.used.update({"dense_act_fn", "is_gated_act", "n_positions", "relative_attention_max_distance",
                   "dropout_rate", "initializer_factor", "output_past", "classifier_dropout"})
    tie = f.bool("tie_word_embeddings", None)
    # transformers' "gelu_new" is its own composite tanh-GELU (same function, more tensors saved)
    flags = {"ffn": "gated" if len(parts) == 2 else "mlp",
             "activation": "gelu_new" if act == "gelu_new" else f.activation_named("feed_forward_proj", act),
             "buckets": f.int("relative_attention_num_buckets", 32),
             # tie_word_embeddings=false: an own LM head (config.json and the checkpoint) and no rescale
             "tied": tie is not False, "head_scale": tie is not False,
             "head": _head(f, {"T5ForConditionalGeneration": "lm", "T5Model": "none"}, "lm")}
    if tie is False:
        f.notes.append("tie_word_embeddings=false: the LM head is its own V x d matrix, as config.json says "
                       "and the checkpoint holds; transformers 5's T5ForConditionalGeneration ties it to the "
                       "shared embedding whatever the field says (only the d^-1/2 rescale goes): set "
                       "tied=true to count that model")
    return "t5", flags, sizes


def bart(f: Fields):
    sizes = {"V": f.int("vocab_size", 50265), "d": _aliased(f, "d_model", "hidden_size", 1024),
             "L": _aliased(f, "encoder_layers", "num_hidden_layers", 12),
             "L_dec": f.int("decoder_layers", 12),
             "h": _aliased(f, "encoder_attention_heads", "num_attention_heads", 16),
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
             "head": _head(f, {"BartForConditionalGeneration": "lm", "BartModel": "none"}, "lm")}
    return "bart", flags, sizes


def vit(f: Fields):
    sizes = {"d": f.int("hidden_size", 768), "L": f.int("num_hidden_layers", 12),
             "h": f.int("num_attention_heads", 12), "d_ff": f.int("intermediate_size", 3072),
             "S_img": f.int("image_size", 224), "P_patch": f.int("patch_size", 16), "C_img": f.int("num_channels", 3)}
    head = _head(f, {"ViTForImageClassification": "classifier", "ViTModel": "pooler"}, "classifier")
    if head == "classifier":
        labels = f.cfg.get("id2label")
        f.used.update({"id2label", "label2id"})
        if isinstance(labels, dict) and labels:
            sizes["N_cls"] = len(labels)
        else:
            sizes["N_cls"] = f.int("num_labels", 2)
    pooled = f.int("pooler_output_size", None, optional=True)
    if pooled not in (None, sizes["d"]):
        raise SymgptError(f"{f.where}: a pooler of width {pooled} != hidden_size is not supported")
    f.str("pooler_act", "tanh", optional=True)
    f.used.update({"encoder_stride", "hidden_dropout_prob", "attention_probs_dropout_prob", "num_labels"})
    flags = {"head": head, "qkv_bias": f.bool("qkv_bias", True), "activation": f.activation("hidden_act", "gelu")}
    return "vit", flags, sizes


#: model_type -> reader(fields) -> (family, flags, sizes)
READERS = {"bert": bert, "roberta": roberta, "distilbert": distilbert, "t5": t5, "bart": bart, "vit": vit}

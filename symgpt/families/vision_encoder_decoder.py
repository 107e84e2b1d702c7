"""transformers' ``VisionEncoderDecoderModel`` with a ViT encoder and a BERT decoder with
cross-attention (``blocks/vision_encoder_decoder.py`` builds it). T = (S_img/P_patch)² + 1
image positions in the encoder, T_dec tokens in the decoder. Other encoder or decoder types are
refused."""

from __future__ import annotations

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader, note_leftovers, sub_fields

_ACTS = ("gelu", "gelu_tanh", "relu", "silu")
FAMILIES = (Family(
    name="vision-encoder-decoder",
    description="VisionEncoderDecoderModel: a ViT encoder (with pooler) and a BERT decoder with cross-attention",
    flags={"qkv_bias": True, "activation": "gelu", "decoder_activation": "gelu", "type_vocab": 2,
           "dropout": False, "loss": True},
    sizes=("L", "L_dec", "d", "h", "S_img", "P_patch", "C_img", "d_ff_v", "d_ff", "V", "T_max"),
    build=Ref("symgpt.families.blocks.vision_encoder_decoder", "build"),
    flag_help={"qkv_bias": "the ViT encoder's Q/K/V projections have biases",
               "activation": "the ViT encoder's MLP activation",
               "decoder_activation": "the BERT decoder's MLP and prediction-head activation",
               "type_vocab": "rows of the decoder's token-type table (type_vocab_size)",
               "dropout": "dropout layers present (masks saved for backward)",
               "loss": "the graph ends in the cross-entropy loss over the T_dec positions"},
    choices={"activation": _ACTS, "decoder_activation": _ACTS}),)

_SILENT = ("attention_probs_dropout_prob", "hidden_dropout_prob", "initializer_range", "layer_norm_eps",
           "id2label", "label2id", "chunk_size_feed_forward", "is_decoder", "is_encoder_decoder",
           "add_cross_attention", "use_cache", "classifier_dropout", "pad_token_id", "bos_token_id",
           "eos_token_id", "encoder_stride", "pooler_act", "pooler_output_size", "decoder_start_token_id")


def read(f: Fields):
    """transformers' VisionEncoderDecoderConfig: encoder (ViTConfig), decoder (BertConfig)."""
    e, t = sub_fields(f, "encoder"), sub_fields(f, "decoder")
    for sub, key, want in ((e, "encoder", "vit"), (t, "decoder", "bert")):
        mt = sub.cfg.get("model_type")
        if mt != want:
            raise SymgptError(f"{f.where}: a VisionEncoderDecoderModel whose {key} is of model_type "
                              f"{str(mt)[:40]!r} is not modelled (only a {want} {key})")
    sizes = {"L": e.int("num_hidden_layers", 12), "d": e.int("hidden_size", 768), "h": e.int("num_attention_heads", 12),
             "S_img": e.int("image_size", 224), "P_patch": e.int("patch_size", 16), "C_img": e.int("num_channels", 3),
             "d_ff_v": e.int("intermediate_size", 3072),
             "L_dec": t.int("num_hidden_layers", 12), "d_ff": t.int("intermediate_size", 3072),
             "V": t.int("vocab_size", 30522), "T_max": t.int("max_position_embeddings", 512)}
    dd, dh = t.int("hidden_size", 768), t.int("num_attention_heads", 12)
    if (dd, dh) != (sizes["d"], sizes["h"]):
        raise SymgptError(f"{f.where}: a BERT decoder whose width or heads ({dd}, {dh}) differ from the ViT "
                          f"encoder's ({sizes['d']}, {sizes['h']}) is not modelled (enc_to_dec_proj)")
    if t.cfg.get("cross_attention_hidden_size") not in (None, dd):
        raise SymgptError(f"{f.where}: cross_attention_hidden_size other than the decoder's width is not modelled")
    if t.cfg.get("tie_word_embeddings", True) is False:
        raise SymgptError(f"{f.where}: a BERT decoder with an untied prediction head is not modelled")
    flags = {"qkv_bias": e.bool("qkv_bias", True), "activation": e.activation("hidden_act", "gelu"),
             "decoder_activation": t.activation("hidden_act", "gelu"), "type_vocab": t.int("type_vocab_size", 2)}
    for name in ("activation", "decoder_activation"):
        if flags[name] not in _ACTS:
            raise SymgptError(f"{f.where}: activation {flags[name]!r} is not modelled here")
    e.silent(*_SILENT)
    t.silent("tie_word_embeddings", "cross_attention_hidden_size", "position_embedding_type", *_SILENT)
    note_leftovers(f, e, "encoder")
    note_leftovers(f, t, "decoder")
    f.silent("tie_word_embeddings", "is_encoder_decoder", "id2label", "label2id", "decoder_start_token_id",
             "pad_token_id", "eos_token_id")
    f.notes.append("VisionEncoderDecoderModel: the ViT encoder is ViTModel with its pooler (counted and run, "
                   "its output unused); the decoder is BertLMHeadModel over T_dec tokens, its prediction head "
                   "tied to the token table")
    return "vision-encoder-decoder", flags, sizes


READERS = {"vision-encoder-decoder": Reader(read, ("VisionEncoderDecoderModel",))}

PRESETS: tuple = ()

"""transformers' ``SpeechEncoderDecoderModel`` with a wav2vec 2.0 encoder (held) and a BERT decoder
with cross-attention (``blocks/speech_encoder_decoder.py``). Counted: every parameter, and the
decoder's forward given the encoder's output of T_enc positions (transformers' ``encoder_outputs``);
audio input to the encoder is not modelled (N_aud must be 0). Other encoder or decoder types are
refused."""

from __future__ import annotations

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader, note_leftovers, sub_fields
from .speecht5 import ADDED, ADDED_HELP, read_feature_encoder

_ACTS = ("gelu", "gelu_tanh", "relu", "silu")
_FEAT = {k: v for k, v in ADDED.items() if k != "rel_positions"}
FAMILIES = (Family(
    name="speech-encoder-decoder",
    description="SpeechEncoderDecoderModel: a wav2vec 2.0 encoder (held: audio input is not modelled) and a "
                "BERT decoder with cross-attention over the encoder's output",
    flags={"decoder_activation": "gelu", "type_vocab": 2, "enc_proj": False, "dropout": False, "loss": True,
           **_FEAT},
    sizes=("L", "d", "h", "d_ff", "V", "T_max", "d_a", "L_a", "d_ff_a", "N_aud"), optional=("T_enc",),
    build=Ref("symgpt.families.blocks.speech_encoder_decoder", "build"),
    flag_help={"decoder_activation": "the BERT decoder's MLP and prediction-head activation",
               "type_vocab": "rows of the decoder's token-type table (type_vocab_size)",
               "enc_proj": "enc_to_dec_proj maps the encoder's output d_a -> d (the widths differ)",
               "dropout": "dropout layers present (masks saved for backward)",
               "loss": "the graph ends in the cross-entropy loss over the T_dec positions",
               **{k: v for k, v in ADDED_HELP.items() if k in _FEAT}},
    choices={"decoder_activation": _ACTS, "feat_norm": ("group", "layer")}),)

_SILENT = ("attention_probs_dropout_prob", "hidden_dropout_prob", "initializer_range", "layer_norm_eps",
           "id2label", "label2id", "chunk_size_feed_forward", "is_decoder", "is_encoder_decoder",
           "add_cross_attention", "use_cache", "classifier_dropout", "pad_token_id", "bos_token_id",
           "eos_token_id", "decoder_start_token_id")
#: Wav2Vec2Config's fields that change no parameter of Wav2Vec2Model: its heads' (CTC, classifier,
#: x-vector, pre-training quantizer), SpecAugment's masks, dropouts
_WAV2VEC2_ELSEWHERE = (
    "activation_dropout", "attention_dropout", "hidden_dropout", "feat_proj_dropout", "feat_quantizer_dropout",
    "final_dropout", "layerdrop", "apply_spec_augment", "mask_time_length", "mask_time_min_masks",
    "mask_feature_length", "mask_feature_min_masks", "classifier_proj_size", "codevector_dim",
    "contrastive_logits_temperature", "ctc_loss_reduction", "ctc_zero_infinity", "diversity_loss_weight",
    "num_codevector_groups", "num_codevectors_per_group", "num_negatives", "proj_codevector_dim", "tdnn_dilation",
    "tdnn_dim", "tdnn_kernel", "use_weighted_layer_sum", "xvector_output_dim", "vocab_size", "adapter_kernel_size",
    "adapter_stride", "num_adapter_layers", "do_stable_layer_norm", "num_attention_heads")


def _wav2vec2(f: Fields, e: Fields):
    if e.bool("add_adapter", False) or e.get("adapter_attn_dim", None)[0] is not None:
        raise SymgptError(f"{f.where}: a wav2vec 2.0 encoder with adapters (add_adapter, adapter_attn_dim) is not "
                          "modelled")
    d_a = e.int("hidden_size", 768)
    if e.int("output_hidden_size", d_a) != d_a:
        raise SymgptError(f"{f.where}: encoder.output_hidden_size other than its hidden_size is not modelled")
    e.activation("hidden_act", "gelu")
    e.silent(*_WAV2VEC2_ELSEWHERE, *_SILENT)
    return {"d_a": d_a, "L_a": e.int("num_hidden_layers", 12), "d_ff_a": e.int("intermediate_size", 3072)}, \
        read_feature_encoder(e)


def read(f: Fields):
    """transformers' SpeechEncoderDecoderConfig: encoder (Wav2Vec2Config), decoder (BertConfig)."""
    e, t = sub_fields(f, "encoder"), sub_fields(f, "decoder")
    for sub, key, want in ((e, "encoder", "wav2vec2"), (t, "decoder", "bert")):
        mt = sub.cfg.get("model_type")
        if mt != want:
            raise SymgptError(f"{f.where}: a SpeechEncoderDecoderModel whose {key} is of model_type "
                              f"{str(mt)[:40]!r} is not modelled (only a {want} {key})")
    asizes, flags = _wav2vec2(f, e)
    sizes = {"L": t.int("num_hidden_layers", 12), "d": t.int("hidden_size", 768), "h": t.int("num_attention_heads", 12),
             "d_ff": t.int("intermediate_size", 3072), "V": t.int("vocab_size", 30522),
             "T_max": t.int("max_position_embeddings", 512), **asizes, "N_aud": 0}
    if t.cfg.get("cross_attention_hidden_size") is not None:
        raise SymgptError(f"{f.where}: a decoder cross_attention_hidden_size is not modelled")
    if t.cfg.get("tie_word_embeddings", True) is False:
        raise SymgptError(f"{f.where}: a BERT decoder with an untied prediction head is not modelled")
    if t.cfg.get("position_embedding_type", "absolute") != "absolute":
        raise SymgptError(f"{f.where}: a BERT decoder with relative positions is not modelled")
    flags.update(decoder_activation=t.activation("hidden_act", "gelu"), type_vocab=t.int("type_vocab_size", 2),
                 enc_proj=sizes["d_a"] != sizes["d"])
    if flags["decoder_activation"] not in _ACTS:
        raise SymgptError(f"{f.where}: activation {flags['decoder_activation']!r} is not modelled here")
    t.silent("tie_word_embeddings", "cross_attention_hidden_size", "position_embedding_type", *_SILENT)
    note_leftovers(f, e, "encoder")
    note_leftovers(f, t, "decoder")
    f.silent("tie_word_embeddings", "is_encoder_decoder", "id2label", "label2id", "decoder_start_token_id",
             "pad_token_id", "eos_token_id")
    f.notes.append("audio input is not modelled for SpeechEncoderDecoderModel: the wav2vec 2.0 encoder is held, its "
                   "parameters counted; N_aud must be 0. The forward counted is the BERT decoder's given the "
                   "encoder's output of T_enc positions (transformers' encoder_outputs, which generate passes "
                   "after its first step), its prediction head tied to the token table")
    return "speech-encoder-decoder", flags, sizes


READERS = {"speech-encoder-decoder": Reader(read, ("SpeechEncoderDecoderModel",))}

PRESETS: tuple = ()

"""Granite Speech (IBM 2025; transformers' ``GraniteSpeechForConditionalGeneration``, and
``GraniteSpeechPlusForConditionalGeneration`` alike): a Conformer encoder and a windowed Q-Former
projector beside a Granite text decoder (``blocks/granite_speech.py`` builds it).

Audio clips per sequence are the size N_aud: a config is read with N_aud = 0 (text only);
``--set N_aud=1`` counts one 30-s clip, whose 300 audio tokens (window_size 15, downsample_rate 5)
T must count.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields

_ADDED = {"audio_input_dim": 160, "audio_heads": 8, "audio_head_dim": 128, "audio_ff_mult": 4,
          "audio_max_pos": 512, "audio_conv_expansion": 2, "audio_conv_kernel": 15, "audio_ctc_dim": 42,
          "qformer_hidden": 768, "qformer_ffn": 3072, "qformer_layers": 12, "qformer_cross_every": 2,
          "qformer_encoder_width": 1408, "qformer_queries": 3,
          # the encoder and projector run over audio
          "audio_context": 200, "qformer_heads": 12, "qformer_activation": "gelu", "qformer_window": 15,
          "audio_runs": True}
_HELP = {"audio_input_dim": "the encoder's input features a frame (input_dim)",
         "audio_heads": "the encoder's attention heads (num_heads)",
         "audio_head_dim": "the encoder's attention head width (dim_head)",
         "audio_ff_mult": "the encoder's feed-forward width over d_a (feedforward_mult)",
         "audio_max_pos": "the encoder's relative-position reach (max_pos_emb: 2·max_pos_emb + 1 rows)",
         "audio_conv_expansion": "the convolution module's width over d_a (conv_expansion_factor)",
         "audio_conv_kernel": "the depthwise convolution's kernel (conv_kernel_size)",
         "audio_ctc_dim": "the CTC head's output width (output_dim)",
         "qformer_hidden": "the Q-Former's width (projector_config.hidden_size)",
         "qformer_ffn": "the Q-Former's feed-forward width (intermediate_size)",
         "qformer_layers": "the Q-Former's layers (num_hidden_layers)",
         "qformer_cross_every": "a cross-attention every this many Q-Former layers (cross_attention_frequency)",
         "qformer_encoder_width": "the width the cross-attention's keys and values read (encoder_hidden_size)",
         "qformer_queries": "learned queries a window (window_size // downsample_rate)",
         "audio_context": "the positions of an attention block of the encoder (context_size)",
         "qformer_heads": "the Q-Former's attention heads (num_attention_heads)",
         "qformer_activation": "the Q-Former's feed-forward activation (hidden_act)",
         "qformer_window": "the encoder rows a window of the projector reads (window_size)",
         "audio_runs": "transformers runs this config on audio: the Q-Former's encoder_hidden_size is the "
                       "encoder's hidden_dim and window_size a multiple of downsample_rate (else the tower is held)"}
_CHOICES = {"qformer_activation": ("gelu", "gelu_tanh", "gelu_new", "relu", "silu")}

FAMILIES = tuple(Family(name=n, description=f"{t}: a Conformer encoder (block attention, relative positions), a "
                        "windowed Q-Former projector, a Granite text decoder",
                        flags=Extended(FLAGS, {}, _ADDED), sizes=SIZES + ("d_a", "L_a", "N_aud"),
                        optional=OPTIONAL, build=partial(Ref("symgpt.families.blocks.granite_speech", "build"), name=n),
                        flag_help=Extended(FLAG_HELP, added=_HELP), choices=Extended(CHOICES, added=_CHOICES))
                 for n, t in (("granite_speech", "Granite Speech"), ("granite_speech_plus", "Granite Speech Plus")))


def _audio_notes(f: Fields, flags: dict, rate: int) -> None:
    if not flags["audio_runs"]:
        why = (f"window_size ({flags['qformer_window']}) is not a multiple of downsample_rate ({rate})"
               if flags["qformer_window"] % rate else
               f"the Q-Former's encoder_hidden_size ({flags['qformer_encoder_width']}) differs from the encoder's "
               "hidden_dim")
        f.notes.append(f"{why}: transformers cannot run it on audio, so the Conformer encoder and Q-Former are "
                       "held (parameters counted) and N_aud must be 0")
        return
    E, c, w, q = 1500, flags["audio_context"], flags["qformer_window"], flags["qformer_queries"]
    blocks, windows = -(-E // c), -(-E // w)
    f.notes.append(f"audio: N_aud clips per sequence (0 here; --set N_aud=1 counts one), each taken as 30 s "
                   f"(GraniteSpeechFeatureExtractor pads a batch to its longest clip only): 3000 log-mel frames "
                   f"stacked in pairs, {E:,} encoder rows; attention in {blocks} blocks of {c} (padded to "
                   f"{blocks * c:,}), the projector's {windows} windows of {w} rows read by {q} queries each: "
                   f"{windows * q:,} audio tokens a clip; T counts those tokens")


def read(f: Fields):
    """transformers' GraniteSpeechConfig (GraniteSpeechPlusConfig alike): text_config (GraniteConfig),
    encoder_config (GraniteSpeechEncoderConfig), projector_config (Blip2QFormerConfig)."""
    from .granite import read as read_granite

    name = f.cfg.get("model_type", "granite_speech")
    text = sub_fields(f, "text_config")
    if not text.cfg:
        raise SymgptError(f"{f.where}: a Granite Speech config without its text_config is not modelled (give the "
                          "checkpoint's config.json, which has one)")
    mt = text.cfg.get("model_type", "granite")
    if mt != "granite":
        raise SymgptError(f"{f.where}: a Granite Speech text_config of model_type {str(mt)[:40]!r} is not modelled")
    _, flags, sizes = read_granite(text)
    note_leftovers(f, text, "text_config")
    e = sub_fields(f, "encoder_config")
    if e.get("cat_hidden_layers", None)[0] is not None:
        raise SymgptError(f"{f.where}: encoder_config.cat_hidden_layers (concatenated hidden layers) is not modelled")
    sizes.update(d_a=e.int("hidden_dim", 1024), L_a=e.int("num_layers", 10))
    flags.update(audio_input_dim=e.int("input_dim", 160), audio_heads=e.int("num_heads", 8),
                 audio_head_dim=e.int("dim_head", 128), audio_ff_mult=e.int("feedforward_mult", 4),
                 audio_max_pos=e.int("max_pos_emb", 512), audio_conv_expansion=e.int("conv_expansion_factor", 2),
                 audio_conv_kernel=e.int("conv_kernel_size", 15), audio_ctc_dim=e.int("output_dim", 42))
    flags["audio_context"] = e.int("context_size", 200)
    e.silent("dropout", "id2label", "label2id", "is_encoder_decoder")
    note_leftovers(f, e, "encoder_config")
    p = sub_fields(f, "projector_config")
    pt = p.cfg.get("model_type", "blip_2_qformer")
    if pt != "blip_2_qformer":
        raise SymgptError(f"{f.where}: a projector_config of model_type {str(pt)[:40]!r} is not modelled")
    if p.bool("use_qformer_text_input", False):
        raise SymgptError(f"{f.where}: a Q-Former reading text (use_qformer_text_input) is not modelled")
    flags.update(qformer_hidden=p.int("hidden_size", 768), qformer_ffn=p.int("intermediate_size", 3072),
                 qformer_layers=p.int("num_hidden_layers", 12),
                 qformer_cross_every=p.int("cross_attention_frequency", 2, minimum=1),
                 qformer_encoder_width=p.int("encoder_hidden_size", 1408))
    flags.update(qformer_heads=p.int("num_attention_heads", 12), qformer_activation=p.activation("hidden_act", "gelu"))
    p.silent("layer_norm_eps", "max_position_embeddings", "vocab_size",
             "pad_token_id", "attention_probs_dropout_prob", "hidden_dropout_prob", "initializer_range",
             "id2label", "label2id", "is_encoder_decoder")
    note_leftovers(f, p, "projector_config")
    window, rate = f.int("window_size", 15), f.int("downsample_rate", 5, minimum=1)
    flags.update(qformer_queries=window // rate, qformer_window=window,
                 audio_runs=flags["qformer_encoder_width"] == sizes["d_a"] and window % rate == 0)
    flags["tied"] = f.bool("tie_word_embeddings", True)  # the outer config's, as transformers ties
    f.bool("has_lora_adapter", True)
    _audio_notes(f, flags, rate)
    f.notes.append("the LoRA adapter a checkpoint ships (has_lora_adapter) is loaded apart and not counted")
    f.silent("audio_token_index", "audio_token_id", "id2label", "label2id", "initializer_range", "is_encoder_decoder")
    sizes["N_aud"] = 0
    return name, flags, sizes


READERS = {"granite_speech": Reader(read, ("GraniteSpeechForConditionalGeneration",)),
           "granite_speech_plus": Reader(read, ("GraniteSpeechPlusForConditionalGeneration",))}

PRESETS: tuple = ()

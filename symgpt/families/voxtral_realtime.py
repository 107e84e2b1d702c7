"""Voxtral Realtime (Mistral AI 2026; transformers' ``VoxtralRealtimeForConditionalGeneration``): a
streaming audio encoder and projector (held, ``blocks/voxtral_realtime.py``) beside a Mistral-style
text decoder (GQA, a sliding window) whose every layer multiplies its FFN input by
1 + MLP(t_cond), ``VoxtralRealtimeTextAdaRmsNorm`` (counted: ``ops/modulation.py``). Counted: every
parameter and the decoder's forward over T positions; the cost of audio input is not modelled
(N_aud must be 0).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, llama_like, note_leftovers, sub_fields, window

#: VoxtralRealtimeTextAdaRmsNorm's bottleneck: nn.Linear(hidden_size, 32) in transformers' source
ADA_RANK = 32

_ADDED = {"time_modulation": ADA_RANK, "audio_mel_bins": 128, "audio_head_dim": 64, "audio_downsample": 4}
_HELP = {"time_modulation": "the bottleneck of the MLP(t_cond) that scales each layer's FFN input by 1 + MLP(t_cond) "
                            "(VoxtralRealtimeTextAdaRmsNorm: 32); null for none",
         "audio_mel_bins": "the audio encoder's input channels (num_mel_bins)",
         "audio_head_dim": "the audio encoder's attention head width (head_dim)",
         "audio_downsample": "encoder positions stacked into one projector row (downsample_factor)"}

FAMILIES = (Family(name="voxtral_realtime", description="Voxtral Realtime: a streaming audio encoder and projector "
                   "(held: audio input is not modelled), a Mistral decoder with a time-conditioned FFN scale",
                   flags=Extended(FLAGS, dict(gqa=True, window=True), _ADDED),
                   sizes=SIZES + ("d_a", "h_a", "L_a", "d_ff_a", "N_aud"), optional=OPTIONAL,
                   build=partial(Ref("symgpt.families.blocks.voxtral_realtime", "build"), name="voxtral_realtime"),
                   flag_help=Extended(FLAG_HELP, added=_HELP), choices=Extended(CHOICES)),)

#: VoxtralRealtimeConfig.sub_configs_defaults' text_config, under which a given text_config is read
TEXT_DEFAULTS = {"vocab_size": 131072, "hidden_size": 3072, "intermediate_size": 9216, "num_hidden_layers": 26,
                 "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
                 "rms_norm_eps": 1e-05, "head_dim": 128, "tie_word_embeddings": True, "sliding_window": 8192}


def read(f: Fields):
    """transformers' VoxtralRealtimeConfig: text_config (VoxtralRealtimeTextConfig), audio_config
    (VoxtralRealtimeEncoderConfig)."""
    sub = sub_fields(f, "text_config")
    mt = sub.cfg.get("model_type", "voxtral_realtime_text")
    if mt != "voxtral_realtime_text":
        raise SymgptError(f"{f.where}: a Voxtral Realtime text_config of model_type {str(mt)[:40]!r} is not modelled")
    text = Fields({**TEXT_DEFAULTS, **sub.cfg}, sub.where)
    flags, sizes = llama_like(text, dict(V=32000, d=4096, d_ff=14336, L=32, h=32, h_kv=8, T_max=131072))
    window(text, flags, sizes, 4096)
    text.silent("model_type", "rms_norm_eps", "rope_parameters", "rope_theta", "attention_dropout", "use_cache",
                "pad_token_id", "bos_token_id", "eos_token_id", "initializer_range", "id2label", "label2id")
    note_leftovers(f, text, "text_config")
    a = sub_fields(f, "audio_config")
    sizes.update(d_a=a.int("hidden_size", 1280), h_a=a.int("num_attention_heads", 32),
                 L_a=a.int("num_hidden_layers", 32), d_ff_a=a.int("intermediate_size", 5120))
    flags.update(audio_mel_bins=a.int("num_mel_bins", 128), audio_head_dim=a.int("head_dim", 64),
                 audio_downsample=f.int("downsample_factor", 4), time_modulation=ADA_RANK)
    a.activation("hidden_act", "silu")
    a.silent("model_type", "activation_function", "vocab_size", "initializer_range", "attention_dropout",
             "max_position_embeddings", "rms_norm_eps", "rope_parameters", "rope_theta", "sliding_window",
             "use_cache", "id2label", "label2id")
    note_leftovers(f, a, "audio_config")
    f.activation("projector_hidden_act", "gelu")
    f.notes.append("audio input is not modelled for Voxtral Realtime: the streaming audio encoder and projector are "
                   "held, their parameters counted; N_aud must be 0. transformers' forward always reads audio "
                   "features: the forward counted is the text decoder's over T positions, each layer's "
                   "1 + MLP(t_cond) scale of its FFN input included")
    # the top-level tie_word_embeddings: PreTrainedModel ties lm_head to the token embeddings by it
    flags["tied"] = f.bool("tie_word_embeddings", True)
    f.silent("audio_length_per_tok", "default_num_delay_tokens", "hidden_size", "use_cache", "id2label", "label2id",
             "initializer_range", "is_encoder_decoder")
    sizes["N_aud"] = 0
    return "voxtral_realtime", flags, sizes


READERS = {"voxtral_realtime": Reader(read, ("VoxtralRealtimeForConditionalGeneration",))}

PRESETS: tuple = ()

"""VibeVoice (Microsoft 2025; transformers' ``VibeVoiceAsrForConditionalGeneration`` and
``VibeVoiceForConditionalGeneration``): speech tokenizers, their connectors and (VibeVoice) a
diffusion head, held (``blocks/vibevoice.py``), beside a Qwen2 text decoder. Counted: every
parameter and the decoder's forward over token ids; the cost of audio input (and of the diffusion
head's sampling) is not modelled (N_aud must be 0).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields

_SPEC = "1,32,7,4,{H};3,3,3,3,3,3,8;2,2,4,5,5,8"
_TOK = {"acoustic_tokenizer": _SPEC.format(H=64), "semantic_tokenizer": _SPEC.format(H=128)}
_TOK_HELP = {f"{k}_tokenizer": f"the {k} tokenizer: C,F,k,e,H;depths;ratios (channels, num_filters, kernel_size, "
                               "ffn_expansion, hidden_size; depths; downsampling_ratios)" for k in ("acoustic", "semantic")}
_DIFF = {"diffusion_latent": 64, "diffusion_ffn": 4608, "diffusion_layers": 4, "diffusion_frequencies": 256,
         "diffusion_mlp_bias": False}
_DIFF_HELP = {"diffusion_latent": "the diffusion head's latent width (latent_size: the acoustic tokenizer's hidden_size)",
              "diffusion_ffn": "the diffusion head's FFN width (intermediate_size)",
              "diffusion_layers": "the diffusion head's layers (num_hidden_layers)",
              "diffusion_frequencies": "the timestep embedding's sinusoids (frequency_embedding_size)",
              "diffusion_mlp_bias": "the diffusion head's FFN projections have biases (mlp_bias)"}


class _Specs(tuple):
    """A tokenizer flag's choices: its default listed, any well-formed C,F,k,e,H;depths;ratios accepted."""

    def __contains__(self, value) -> bool:
        from .blocks.vibevoice import tokenizer_spec

        try:
            tokenizer_spec(value)
        except SymgptError:
            return False
        return isinstance(value, str)


def _family(name, title, added, helps):
    return Family(name=name, description=f"{title}: speech tokenizers and connectors (held: audio input is not "
                  "modelled) beside a Qwen2 text decoder", flags=Extended(FLAGS, dict(gqa=True, qkv_bias=True), added),
                  sizes=SIZES + ("N_aud",), optional=OPTIONAL,
                  build=partial(Ref("symgpt.families.blocks.vibevoice", "build"), name=name),
                  flag_help=Extended(FLAG_HELP, added=helps),
                  choices=Extended(CHOICES, added={k: _Specs((v,)) for k, v in _TOK.items()}))


FAMILIES = (_family("vibevoice_asr", "VibeVoice-ASR", _TOK, _TOK_HELP),
            _family("vibevoice", "VibeVoice (with its acoustic decoder and diffusion head)", {**_TOK, **_DIFF},
                    {**_TOK_HELP, **_DIFF_HELP}))


def _ints(t: Fields, key: str, default: list) -> list[int]:
    value, _ = t.get(key, default)
    if not isinstance(value, list) or not value or not all(isinstance(x, int) and not isinstance(x, bool)
                                                           for x in value):
        raise SymgptError(f"{t.where}: field {key!r} must be a list of integers")
    return value


def _tokenizer(f: Fields, key: str, hidden: int, model_types: tuple[str, ...]) -> tuple[str, int]:
    """A VibeVoiceAcousticTokenizer(Encoder)Config as the flag string ``C,F,k,e,H;depths;ratios``."""
    t = sub_fields(f, key)
    mt = t.cfg.get("model_type", model_types[0])
    if mt not in model_types:
        raise SymgptError(f"{f.where}: a VibeVoice {key} of model_type {str(mt)[:40]!r} is not modelled")
    head = [t.int("channels", 1), t.int("num_filters", 32), t.int("kernel_size", 7), t.int("ffn_expansion", 4),
            t.int("hidden_size", hidden)]
    depths = _ints(t, "depths", [3, 3, 3, 3, 3, 3, 8])
    ratios = _ints(t, "downsampling_ratios", [2, 2, 4, 5, 5, 8])
    if len(depths) != len(ratios) + 1:
        raise SymgptError(f"{t.where}: depths must list one stage more than downsampling_ratios")
    t.activation("hidden_act", "gelu")
    t.silent("model_type", "rms_norm_eps", "layer_scale_init_value", "vae_std", "initializer_range", "id2label",
             "label2id", "is_encoder_decoder")
    note_leftovers(f, t, key)
    spec = f"{','.join(map(str, head))};{','.join(map(str, depths))};{','.join(map(str, ratios))}"
    return spec, head[4]


def _text(f: Fields):
    from .qwen2 import read as read_qwen2

    text = sub_fields(f, "text_config")
    mt = text.cfg.get("model_type", "qwen2")
    if mt != "qwen2":
        raise SymgptError(f"{f.where}: a VibeVoice text_config of model_type {str(mt)[:40]!r} is not modelled")
    _, flags, sizes = read_qwen2(text)
    note_leftovers(f, text, "text_config")
    return flags, sizes


def read_asr(f: Fields):
    """transformers' VibeVoiceAsrConfig: text_config (Qwen2Config), acoustic_ and semantic_tokenizer_encoder_config."""
    flags, sizes = _text(f)
    enc = ("vibevoice_acoustic_tokenizer_encoder",)
    flags["acoustic_tokenizer"] = _tokenizer(f, "acoustic_tokenizer_encoder_config", 64, enc)[0]
    flags["semantic_tokenizer"] = _tokenizer(f, "semantic_tokenizer_encoder_config", 128, enc)[0]
    # VibeVoiceAsrForConditionalGeneration declares no tied weights: lm_head is its own
    flags["tied"] = False
    f.silent("tie_word_embeddings", "audio_token_id", "audio_bos_token_id", "audio_eos_token_id",
             "acoustic_tokenizer_chunk_size", "id2label", "label2id", "initializer_range", "is_encoder_decoder")
    f.notes.append("audio input is not modelled for VibeVoice-ASR: the acoustic and semantic tokenizers' encoders "
                   "and the projector are held, their parameters counted; N_aud must be 0")
    sizes["N_aud"] = 0
    return "vibevoice_asr", flags, sizes


def read_tts(f: Fields):
    """transformers' VibeVoiceConfig: text_config (Qwen2Config), audio_config (VibeVoiceAcousticTokenizerConfig),
    semantic_model_config, diffusion_head_config."""
    flags, sizes = _text(f)
    flags["acoustic_tokenizer"], latent = _tokenizer(f, "audio_config", 64, ("vibevoice_acoustic_tokenizer",))
    flags["semantic_tokenizer"] = _tokenizer(f, "semantic_model_config", 128,
                                             ("vibevoice_acoustic_tokenizer_encoder",))[0]
    h = sub_fields(f, "diffusion_head_config")
    mt = h.cfg.get("model_type", "vibevoice_diffusion")
    if mt != "vibevoice_diffusion":
        raise SymgptError(f"{f.where}: a VibeVoice diffusion_head_config of model_type {str(mt)[:40]!r} is not modelled")
    # VibeVoiceConfig.__post_init__ sets the head's hidden_size and latent_size from the text and audio configs
    flags.update(diffusion_latent=latent, diffusion_ffn=h.int("intermediate_size", 4608),
                 diffusion_layers=h.int("num_hidden_layers", 4),
                 diffusion_frequencies=h.int("frequency_embedding_size", 256),
                 diffusion_mlp_bias=h.bool("mlp_bias", False))
    h.activation("hidden_act", "silu")
    h.silent("model_type", "hidden_size", "latent_size", "rms_norm_eps", "diffusion_max_period", "id2label",
             "label2id", "initializer_range", "is_encoder_decoder")
    note_leftovers(f, h, "diffusion_head_config")
    # VibeVoiceConfig.__post_init__: tie_word_embeddings is the text_config's
    f.silent("tie_word_embeddings", "vocab_size", "pad_token_id", "eos_token_id", "audio_token_id",
             "audio_bos_token_id", "audio_eos_token_id", "diffusion_loss_weight", "id2label", "label2id",
             "initializer_range", "is_encoder_decoder")
    f.notes.append("audio input is not modelled for VibeVoice: the acoustic tokenizer (encoder and decoder), the "
                   "semantic tokenizer's encoder, their connectors and the diffusion head are held, their "
                   "parameters counted; N_aud must be 0 (the forward counted is the text decoder's over token ids)")
    sizes["N_aud"] = 0
    return "vibevoice", flags, sizes


READERS = {"vibevoice_asr": Reader(read_asr, ("VibeVoiceAsrForConditionalGeneration",)),
           "vibevoice": Reader(read_tts, ("VibeVoiceForConditionalGeneration",))}

PRESETS: tuple = ()

"""Image and speech models read as a text decoder of a family symgpt already builds, with a tower
beside it whose parameters are held (``blocks/held_towers.py``): counted, not run, as the
model's forward over token ids runs none of it. Images or audio (N_img > 0, N_aud > 0) are refused
in one line.

- Ovis2 (AIDC-AI 2025; transformers' ``Ovis2ForConditionalGeneration``): a Qwen2 decoder, the
  ``Ovis2VisionModel`` tower (an RMSNorm-and-SwiGLU ViT, ``head_linear`` onto a visual vocabulary
  and its LayerNorm) and ``visual_embeddings_table`` (visual vocabulary × the top-level
  hidden_size). The head is tied to the decoder's token embedding (``_tied_weights_keys``), so it
  is the embedding's shape whatever the top-level hidden_size and vocab_size say.
- OmniASR (Meta 2025; ``OmniASRForConditionalGeneration``): a LLaMA decoder, a wav2vec2-style
  audio encoder (``OmniASRAudioModel``: a strided Conv1d feature encoder, a grouped positional
  convolution, post-LayerNorm blocks) and a linear projector; the head is never tied (the class
  has no tied keys).
- Fun-ASR-Nano (FunAudioLLM 2025; ``FunAsrNanoForConditionalGeneration``): a Qwen3 decoder, a
  SAN-M encoder (``FunAsrNanoEncoder``: attention with an FSMN depthwise memory, a ReLU MLP) and
  ``FunAsrNanoMultiModalProjector`` (two linears and adaptor layers without FSMN).
- Nemotron 3 Nano Omni (NVIDIA 2025; ``NemotronH_Omni_Reasoning_V3``): a Nemotron-H hybrid decoder
  (``NemotronHForCausalLM``, its own head tying), the RADIO tower (``RadioModel``: patch and video
  patch projections, a position table, class and register tokens, LayerNorm blocks with layer
  scales) and a pixel-shuffle projector (an RMSNorm, two linears). A config with an audio_config
  (the Parakeet sound tower) is refused.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .fields import Fields, Reader, note_leftovers, sub_fields
from .llama import FAMILIES as _LLAMA, READERS as _LLAMA_READERS
from .qwen2 import FAMILIES as _QWEN2, READERS as _QWEN2_READERS
from .qwen3 import FAMILIES as _QWEN3, READERS as _QWEN3_READERS
from .hybrid import FAMILIES as _HYBRID, READERS as _HYBRID_READERS

BUILD = Ref("symgpt.families.blocks.held_towers", "build")

VISION_SIZES = ("d_v", "L_v", "d_ff_v", "P_patch", "C_img", "N_img")
_AUDIO_SIZES = ("d_a", "L_a", "d_ff_a", "N_aud")

_OVIS2 = {"ovis_positions": 256, "ovis_qkv_bias": False, "ovis_mlp_bias": False, "ovis_visual_vocab": 16384,
          "ovis_indicators": 5, "ovis_stride": 1, "ovis_table_width": 1536}
_OVIS2_HELP = {"ovis_positions": "rows of the tower's position table ((image_size / P)²)",
               "ovis_qkv_bias": "the tower's attention projections have biases (qkv_bias)",
               "ovis_mlp_bias": "the tower's SwiGLU MLP has biases (mlp_bias)",
               "ovis_visual_vocab": "the visual vocabulary (vision_config.vocab_size)",
               "ovis_indicators": "visual indicator tokens, left out of head_linear's output "
                                  "(num_visual_indicator_tokens)",
               "ovis_stride": "the side of the hidden-stride merge before head_linear (hidden_stride)",
               "ovis_table_width": "the width of visual_embeddings_table (the top-level hidden_size)"}
_OMNIASR = {"audio_conv_channels": 512, "audio_conv_layers": 7, "audio_conv_kernel0": 10, "audio_conv_kernels": 16,
            "audio_conv_bias": True, "audio_pos_kernel": 128, "audio_pos_groups": 16}
_OMNIASR_HELP = {"audio_conv_channels": "the feature encoder's channels (conv_dim, every layer alike)",
                 "audio_conv_layers": "the feature encoder's Conv1d layers (len(conv_dim))",
                 "audio_conv_kernel0": "the first Conv1d's kernel (conv_kernel[0]; one input channel)",
                 "audio_conv_kernels": "the other Conv1d layers' kernels summed (sum(conv_kernel[1:]))",
                 "audio_conv_bias": "the feature encoder's convolutions have biases (conv_bias)",
                 "audio_pos_kernel": "the positional convolution's kernel (num_conv_pos_embeddings)",
                 "audio_pos_groups": "the positional convolution's groups (num_conv_pos_embedding_groups)"}
_FUNASR = {"audio_in": 560, "audio_fsmn_kernel": 11, "audio_final_norms": 2, "adaptor_layers": 2, "adaptor_d": 1024,
           "adaptor_ff": 256, "adaptor_proj": 2048}
_FUNASR_HELP = {"audio_in": "the first encoder layer's input width (num_mel_bins × num_stacked_frames)",
                "audio_fsmn_kernel": "the FSMN depthwise convolution's kernel (fsmn_kernel_size)",
                "audio_final_norms": "encoder layers ending in a LayerNorm (the last transcription layer and "
                                     "the last timestamp-prediction layer)",
                "adaptor_layers": "the projector's adaptor layers (adaptor_config.num_hidden_layers)",
                "adaptor_d": "the adaptor layers' width (adaptor_config.hidden_size)",
                "adaptor_ff": "the adaptor layers' MLP width (adaptor_config.intermediate_size)",
                "adaptor_proj": "the projector's hidden width (projector_hidden_size)"}


_RADIO = {"radio_positions": 16384, "radio_prefix": 10, "radio_video_frames": 2, "radio_qkv_bias": True,
          "radio_swiglu": False, "omni_merged": 5120, "omni_projector": 4096, "omni_final_norm": False,
          "omni_vision_width": 1280}
_RADIO_HELP = {"radio_positions": "rows of RADIO's position table ((max_img_size / P)²)",
               "radio_prefix": "RADIO's class and register tokens (num_cls_tokens + num_registers)",
               "radio_video_frames": "frames per video patch of RADIO's video projection (video_temporal_patch_size; "
                                     "none: no video projection)",
               "radio_qkv_bias": "RADIO's q/k/v projections have biases (qkv_bias)",
               "radio_swiglu": "RADIO's blocks have a SwiGLU MLP (use_swiglu_ffn) rather than fc1/fc2",
               "omni_merged": "the projector's input width (vision_hidden_size · (1 / downsample_ratio)²)",
               "omni_projector": "the projector's hidden width (projector_hidden_size)",
               "omni_final_norm": "a LayerNorm after the tower (built where the decoder has MTP layers)",
               "omni_vision_width": "the width of that LayerNorm (vision_hidden_size)"}


def extend(table, added: dict):
    """A text family's table (flags, help or choices) with the tower's keys added after it."""
    if isinstance(table, Extended):
        return Extended(table.base, table.changes, {**table.added, **added})
    return {**table, **added}


def held_family(name, description, text: Family, kind, sizes, added, help_):
    """*text*'s family with a held tower *kind* (``blocks/held_towers.py``) and its flags *added*."""
    return Family(name=name, description=description + " (held: a forward over token ids runs none of it)",
                  flags=extend(text.flags, added), sizes=tuple(text.sizes) + sizes, optional=tuple(text.optional),
                  build=partial(BUILD, name=name, text=text.build, kind=kind),
                  flag_help=extend(text.flag_help, help_), choices=extend(text.choices, {}))


FAMILIES = (
    held_family("ovis2", "Ovis2: a Qwen2 decoder, an RMSNorm/SwiGLU vision tower onto a visual vocabulary and its "
            "embedding table", _QWEN2[0], "ovis2", VISION_SIZES, _OVIS2, _OVIS2_HELP),
    held_family("omniasr", "OmniASR: a LLaMA decoder, a wav2vec2-style audio encoder and a linear projector",
            _LLAMA[0], "omniasr", _AUDIO_SIZES, _OMNIASR, _OMNIASR_HELP),
    held_family("fun_asr_nano", "Fun-ASR-Nano: a Qwen3 decoder, a SAN-M audio encoder with FSMN memory and an adaptor",
            _QWEN3[0], "fun_asr_nano", _AUDIO_SIZES, _FUNASR, _FUNASR_HELP),
    held_family("nemotron_h_omni", "Nemotron 3 Nano Omni: a Nemotron-H hybrid decoder, the RADIO vision tower and a "
            "pixel-shuffle projector", _HYBRID[0], "radio", VISION_SIZES, _RADIO, _RADIO_HELP),
)

NOT_RUN = ("the forward counted is over token ids: transformers runs no {what} then, whose parameters are counted; "
            "the cost of {input} is not modelled for this model ({n} must be 0)")


def read_text(f: Fields, family: str, reader: Reader, what: str):
    """text_config read by the text family's *reader*, its own tie_word_embeddings left out (the
    composite class decides the head's tying)."""
    nested = sub_fields(f, "text_config")
    if not nested.cfg:
        raise SymgptError(f"{f.where}: a {what} config without its text_config is not modelled (give the "
                          "checkpoint's config.json, which has one)")
    text = Fields({k: v for k, v in nested.cfg.items() if k != "tie_word_embeddings"}, nested.where)
    got, flags, sizes = reader.read(text)
    if got != family:
        raise SymgptError(f"{f.where}: its text_config reads as a {got!r} decoder; {what} is modelled with a "
                          f"{family!r} one")
    note_leftovers(f, text, "text_config")
    return flags, sizes


COMMON = ("id2label", "label2id", "initializer_range", "is_encoder_decoder", "model_type", "hidden_act",
           "attention_dropout", "layer_norm_eps", "rms_norm_eps")


def read_ovis2(f: Fields):
    """transformers' Ovis2Config: text_config (Qwen2Config), vision_config (Ovis2VisionConfig)."""
    flags, sizes = read_text(f, "qwen2", _QWEN2_READERS["qwen2"], "Ovis2")
    v = sub_fields(f, "vision_config")
    for key in ("image_size", "patch_size"):
        if not isinstance(v.cfg.get(key, 0), int):
            raise SymgptError(f"{v.where}: {key} given as a list is not modelled")
    sizes.update(d_v=v.int("hidden_size", 1024), L_v=v.int("num_hidden_layers", 24),
                 d_ff_v=v.int("intermediate_size", 2816), P_patch=v.int("patch_size", 14),
                 C_img=v.int("num_channels", 3), N_img=0)
    side = v.int("image_size", 224) // sizes["P_patch"]
    if side < 1:
        raise SymgptError(f"{v.where}: image_size must be at least patch_size")
    flags.update(ovis_positions=side * side, ovis_qkv_bias=v.bool("qkv_bias", False),
                 ovis_mlp_bias=v.bool("mlp_bias", False), ovis_visual_vocab=v.int("vocab_size", 16384),
                 ovis_indicators=v.int("num_visual_indicator_tokens", 5), ovis_stride=v.int("hidden_stride", 1),
                 ovis_table_width=f.int("hidden_size", 1536))
    if flags["ovis_indicators"] >= flags["ovis_visual_vocab"]:
        raise SymgptError(f"{v.where}: num_visual_indicator_tokens must be below vocab_size")
    v.int("num_attention_heads", 8)
    v.silent("tokenize_function", *COMMON)
    note_leftovers(f, v, "vision_config")
    # Ovis2ForConditionalGeneration: lm_head = Linear(hidden_size, vocab_size) of the top level, tied
    # to the decoder's embed_tokens (whose shape it then takes) unless tie_word_embeddings is false
    flags["tied"] = f.bool("tie_word_embeddings", True)
    if not flags["tied"] and (flags["ovis_table_width"] != sizes["d"] or f.int("vocab_size", 151643) != sizes["V"]):
        raise SymgptError(f"{f.where}: an untied head whose hidden_size or vocab_size differs from the text "
                          "decoder's is not modelled")
    f.int("vocab_size", 151643)
    f.silent("image_token_id", "visual_indicator_token_ids", "id2label", "label2id", "is_encoder_decoder")
    f.notes.append(NOT_RUN.format(what="vision tower", input="an image", n="N_img"))
    return "ovis2", flags, sizes


def read_omniasr(f: Fields):
    """transformers' OmniASRConfig: text_config (LlamaConfig), audio_config (OmniASRAudioConfig)."""
    flags, sizes = read_text(f, "llama", _LLAMA_READERS["llama"], "OmniASR")
    a = sub_fields(f, "audio_config")
    dims, kernels = a.get("conv_dim", [512] * 7)[0], a.get("conv_kernel", [10, 3, 3, 3, 3, 2, 2])[0]
    ok = all(isinstance(x, list) and x and all(isinstance(i, int) and not isinstance(i, bool) and i > 0 for i in x)
             for x in (dims, kernels))
    if not ok or len(dims) != len(kernels):
        raise SymgptError(f"{a.where}: conv_dim and conv_kernel must be lists of positive integers of one length")
    if len(set(dims)) != 1:
        raise SymgptError(f"{a.where}: a feature encoder whose conv_dim entries differ is not modelled")
    a.get("conv_stride", None)  # strides change no parameter count
    sizes.update(d_a=a.int("hidden_size", 1024), L_a=a.int("num_hidden_layers", 24),
                 d_ff_a=a.int("intermediate_size", 4096), N_aud=0)
    flags.update(audio_conv_channels=dims[0], audio_conv_layers=len(dims), audio_conv_kernel0=kernels[0],
                 audio_conv_kernels=sum(kernels[1:]) or None, audio_conv_bias=a.bool("conv_bias", True),
                 audio_pos_kernel=a.int("num_conv_pos_embeddings", 128),
                 audio_pos_groups=a.int("num_conv_pos_embedding_groups", 16))
    if sizes["d_a"] % flags["audio_pos_groups"]:
        raise SymgptError(f"{a.where}: hidden_size must be a multiple of num_conv_pos_embedding_groups")
    a.int("num_attention_heads", 16)
    a.silent("hidden_dropout", "layerdrop", "activation_dropout", *COMMON)
    note_leftovers(f, a, "audio_config")
    flags["tied"] = False  # OmniASRForConditionalGeneration ties no weights
    f.silent("tie_word_embeddings", "audio_token_id", "bos_token_id", "pad_token_id", "eos_token_id", *COMMON)
    f.notes.append(NOT_RUN.format(what="audio encoder", input="audio input", n="N_aud"))
    return "omniasr", flags, sizes


def read_fun_asr_nano(f: Fields):
    """transformers' FunAsrNanoConfig: text_config (Qwen3Config), audio_config
    (FunAsrNanoEncoderConfig), adaptor_config (FunAsrNanoAdaptorConfig)."""
    flags, sizes = read_text(f, "qwen3", _QWEN3_READERS["qwen3"], "Fun-ASR-Nano")
    a = sub_fields(f, "audio_config")
    sizes.update(d_a=a.int("hidden_size", 512), L_a=a.int("num_hidden_layers", 70),
                 d_ff_a=a.int("intermediate_size", 2048), N_aud=0)
    L, ts = sizes["L_a"], a.int("num_timestamp_prediction_layers", 20, minimum=0)
    # FunAsrNanoEncoder: a final LayerNorm on layers L - ts - 1 and L - 1 (those that exist)
    norms = len({i for i in (L - ts - 1, L - 1) if 0 <= i < L})
    flags.update(audio_in=a.int("num_mel_bins", 80) * a.int("num_stacked_frames", 7),
                 audio_fsmn_kernel=a.int("fsmn_kernel_size", 11), audio_final_norms=norms)
    a.int("num_attention_heads", 4)
    a.silent("hidden_dropout", "max_position_embeddings", *COMMON)
    note_leftovers(f, a, "audio_config")
    p = sub_fields(f, "adaptor_config")
    flags.update(adaptor_layers=p.int("num_hidden_layers", 2, minimum=0) or None, adaptor_d=p.int("hidden_size", 1024),
                 adaptor_ff=p.int("intermediate_size", 256), adaptor_proj=p.int("projector_hidden_size", 2048))
    p.int("num_attention_heads", 8)
    p.silent("hidden_dropout", "projector_hidden_act", *COMMON)
    note_leftovers(f, p, "adaptor_config")
    flags["tied"] = f.bool("tie_word_embeddings", True)  # FunAsrNanoForConditionalGeneration's _tied_weights_keys
    f.silent("audio_token_id", *COMMON)
    f.notes.append(NOT_RUN.format(what="audio encoder or projector", input="audio input", n="N_aud"))
    return "fun_asr_nano", flags, sizes


def read_nemotron_h_omni(f: Fields):
    """transformers' NemotronH_Omni_Reasoning_V3_Config: text_config (NemotronHConfig, read whole:
    ``AutoModelForCausalLM`` builds the decoder and its head), vision_config (RadioConfig)."""
    if f.get("audio_config", None)[0] is not None:
        raise SymgptError(f"{f.where}: an audio_config (the Parakeet sound tower and its projector) is not modelled "
                          "for Nemotron Omni")
    nested = sub_fields(f, "text_config")
    if not nested.cfg:
        raise SymgptError(f"{f.where}: a Nemotron Omni config without its text_config is not modelled (give the "
                          "checkpoint's config.json, which has one)")
    got, flags, sizes = _HYBRID_READERS["nemotron_h"].read(nested)
    note_leftovers(f, nested, "text_config")
    mtp = nested.cfg.get("num_nextn_predict_layers", 0)
    v = sub_fields(f, "vision_config")
    if v.cfg.get("model_type", "radio") != "radio":
        raise SymgptError(f"{f.where}: a vision_config of model_type {str(v.cfg.get('model_type'))[:40]!r} is not "
                          "modelled")
    sizes.update(d_v=v.int("hidden_size", 1280), L_v=v.int("num_hidden_layers", 32), P_patch=v.int("patch_size", 16),
                 C_img=v.int("num_channels", 3), N_img=0)
    heads = v.int("num_attention_heads", 16)
    if sizes["d_v"] % heads or v.cfg.get("head_dim", sizes["d_v"] // heads) != sizes["d_v"] // heads:
        raise SymgptError(f"{v.where}: hidden_size must be num_attention_heads × head_dim")
    mlp, _ = v.get("mlp_ratio", 4.0)
    if isinstance(mlp, bool) or not isinstance(mlp, (int, float)) or mlp <= 0:
        raise SymgptError(f"{v.where}: field 'mlp_ratio' must be a positive number")
    sizes["d_ff_v"] = int(sizes["d_v"] * mlp)  # RadioMLP: int(hidden_size * mlp_ratio), as Python computes it
    if sizes["d_ff_v"] < 1:
        raise SymgptError(f"{v.where}: hidden_size × mlp_ratio must be at least 1")
    if v.bool("use_swiglu_ffn", False):  # RadioSwiGLUFFN: two thirds of it, rounded up to a multiple of 8
        sizes["d_ff_v"] = ((2 * sizes["d_ff_v"]) // 3 + 7) // 8 * 8
    side = v.int("max_img_size", 2048) // sizes["P_patch"]
    if side < 1:
        raise SymgptError(f"{v.where}: max_img_size must be at least patch_size")
    frames, _ = v.get("video_temporal_patch_size", None)
    if frames is not None and (not isinstance(frames, int) or isinstance(frames, bool) or frames < 2):
        raise SymgptError(f"{v.where}: video_temporal_patch_size must be an integer of at least 2 or null")
    ratio = f.fraction("downsample_ratio", 0.5)
    width = f.int("vision_hidden_size", 1280)
    flags.update(radio_positions=side * side,
                 radio_prefix=v.int("num_cls_tokens", 3, minimum=0) + v.int("num_registers", 7, minimum=0) or None,
                 radio_video_frames=frames, radio_qkv_bias=v.bool("qkv_bias", True),
                 radio_swiglu=v.bool("use_swiglu_ffn", False), omni_merged=width * int(1 / float(ratio)) ** 2,
                 omni_projector=f.int("projector_hidden_size", 4096), omni_final_norm=isinstance(mtp, int) and mtp > 0,
                 omni_vision_width=width)
    v.silent("patch_dim", "video_patch_dim", "image_size", "summary_idxs", "norm_mean", "norm_std", "layerscale_value",
             "drop_path_rate", "hidden_dropout_prob", "attention_probs_dropout_prob", *COMMON)
    note_leftovers(f, v, "vision_config")
    f.silent("force_image_size", "video_pruning_rate", "video_temporal_patch_size", "image_token_id",
             "video_token_id", "audio_token_id", *COMMON)
    f.notes.append(NOT_RUN.format(what="vision tower", input="an image or a video", n="N_img"))
    return "nemotron_h_omni", flags, sizes


READERS = {"ovis2": Reader(read_ovis2, ("Ovis2ForConditionalGeneration",)),
           "omniasr": Reader(read_omniasr, ("OmniASRForConditionalGeneration",)),
           "fun_asr_nano": Reader(read_fun_asr_nano, ("FunAsrNanoForConditionalGeneration",)),
           "nemotron_h_omni": Reader(read_nemotron_h_omni, ("NemotronH_Omni_Reasoning_V3",))}

PRESETS: tuple = ()

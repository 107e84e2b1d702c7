"""SeamlessM4T and SeamlessM4T v2, speech to text (Seamless Communication 2023; transformers'
``SeamlessM4TForSpeechToText``, ``SeamlessM4Tv2ForSpeechToText``): a Conformer speech encoder
(held, ``blocks/seamless_m4t.py``) and a pre-LN text decoder. Counted: every parameter of the
speech-to-text class, and the decoder's forward given the encoder's output of T_enc positions
(transformers' ``encoder_outputs``); audio input to the encoder is not modelled (N_aud must be 0).
The other SeamlessM4T classes (text encoder, text-to-unit model, vocoder) are not read.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader

FLAGS = {"activation": "relu", "embed_scale": True, "dropout": False, "loss": True, "feat_in": 160,
         "audio_pos": "relative", "audio_pos_rows": 73, "audio_conv_kernel": 31, "adapter_layers": 1,
         "adapter_kernel": 8}
CHOICES = {"activation": ("relu", "gelu", "gelu_tanh", "gelu_new", "silu"),
           "audio_pos": ("relative", "relative_key", "rotary", "none")}
FLAG_HELP = {
    "activation": "the decoder FFN's activation (activation_function)",
    "embed_scale": "the decoder's token embeddings are multiplied by sqrt(d) (scale_embedding)",
    "dropout": "dropout layers present (masks saved for backward)",
    "loss": "the graph ends in the cross-entropy loss over the T_dec positions",
    "feat_in": "the speech encoder's input features a frame (feature_projection_input_dim)",
    "audio_pos": "the speech encoder's positions (position_embeddings_type): relative (linear_pos, pos_bias_u, "
                 "pos_bias_v), relative_key (a distance_embedding: v2), rotary or none (no parameters)",
    "audio_pos_rows": "the distance_embedding's rows with relative_key (left_ + right_max_position_embeddings + 1)",
    "audio_conv_kernel": "the convolution module's depthwise kernel (conv_depthwise_kernel_size)",
    "adapter_layers": "the adapter's layers (num_adapter_layers; 0 without add_adapter)",
    "adapter_kernel": "the adapter's convolutions' kernel (adaptor_kernel_size)",
}

FAMILIES = tuple(Family(
    name=n, description=f"{t} (speech to text): a Conformer speech encoder (held: audio input is not modelled), a "
                        "pre-LN text decoder with cross-attention over the encoder's output",
    flags={**FLAGS, **over}, sizes=("L", "d", "h", "d_ff", "V", "L_a", "h_a", "d_ff_a", "N_aud"), optional=("T_enc",),
    build=partial(Ref("symgpt.families.blocks.seamless_m4t", "build"), name=n), flag_help=FLAG_HELP, choices=CHOICES)
    for n, t, over in (("seamless_m4t", "SeamlessM4T", {}),
                       ("seamless_m4t_v2", "SeamlessM4T v2", {"audio_pos": "relative_key"})))

#: fields of the other SeamlessM4T classes (text encoder, text-to-unit model, vocoder), of
#: generation, and of the held encoder's forward (strides, chunked attention, dropouts)
_ELSEWHERE = (
    "adaptor_dropout", "adaptor_stride", "char_vocab_size", "decoder_layerdrop", "encoder_attention_heads",
    "encoder_ffn_dim", "encoder_layerdrop", "encoder_layers", "lang_embed_dim", "leaky_relu_slope", "max_new_tokens",
    "max_source_positions", "num_conv_pos_embedding_groups", "num_conv_pos_embeddings", "resblock_dilation_sizes",
    "resblock_kernel_sizes", "rotary_embedding_base", "sampling_rate", "speech_encoder_chunk_size",
    "speech_encoder_dropout", "speech_encoder_layerdrop", "speech_encoder_left_chunk_num", "spkr_embed_dim",
    "t2u_bos_token_id", "t2u_decoder_attention_heads", "t2u_decoder_ffn_dim", "t2u_decoder_layers",
    "t2u_decoder_start_token_id", "t2u_encoder_attention_heads", "t2u_encoder_ffn_dim", "t2u_encoder_layers",
    "t2u_eos_token_id", "t2u_max_new_tokens", "t2u_max_position_embeddings", "t2u_pad_token_id",
    "t2u_variance_pred_dropout", "t2u_variance_predictor_embed_dim", "t2u_variance_predictor_hidden_dim",
    "t2u_variance_predictor_kernel_size", "t2u_vocab_size", "unit_embed_dim", "unit_hifi_gan_vocab_size",
    "upsample_initial_channel", "upsample_kernel_sizes", "upsample_rates", "var_pred_dropout",
    "variance_predictor_kernel_size", "vocoder_num_langs", "vocoder_num_spkrs", "vocoder_offset",
    "max_position_embeddings")


def read(f: Fields):
    """transformers' SeamlessM4TConfig or SeamlessM4Tv2Config, as the SpeechToText class."""
    name = f.cfg.get("model_type", "seamless_m4t")
    v2 = name == "seamless_m4t_v2"
    sizes = {"V": f.int("vocab_size", 256102), "d": f.int("hidden_size", 1024), "L": f.int("decoder_layers", 24),
             "h": f.int("decoder_attention_heads", 16), "d_ff": f.int("decoder_ffn_dim", 8192),
             "L_a": f.int("speech_encoder_layers", 24), "h_a": f.int("speech_encoder_attention_heads", 16),
             "d_ff_a": f.int("speech_encoder_intermediate_size", 4096), "N_aud": 0}
    if not f.bool("tie_word_embeddings", True):
        raise SymgptError(f"{f.where}: untied token tables (tie_word_embeddings false) are not modelled")
    pos = f.get("position_embeddings_type", "relative_key" if v2 else "relative")[0]
    allowed = ("relative_key", None) if v2 else ("relative", "rotary", None)
    if pos not in allowed:
        raise SymgptError(f"{f.where}: position_embeddings_type {str(pos)[:20]!r} is not one transformers' "
                          f"{'v2 ' if v2 else ''}speech encoder builds")
    rows = f.int("left_max_position_embeddings", 64) + f.int("right_max_position_embeddings", 8) + 1 if v2 else None
    adapter = f.bool("add_adapter", True)
    layers = f.int("num_adapter_layers", 1, minimum=0)
    f.str("speech_encoder_hidden_act", "swish")
    flags = {"activation": f.activation("activation_function", "relu"), "embed_scale": f.bool("scale_embedding", True),
             "feat_in": f.int("feature_projection_input_dim", 160), "audio_pos": pos or "none",
             "audio_pos_rows": rows, "audio_conv_kernel": f.int("conv_depthwise_kernel_size", 31),
             "adapter_layers": (layers if adapter else 0) or None, "adapter_kernel": f.int("adaptor_kernel_size", 8)}
    f.silent(*_ELSEWHERE, "left_max_position_embeddings", "right_max_position_embeddings")
    f.notes.append(f"audio input is not modelled for {'SeamlessM4T v2' if v2 else 'SeamlessM4T'}: the Conformer "
                   "speech encoder is held, its parameters counted; N_aud must be 0. The forward counted is the text "
                   "decoder's given the encoder's output of T_enc positions (transformers' encoder_outputs, which "
                   "generate passes after its first step), its token table shared with lm_head")
    return name, flags, sizes


READERS = {"seamless_m4t": Reader(read, ("SeamlessM4TForSpeechToText",)),
           "seamless_m4t_v2": Reader(read, ("SeamlessM4Tv2ForSpeechToText",))}

PRESETS: tuple = ()

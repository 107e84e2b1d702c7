"""SpeechT5 (Ao et al. 2022; transformers' ``SpeechT5ForSpeechToText``): a speech encoder held
(``blocks/speecht5.py``: wav2vec 2.0's feature encoder, convolutional positions, L_a post-LN
layers with relative positions) and a post-LN text decoder. Counted: every parameter, and the
decoder's forward given the encoder's output of T_enc positions (transformers' ``encoder_outputs``);
audio input to the encoder is not modelled (N_aud must be 0).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader

FLAGS = {"activation": "gelu", "embed_scale": False, "tied": True, "dropout": False, "loss": True}
CHOICES = {"activation": ("gelu", "gelu_tanh", "gelu_new", "relu", "silu")}
FLAG_HELP = {"activation": "the feed-forwards' activation (hidden_act)",
             "embed_scale": "the decoder's token embeddings are multiplied by sqrt(d) (scale_embedding)",
             "tied": "lm_head shares the decoder's token embedding (tie_word_embeddings)",
             "dropout": "dropout layers present (masks saved for backward)",
             "loss": "the graph ends in the cross-entropy loss over the T_dec positions"}

#: the speech encoder's shape (SpeechT5Config's defaults)
ADDED = {"feat_channels": 512, "feat_layers": 7, "feat_kernel": 10, "feat_kernel_rest": 15, "feat_norm": "group",
         "feat_bias": False, "pos_conv_kernel": 128, "pos_conv_groups": 16, "masked_embed": True,
         "rel_positions": 160}
ADDED_HELP = {
    "feat_channels": "the feature encoder's channels, one width for every convolution (conv_dim)",
    "feat_layers": "the feature encoder's convolutions (num_feat_extract_layers)",
    "feat_kernel": "the first convolution's kernel (conv_kernel[0])",
    "feat_kernel_rest": "the other convolutions' kernels summed (sum of conv_kernel[1:]; each c -> c)",
    "feat_norm": "group (a GroupNorm after the first convolution) or layer (a LayerNorm after each): "
                 "feat_extract_norm",
    "feat_bias": "the feature encoder's convolutions have biases (conv_bias)",
    "pos_conv_kernel": "the convolutional positions' kernel (num_conv_pos_embeddings)",
    "pos_conv_groups": "the convolutional positions' groups (num_conv_pos_embedding_groups)",
    "masked_embed": "a masked_spec_embed vector of d (mask_time_prob or mask_feature_prob above 0)",
    "rel_positions": "the encoder's relative-position reach R: pe_k holds 2·R rows (encoder_max_relative_position)",
}

FAMILIES = (Family(
    name="speecht5",
    description="SpeechT5 (speech to text): a wav2vec 2.0-style speech encoder (held: audio input is not "
                "modelled), a post-LN text decoder with cross-attention over the encoder's output",
    flags={**FLAGS, **ADDED}, sizes=("L", "d", "h", "V", "d_ff", "L_a", "h_a", "d_ff_a", "N_aud"), optional=("T_enc",),
    build=partial(Ref("symgpt.families.blocks.speecht5", "build"), name="speecht5"),
    flag_help={**FLAG_HELP, **ADDED_HELP}, choices={**CHOICES, "feat_norm": ("group", "layer")}),)

_ELSEWHERE = ("apply_spec_augment", "mask_time_length", "mask_time_min_masks", "mask_feature_length",
              "mask_feature_min_masks", "encoder_layerdrop", "decoder_layerdrop", "positional_dropout",
              "feat_proj_dropout", "max_speech_positions", "use_guided_attention_loss",
              "guided_attention_loss_num_heads", "guided_attention_loss_sigma", "guided_attention_loss_scale",
              "num_mel_bins", "reduction_factor", "speaker_embedding_dim", "speech_decoder_postnet_dropout",
              "speech_decoder_postnet_kernel", "speech_decoder_postnet_layers", "speech_decoder_postnet_units",
              "speech_decoder_prenet_dropout", "speech_decoder_prenet_layers", "speech_decoder_prenet_units",
              "max_text_positions")


def read_feature_encoder(f: Fields) -> dict:
    """wav2vec 2.0's feature encoder and convolutional positions (SpeechT5Config, Wav2Vec2Config)."""
    dims, _ = f.get("conv_dim", [512] * 7)
    kernels, _ = f.get("conv_kernel", [10, 3, 3, 3, 3, 2, 2])
    f.get("conv_stride", [5, 2, 2, 2, 2, 2, 2])
    n = f.int("num_feat_extract_layers", 7)
    if (not isinstance(dims, list) or not isinstance(kernels, list) or len(dims) != n or len(kernels) != n
            or len(set(dims)) != 1 or not all(isinstance(x, int) and x > 0 for x in dims + kernels)):
        raise SymgptError(f"{f.where}: conv_dim {str(dims)[:60]} is not one width for each of the {n} convolutions "
                          "(the feature encoder modelled)")
    norm = f.str("feat_extract_norm", "group")
    if norm not in ("group", "layer"):
        raise SymgptError(f"{f.where}: feat_extract_norm {norm[:20]!r} is not group or layer")
    f.str("feat_extract_activation", "gelu")
    probs = [f.get(k, v)[0] for k, v in (("mask_time_prob", 0.05), ("mask_feature_prob", 0.0))]
    if not all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in probs):
        raise SymgptError(f"{f.where}: mask_time_prob and mask_feature_prob must be numbers")
    masked = any(p > 0 for p in probs)  # SpeechT5SpeechEncoderPrenet, Wav2Vec2Model: masked_spec_embed then
    return {"feat_channels": dims[0], "feat_layers": n, "feat_kernel": kernels[0],
            "feat_kernel_rest": sum(kernels[1:]) or None, "feat_norm": norm, "feat_bias": f.bool("conv_bias", False),
            "pos_conv_kernel": f.int("num_conv_pos_embeddings", 128),
            "pos_conv_groups": f.int("num_conv_pos_embedding_groups", 16), "masked_embed": masked}


def read(f: Fields):
    """transformers' SpeechT5Config, as SpeechT5ForSpeechToText."""
    d = f.int("hidden_size", 768)
    sizes = {"V": f.int("vocab_size", 81), "d": d, "L": f.int("decoder_layers", 6),
             "h": f.int("decoder_attention_heads", 12), "d_ff": f.int("decoder_ffn_dim", 3072),
             "L_a": f.int("encoder_layers", 12),
             "h_a": f.int("encoder_attention_heads", 12), "d_ff_a": f.int("encoder_ffn_dim", 3072), "N_aud": 0}
    flags = {**read_feature_encoder(f), "rel_positions": f.int("encoder_max_relative_position", 160),
             "activation": f.activation("hidden_act", "gelu"), "embed_scale": f.bool("scale_embedding", False),
             "tied": f.bool("tie_word_embeddings", True)}
    f.silent(*_ELSEWHERE)
    f.notes.append("audio input is not modelled for SpeechT5: the speech encoder (feature encoder, convolutional "
                   "positions, encoder layers) is held, its parameters counted; N_aud must be 0. The forward counted "
                   "is the text decoder's given the encoder's output of T_enc positions (transformers' "
                   "encoder_outputs, which generate passes after its first step)")
    return "speecht5", flags, sizes


READERS = {"speecht5": Reader(read, ("SpeechT5ForSpeechToText",))}

PRESETS: tuple = ()

"""Speech2Text (Wang et al. 2020, "fairseq S2T"): a convolutional subsampler (stride-2
convolutions, each with a GLU) before a pre-LN Transformer encoder--decoder with sinusoidal
positions (``blocks/speech_to_text.py`` builds it), counted as transformers'
``Speech2TextForConditionalGeneration`` (or ``Speech2TextModel``: no head).

The encoder's length T_enc is the filterbank frames / 2^conv_layers (4 with two convolutions: 100
frames a second at fairseq's 10-ms shift, 25 positions a second); the frames are not padded to a
fixed length."""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader

FLAGS = {"activation": "relu", "embed_scale": True, "tied": True, "head": "lm", "dropout": False, "loss": True,
         "conv_layers": 2, "conv_kernel": 5, "conv_channels": 1024}
CHOICES = {"head": ("lm", "none"), "activation": ("relu", "gelu", "gelu_tanh", "gelu_new", "silu")}
FLAG_HELP = {
    "activation": "the MLPs' activation (activation_function)",
    "embed_scale": "the subsampler's output and the decoder's token embeddings are multiplied by sqrt(d) "
                   "(scale_embedding)",
    "tied": "lm_head shares the decoder's token embedding",
    "head": "lm (lm_head and the loss: Speech2TextForConditionalGeneration) or none (Speech2TextModel)",
    "dropout": "dropout layers present (masks saved for backward)",
    "loss": "the graph ends in the cross-entropy loss over the T_dec positions",
    "conv_layers": "stride-2 convolutions of the subsampler (num_conv_layers): T_enc = frames / 2^conv_layers",
    "conv_kernel": "the subsampler's kernel width (conv_kernel_sizes, one width for every layer)",
    "conv_channels": "the output channels of the subsampler's inner convolutions (before their GLU halves them)",
}

FAMILIES = (Family(
    name="speech_to_text",
    description="Speech2Text: stride-2 convolutions with GLUs over filterbank frames, pre-LN encoder-decoder, "
                "sinusoidal positions (Speech2TextForConditionalGeneration)",
    flags=FLAGS, sizes=("L", "L_dec", "d", "h", "V", "d_ff", "N_mel"),
    build=partial(Ref("symgpt.families.blocks.speech_to_text", "build"), name="speech_to_text"),
    flag_help=FLAG_HELP, choices=CHOICES),)

HEADS = {"Speech2TextForConditionalGeneration": "lm", "Speech2TextModel": "none"}


def read(f: Fields):
    """transformers' Speech2TextConfig."""
    sizes = {"V": f.int("vocab_size", 10000), "d": f.int("d_model", 256), "L": f.int("encoder_layers", 12),
             "L_dec": f.int("decoder_layers", 6), "h": f.int("encoder_attention_heads", 4),
             "d_ff": f.int("encoder_ffn_dim", 2048),
             "N_mel": f.int("input_feat_per_channel", 80) * f.int("input_channels", 1)}
    if f.int("decoder_attention_heads", 4) != sizes["h"] or f.int("decoder_ffn_dim", 2048) != sizes["d_ff"]:
        raise SymgptError(f"{f.where}: encoder and decoder with different heads or FFN widths are not "
                          "supported (one h and one d_ff)")
    kernels, _ = f.get("conv_kernel_sizes", [5, 5])
    layers = f.int("num_conv_layers", 2)
    if (not isinstance(kernels, list) or len(kernels) != layers or len(set(kernels)) != 1
            or not all(isinstance(k, int) and k % 2 == 1 for k in kernels)):
        raise SymgptError(f"{f.where}: conv_kernel_sizes {str(kernels)[:60]} is not one odd width for each of the "
                          f"{layers} convolutions (the subsampler modelled)")
    f.used.update({"max_source_positions", "max_target_positions", "encoder_layerdrop", "decoder_layerdrop",
                   "init_std", "decoder_start_token_id", "classifier_dropout"})
    flags = {"activation": f.activation("activation_function", "relu"),
             "embed_scale": f.bool("scale_embedding", True), "tied": f.bool("tie_word_embeddings", True),
             "head": HEADS[f.architecture or "Speech2TextForConditionalGeneration"],
             "conv_layers": layers, "conv_kernel": kernels[0], "conv_channels": f.int("conv_channels", 1024)}
    f.notes.append(f"audio: T_enc = filterbank frames / {2 ** layers} (the subsampler's {layers} stride-2 "
                   f"convolutions); the positions are sinusoids (a buffer, no parameters), not padded to a fixed length")
    return "speech_to_text", flags, sizes


READERS = {"speech_to_text": Reader(read, tuple(HEADS))}

PRESETS: tuple = ()

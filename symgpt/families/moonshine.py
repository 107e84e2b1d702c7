"""Moonshine (Jeffries et al. 2024; transformers' ``MoonshineForConditionalGeneration``): unpadded
convolutions over raw samples, a pre-LN encoder--decoder with an interleaved partial rotary, a
gated decoder MLP, a tied head (``blocks/moonshine.py`` builds it).

T_enc is the encoder's positions (about 41.7 a second of 16 kHz audio); the graph reads the
shortest input of T_enc positions (384·T_enc + 511 samples). The rotated dimensions of each head
are a flag, ``int(head_dim · partial_rotary_factor)`` of the config read (32 of 36 at 0.9)."""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader

_ACTS = ("gelu", "gelu_tanh", "gelu_new", "relu", "silu")
FLAGS = {"activation": "silu", "encoder_activation": "gelu", "attention_bias": False, "rotary_dims": 32,
         "tied": True, "head": "lm", "dropout": False, "loss": True}
CHOICES = {"head": ("lm", "none"), "activation": _ACTS, "encoder_activation": _ACTS}
FLAG_HELP = {
    "activation": "the decoder's gated MLP activation (decoder_hidden_act)",
    "encoder_activation": "the encoder's MLP activation (encoder_hidden_act)",
    "attention_bias": "Q/K/V projections with biases (attention_bias; the output projection has none)",
    "rotary_dims": "the rotated dimensions of each head (int(head_dim·partial_rotary_factor))",
    "tied": "proj_out shares the decoder's token embedding",
    "head": "lm (proj_out and the loss: MoonshineForConditionalGeneration) or none (MoonshineModel)",
    "dropout": "dropout layers present (masks saved for backward)",
    "loss": "the graph ends in the cross-entropy loss over the T_dec positions",
}

FAMILIES = (Family(
    name="moonshine",
    description="Moonshine: unpadded convolutions over raw samples, pre-LN encoder-decoder, partial rotary, "
                "gated decoder MLP (MoonshineForConditionalGeneration)",
    flags=FLAGS, sizes=("L", "L_dec", "d", "h", "d_ff", "V"),
    build=partial(Ref("symgpt.families.blocks.moonshine", "build"), name="moonshine"),
    flag_help=FLAG_HELP, choices=CHOICES),)

HEADS = {"MoonshineForConditionalGeneration": "lm", "MoonshineModel": "none"}


def read(f: Fields):
    """transformers' MoonshineConfig."""
    sizes = {"V": f.int("vocab_size", 32768), "d": f.int("hidden_size", 288), "d_ff": f.int("intermediate_size", 1152),
             "L": f.int("encoder_num_hidden_layers", 6), "L_dec": f.int("decoder_num_hidden_layers", 6),
             "h": f.int("encoder_num_attention_heads", 8)}
    if f.int("decoder_num_attention_heads", 8) != sizes["h"]:
        raise SymgptError(f"{f.where}: encoder and decoder with different heads are not supported (one h)")
    for key in ("encoder_num_key_value_heads", "decoder_num_key_value_heads"):
        kv = f.int(key, None, optional=True)
        if kv is not None and kv != sizes["h"]:
            raise SymgptError(f"{f.where}: {key} {kv} < {sizes['h']} heads (grouped key/value heads) is not modelled")
    if f.int("pad_head_dim_to_multiple_of", None, optional=True) is not None:
        raise SymgptError(f"{f.where}: pad_head_dim_to_multiple_of (heads padded before attention) is not modelled")
    if sizes["d"] % sizes["h"]:
        raise SymgptError(f"{f.where}: hidden_size {sizes['d']} is not a multiple of the {sizes['h']} heads")
    rope, _ = f.get("rope_parameters", {"rope_type": "default", "partial_rotary_factor": 0.9})  # MoonshineConfig's
    factor = (rope or {}).get("partial_rotary_factor", 1.0) if isinstance(rope, dict) else 1.0
    if not isinstance(rope, dict) or (rope or {}).get("rope_type", "default") != "default":
        raise SymgptError(f"{f.where}: rope_parameters other than the default rotary are not modelled")
    dh = sizes["d"] // sizes["h"]
    rot = int(dh * factor)
    if rot < 2 or rot % 2:
        raise SymgptError(f"{f.where}: a rotary of {rot} dimensions a head is not modelled (an even number >= 2)")
    f.used.update({"max_position_embeddings", "decoder_start_token_id", "initializer_range", "attention_dropout"})
    flags = {"activation": f.activation("decoder_hidden_act", "silu"),
             "encoder_activation": f.activation("encoder_hidden_act", "gelu"),
             "attention_bias": f.bool("attention_bias", False), "rotary_dims": rot,
             "tied": f.bool("tie_word_embeddings", True),
             "head": HEADS[f.architecture or "MoonshineForConditionalGeneration"]}
    f.notes.append("audio: raw 16 kHz samples through convolutions of strides 64, 3 and 2 (no padding): T_enc "
                   "positions from 384·T_enc + 511 samples on (about 41.7 a second); the graph reads that shortest "
                   "input: a longer one of the same T_enc (up to 383 more samples) runs conv1 and conv2 over a few "
                   "more positions, which is not counted")
    return "moonshine", flags, sizes


READERS = {"moonshine": Reader(read, tuple(HEADS))}

PRESETS: tuple = ()

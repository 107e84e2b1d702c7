"""transformers' ``SpeechEncoderDecoderModel`` with a wav2vec 2.0 encoder and a BERT decoder (the
default ``SpeechEncoderDecoderConfig`` pairs ``Wav2Vec2Model`` with ``BertLMHeadModel``; Li et al.
2021's speech-to-text fine-tuning).

The encoder (``encoder``: Wav2Vec2Model) is held, its parameters declared at transformers' module
paths, not run: the feature encoder and its projection (``blocks/speecht5.py``), a
``masked_spec_embed`` of d_a when SpecAugment is on, the convolutional positions, a LayerNorm and
L_a layers (q, k, v, out projections with biases, a LayerNorm, intermediate_dense d_a -> d_ff_a
and output_dense back, a final LayerNorm; post-LN, or pre-LN with ``do_stable_layer_norm``: the
same parameters).

The decoder is BERT with cross-attention (``blocks/vision_encoder_decoder.py``'s embeddings and
attention), counted given the encoder's output of T_enc positions (transformers'
``encoder_outputs``), mapped d_a -> d by ``enc_to_dec_proj`` where the widths differ.
"""

from __future__ import annotations

from ... import ops
from ...core.symbols import B, L, N_aud, T_dec, T_enc, T_max, d, d_a, d_ff_a, h, L_a
from ...graph import roles as R
from ...graph.arch import Builder
from .held_audio import layer_norm, linear, one, refuse_audio
from .speecht5 import feature_encoder
from .vision_encoder_decoder import bert_decoder


def _encoder(g, flags):
    feature_encoder(g, "encoder", flags, width=d_a, pos_prefix="encoder/encoder", name="feature_extractor")
    layer_norm(g, "encoder/encoder/layer_norm", d_a)
    with g.repeat("encoder/encoder/layers", L_a, label="wav2vec 2.0 layer (held)", role=R.STACK, length=one()):
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            linear(g, f"attention/{n}", d_a, d_a, True)
        layer_norm(g, "layer_norm", d_a)
        linear(g, "feed_forward/intermediate_dense", d_a, d_ff_a, True)
        linear(g, "feed_forward/output_dense", d_ff_a, d_a, True)
        layer_norm(g, "final_layer_norm", d_a)
    refuse_audio(g, N_aud, "SpeechEncoderDecoderModel")


def build(flags, bound, name="speech-encoder-decoder"):
    drop = bool(flags["dropout"])
    g = Builder(name, declared_roles=True)
    g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    g.require("le", T_dec - T_max, "T_dec must not exceed T_max, the length of the decoder's position table",
              id="length_within_positions")
    _encoder(g, flags)
    width = d_a if flags["enc_proj"] else d  # without a projection the encoder's width is d (required below)
    enc = g.input("encoder_hidden_states", (B, T_enc, width), dtype="act", label="the encoder's output (given)",
                  role=R.AUDIO)                                                               # (B, T_enc, d_a)
    if flags["enc_proj"]:
        enc = g.op("enc_to_dec_proj", ops.Linear(d_a, d, bias=True), enc, role=R.AUDIO_PROJECTOR,
                   label="enc_to_dec_proj d_a -> d")
    else:
        for diff, side in ((d_a - d, "above"), (d - d_a, "below")):
            g.require("le", diff, f"the encoder's width d_a must equal d (no enc_to_dec_proj), not {side} it",
                      id=f"audio_width_not_{side}_d")
    return bert_decoder(g, flags, enc, L, drop)

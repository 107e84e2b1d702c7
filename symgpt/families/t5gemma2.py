"""T5Gemma 2 (Google 2025, "T5Gemma 2"; transformers' ``T5Gemma2ForConditionalGeneration``): an
encoder--decoder of Gemma 3 layers, the encoder with a SigLIP vision tower and Gemma 3's projector,
the decoder's attention merged over its own tokens and the encoder's (``blocks/t5gemma2.py``). The
decoder reads the encoder in every forward, so only the parameters are modelled: any request with a
sequence length is refused in one line.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, heads, note_leftovers, sub_fields
from .gemma2 import read_gemma3_text

_GEMMA3 = dict(activation="gelu_tanh", embed_scale=True, tied=True, gqa=True, norm_offset=True, local_rope=True,
               branch_norms=True, qk_norm="head", window=True, full_every=6)
_ADDED = {"enc_layers": 26, "enc_d": 2304, "enc_ff": 9216, "enc_heads": 8, "enc_kv_heads": 4, "enc_head_dim": 256,
          "enc_bias": False, "enc_vocab": 262208, "vision_head": True}
_HELP = {"enc_layers": "the encoder's layers (encoder.text_config.num_hidden_layers)",
         "enc_d": "the encoder's width", "enc_ff": "its MLP width", "enc_heads": "its heads",
         "enc_kv_heads": "its key/value heads", "enc_head_dim": "its head width",
         "enc_bias": "its attention projections have biases (attention_bias)",
         "enc_vocab": "its token table's rows (untied embeddings only)",
         "vision_head": "the SigLIP tower's attention-pooling head (vision_use_head)"}

FAMILIES = (Family(
    name="t5gemma2", description="T5Gemma 2: an encoder-decoder of Gemma 3 layers, a SigLIP tower in the encoder "
    "(parameters only)", flags=Extended(FLAGS, _GEMMA3, _ADDED),
    sizes=SIZES + ("d_v", "L_v", "d_ff_v", "S_img", "P_patch", "C_img", "N_img"), optional=OPTIONAL,
    build=partial(Ref("symgpt.families.blocks.t5gemma2", "build"), name="t5gemma2"),
    flag_help=Extended(FLAG_HELP, added=_HELP), choices=Extended(CHOICES)),)

_SILENT = ("initializer_range", "id2label", "label2id", "model_type", "dropout_rate", "attention_dropout",
           "use_cache", "pad_token_id", "bos_token_id", "eos_token_id", "is_encoder_decoder", "rms_norm_eps",
           "rope_parameters", "max_position_embeddings", "layer_types", "sliding_window", "hidden_activation",
           "query_pre_attn_scalar", "attn_logit_softcapping", "final_logit_softcapping", "tie_word_embeddings",
           "use_bidirectional_attention")


def read(f: Fields):
    """transformers' T5Gemma2Config: encoder (text_config, vision_config), decoder."""
    dec = sub_fields(f, "decoder")
    _, flags, sizes = read_gemma3_text(dec)
    dec.silent("dropout_rate", "model_type", "use_bidirectional_attention")
    note_leftovers(f, dec, "decoder")
    flags["tied"] = f.bool("tie_word_embeddings", True)
    enc = sub_fields(f, "encoder")
    t = sub_fields(enc, "text_config")
    esz = {"d": t.int("hidden_size", 2304), "h": t.int("num_attention_heads", 8)}
    heads(t, esz, kv_default=4, head_dim_default=256)
    if esz["d"] != sizes["d"] or t.int("vocab_size", 262208) != sizes["V"]:
        raise SymgptError(f"{f.where}: an encoder of another hidden_size or vocab_size than the decoder's is not "
                          "modelled (T5Gemma2Config refuses it)")
    flags.update(enc_layers=t.int("num_hidden_layers", 26), enc_d=esz["d"], enc_ff=t.int("intermediate_size", 9216),
                 enc_heads=esz["h"], enc_kv_heads=esz.get("h_kv", esz["h"]), enc_head_dim=esz.get("d_head", esz["d"] // esz["h"]),
                 enc_bias=t.bool("attention_bias", False), enc_vocab=sizes["V"])
    t.silent(*_SILENT)
    note_leftovers(enc, t, "text_config")
    v = sub_fields(enc, "vision_config")
    if v.cfg.get("model_type", "siglip_vision_model") != "siglip_vision_model":
        raise SymgptError(f"{v.where}: a vision tower other than siglip_vision_model is not modelled")
    sizes.update(d_v=v.int("hidden_size", 768), L_v=v.int("num_hidden_layers", 12), d_ff_v=v.int("intermediate_size", 3072),
                 S_img=v.int("image_size", 224), P_patch=v.int("patch_size", 16), C_img=v.int("num_channels", 3), N_img=0)
    if sizes["d_v"] % v.int("num_attention_heads", 12):
        raise SymgptError(f"{v.where}: hidden_size must be a multiple of num_attention_heads")
    flags["vision_head"] = v.bool("vision_use_head", True)
    v.silent("hidden_act", "layer_norm_eps", *_SILENT)
    note_leftovers(enc, v, "vision_config")
    enc.silent("mm_tokens_per_image", "boi_token_index", "eoi_token_index", "image_token_index", *_SILENT)
    note_leftovers(f, enc, "encoder")
    f.silent("classifier_dropout_rate", "eoi_token_index", "image_token_index", "vocab_size", *_SILENT)
    f.notes.append("parameters only: the decoder's merged attention reads the encoder's output in every forward, "
                   "and that forward is not modelled (a request with T is refused)")
    return "t5gemma2", flags, sizes


READERS = {"t5gemma2": Reader(read, ("T5Gemma2ForConditionalGeneration",))}

PRESETS: tuple = ()

"""Kosmos-2.5 (Lv et al. 2023, "Kosmos-2.5: A Multimodal Literate Model"; transformers'
``Kosmos2_5ForConditionalGeneration``): an XGLM-style decoder (Kosmos-2's, with a LayerNorm of the
FFN's hidden activations and none in the attention), a Pix2Struct-style vision encoder and a
latent-query resampler (``blocks/kosmos2_5.py``). A forward over token ids runs neither the encoder
nor the resampler (their parameters are held); N_img > 0 is refused in one line.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields
from .kosmos2 import XGLM_CHANGES
from .vlm_held import _EXTRA, _EXTRA_HELP

_ADDED = {**_EXTRA, "ffn_sub_norm": True, "queries": 2048, "tower_patch_width": 768, "tower_positions": 4096,
          "tower_heads": 24, "tower_head_dim": 64}
_HELP = {**_EXTRA_HELP,
         "ffn_sub_norm": "a LayerNorm of the FFN's hidden activations before fc2 (Kosmos2_5TextFFN.ffn_layernorm)",
         "queries": "latent queries of the resampler (latent_query_num)",
         "tower_patch_width": "the width of a flattened patch (patch_embed_hidden_size)",
         "tower_positions": "rows of the row and column tables (max_num_patches)",
         "tower_heads": "the vision encoder's heads", "tower_head_dim": "its head width (head_dim)"}

FAMILIES = (Family(
    name="kosmos-2.5", description="Kosmos-2.5: an XGLM-style decoder with FFN sub-LayerNorms, a Pix2Struct-style "
    "vision encoder and a latent-query resampler (held: a forward over token ids runs neither)",
    flags=Extended(FLAGS, XGLM_CHANGES, _ADDED), sizes=SIZES + ("d_v", "L_v", "d_ff_v", "N_img"), optional=OPTIONAL,
    build=partial(Ref("symgpt.families.blocks.kosmos2_5", "build"), name="kosmos-2.5"),
    flag_help=Extended(FLAG_HELP, added=_HELP), choices=Extended(CHOICES)),)

_SILENT = ("activation_dropout", "attention_dropout", "dropout", "init_std", "layer_norm_eps", "layerdrop", "use_cache",
           "bos_token_id", "eos_token_id", "pad_token_id", "is_encoder_decoder", "id2label", "label2id",
           "tie_word_embeddings", "model_type", "initializer_range", "initializer_factor", "dropout_rate",
           "dense_act_fn")


def read(f: Fields):
    """transformers' Kosmos2_5Config: text_config (Kosmos2_5TextConfig), vision_config."""
    t, v = sub_fields(f, "text_config"), sub_fields(f, "vision_config")
    sizes = {"V": t.int("vocab_size", 108481), "d": t.int("embed_dim", 1536), "d_ff": t.int("ffn_dim", 6144),
             "L": t.int("layers", 24), "h": t.int("attention_heads", 16),
             "T_max": t.int("max_position_embeddings", 4096)}
    if sizes["d"] % sizes["h"]:
        raise SymgptError(f"{t.where}: embed_dim must be a multiple of attention_heads")
    if f.cfg.get("tie_word_embeddings", True) is False or t.cfg.get("tie_word_embeddings", True) is False:
        raise SymgptError(f"{f.where}: a Kosmos-2.5 text model with an untied lm_head is not modelled")
    flags = {"tied": True, "embed_scale": t.bool("scale_embedding", True),
             "activation": t.activation("activation_function", "gelu"), "queries": f.int("latent_query_num", 2048)}
    t.silent(*_SILENT)
    note_leftovers(f, t, "text_config")
    sizes.update(d_v=v.int("hidden_size", 1536), L_v=v.int("num_hidden_layers", 18),
                 d_ff_v=v.int("intermediate_size", 3968), N_img=0)
    flags.update(tower_patch_width=v.int("patch_embed_hidden_size", 768), tower_positions=v.int("max_num_patches", 4096),
                 tower_heads=v.int("num_attention_heads", 24), tower_head_dim=v.int("head_dim", 64))
    v.silent("attention_dropout", "layer_norm_eps", *_SILENT)
    note_leftovers(f, v, "vision_config")
    f.silent("tie_word_embeddings", "is_encoder_decoder", "id2label", "label2id", "initializer_range")
    f.notes.append("the forward counted is over token ids, without an image: transformers runs neither the vision "
                   "encoder nor the resampler (their parameters are counted); the cost of an image is not modelled")
    return "kosmos-2.5", flags, sizes


READERS = {"kosmos-2.5": Reader(read, ("Kosmos2_5ForConditionalGeneration",))}

PRESETS: tuple = ()

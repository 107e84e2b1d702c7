"""Kosmos-2 (Peng et al. 2023; transformers' ``Kosmos2ForConditionalGeneration``): CLIP's vision
tower, a latent-query resampler and an XGLM-style text decoder with sub-LayerNorms
(``blocks/kosmos2.py`` builds it). Images per sequence are the size N_img: a config is read with
N_img = 0 (text only); ``--set N_img=1`` counts one image, whose n_q latent-query outputs
(``latent_query_num``) T must count."""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields
from .vlm import VISION_CHOICES, VISION_FLAGS, VISION_HELP

XGLM_CHANGES = dict(norm="layernorm", ffn="mlp", qkv_bias=True, proj_bias=True, mlp_bias=True, tied=True,
                    embed_scale=True, positions="sinusoidal", activation="gelu")
ADDED = {**VISION_FLAGS, "vision_tower": "clip", "vision_activation": "gelu", "queries": 64, "projection_heads": 32,
         "sub_norms": True}
HELP = {**VISION_HELP, "queries": "latent queries, the image tokens the decoder sees per image (latent_query_num)",
        "projection_heads": "heads of the resampler's attention (the text model's attention_heads)",
        "sub_norms": "a LayerNorm of the merged heads before out_proj and of the FFN's hidden activations before "
                     "fc2 (inner_attn_ln, ffn_layernorm)"}
VISION_SIZES = ("d_v", "h_v", "L_v", "d_ff_v", "S_img", "P_patch", "C_img", "N_img")

FAMILIES = (Family(
    name="kosmos-2",
    description="Kosmos-2: CLIP vision tower, latent-query resampler, XGLM-style decoder with sub-LayerNorms",
    flags=Extended(FLAGS, XGLM_CHANGES, ADDED), sizes=SIZES + VISION_SIZES, optional=OPTIONAL,
    build=partial(Ref("symgpt.families.blocks.kosmos2", "build"), name="kosmos-2"),
    flag_help=Extended(FLAG_HELP, added=HELP), choices=Extended(CHOICES, added=VISION_CHOICES)),)


def read(f: Fields):
    """transformers' Kosmos2Config: text_config (Kosmos2TextConfig), vision_config (Kosmos2VisionConfig)."""
    from .vlm import read_clip

    t, v = sub_fields(f, "text_config"), sub_fields(f, "vision_config")
    sizes = {"V": t.int("vocab_size", 65037), "d": t.int("embed_dim", 2048), "d_ff": t.int("ffn_dim", 8192),
             "L": t.int("layers", 24), "h": t.int("attention_heads", 32), "T_max": t.int("max_position_embeddings", 2048)}
    if t.bool("add_cross_attention", False):
        raise SymgptError(f"{f.where}: a Kosmos-2 text model with add_cross_attention is not modelled")
    flags = {"tied": True, "embed_scale": t.bool("scale_embedding", True),
             "activation": t.activation("activation_function", "gelu"), "projection_heads": sizes["h"],
             "queries": f.int("latent_query_num", 64)}
    if f.cfg.get("tie_word_embeddings", True) is False or t.cfg.get("tie_word_embeddings", True) is False:
        raise SymgptError(f"{f.where}: a Kosmos-2 text model with an untied lm_head is not modelled")
    t.silent("activation_dropout", "attention_dropout", "dropout", "init_std", "layer_norm_eps", "layerdrop",
             "use_cache", "bos_token_id", "eos_token_id", "pad_token_id", "is_encoder_decoder", "id2label",
             "label2id", "tie_word_embeddings")
    read_clip(v, flags, sizes, True)
    sizes.update(d_v=v.int("hidden_size", 1024), L_v=v.int("num_hidden_layers", 24),
                 h_v=v.int("num_attention_heads", 16), d_ff_v=v.int("intermediate_size", 4096),
                 S_img=v.int("image_size", 224), P_patch=v.int("patch_size", 14), N_img=0)
    f.notes.extend(v.notes)
    v.silent("is_encoder_decoder")
    note_leftovers(f, t, "text_config")
    note_leftovers(f, v, "vision_config")
    f.silent("tie_word_embeddings", "is_encoder_decoder", "id2label", "label2id")
    f.notes.append(f"images: N_img per sequence (0 here; --set N_img=1 counts one); each gives {flags['queries']} "
                   "latent-query outputs that take the places of image tokens: T counts them")
    return "kosmos-2", flags, sizes


READERS = {"kosmos-2": Reader(read, ("Kosmos2ForConditionalGeneration",))}

PRESETS: tuple = ()

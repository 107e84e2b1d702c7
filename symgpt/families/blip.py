"""BLIP (Li et al. 2022; transformers' ``BlipForConditionalGeneration``): BLIP's vision model and a
BERT text decoder with cross-attention onto the image (``blocks/blip.py`` builds it). One image
per sequence of T text tokens; the image's n = (S_img/P_patch)² + 1 positions are the decoder's
memory."""

from __future__ import annotations

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader, note_leftovers, sub_fields

_ACTS = ("gelu", "gelu_tanh", "relu", "silu")
FAMILIES = (Family(
    name="blip",
    description="BLIP: a ViT vision model and a BERT text decoder with cross-attention onto the image",
    flags={"vision_activation": "gelu", "activation": "gelu", "dropout": False, "loss": True},
    sizes=("L", "d", "h", "d_ff", "V", "T_max", "d_v", "h_v", "L_v", "d_ff_v", "S_img", "P_patch", "C_img"),
    build=Ref("symgpt.families.blocks.blip", "build"),
    flag_help={"vision_activation": "the vision model's MLP activation",
               "activation": "the text decoder's MLP and prediction-head activation",
               "dropout": "dropout layers present (masks saved for backward)",
               "loss": "the graph ends in the cross-entropy loss over the T positions"},
    choices={"vision_activation": _ACTS, "activation": _ACTS}),)

_SILENT = ("attention_dropout", "attention_probs_dropout_prob", "hidden_dropout_prob", "initializer_range",
           "layer_norm_eps", "id2label", "label2id", "chunk_size_feed_forward", "is_decoder", "is_encoder_decoder",
           "pad_token_id", "bos_token_id", "eos_token_id", "sep_token_id", "use_cache", "projection_dim",
           "label_smoothing", "tie_word_embeddings")


def read(f: Fields):
    """transformers' BlipConfig: vision_config (BlipVisionConfig), text_config (BlipTextConfig)."""
    from .blip2 import read_vision

    v, t = sub_fields(f, "vision_config"), sub_fields(f, "text_config")
    sizes: dict = {}
    flags = {}
    read_vision(f, v, sizes, flags)
    del sizes["N_img"]
    sizes.update({"d_v": v.int("hidden_size", 768), "h_v": v.int("num_attention_heads", 12),
                  "L_v": v.int("num_hidden_layers", 12), "d_ff_v": v.int("intermediate_size", 3072),
                  "S_img": v.int("image_size", 384), "P_patch": v.int("patch_size", 16)})
    sizes.update(L=t.int("num_hidden_layers", 12), d=t.int("hidden_size", 768), h=t.int("num_attention_heads", 8),
                 d_ff=t.int("intermediate_size", 3072), V=t.int("vocab_size", 30524),
                 T_max=t.int("max_position_embeddings", 512))
    if t.int("encoder_hidden_size", 768) != sizes["d_v"]:
        raise SymgptError(f"{f.where}: a BLIP text decoder whose encoder_hidden_size differs from the vision "
                          "width is not modelled")
    if t.cfg.get("tie_word_embeddings", True) is False or f.cfg.get("tie_word_embeddings", True) is False:
        raise SymgptError(f"{f.where}: a BLIP text decoder with an untied prediction head is not modelled")
    flags["activation"] = t.activation("hidden_act", "gelu")
    for name in ("vision_activation", "activation"):
        if flags[name] not in _ACTS:
            raise SymgptError(f"{f.where}: activation {flags[name]!r} is not modelled here")
    v.silent(*_SILENT)
    t.silent("encoder_hidden_size", *_SILENT)
    note_leftovers(f, v, "vision_config")
    note_leftovers(f, t, "text_config")
    f.silent("image_text_hidden_size", "initializer_factor", "initializer_range", "is_encoder_decoder", "id2label",
             "label2id", "tie_word_embeddings", "label_smoothing", "logit_scale_init_value", "projection_dim")
    f.notes.append(f"BLIP: one {sizes['S_img']} x {sizes['S_img']} image per sequence, whose "
                   f"{(sizes['S_img'] // sizes['P_patch']) ** 2 + 1:,} positions every text layer attends to")
    return "blip", flags, sizes


READERS = {"blip": Reader(read, ("BlipForConditionalGeneration",))}

PRESETS: tuple = ()

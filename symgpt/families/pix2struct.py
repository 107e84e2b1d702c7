"""Pix2Struct (Lee et al. 2023; transformers' ``Pix2StructForConditionalGeneration``): a
T5-style encoder over flattened image patches with row and column embeddings, and T5's decoder
with an untied LM head (``blocks/pix2struct.py`` builds it). T_enc is the number of patches
(``max_patches`` of ``Pix2StructImageProcessor``, padded patches included)."""

from __future__ import annotations

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader, note_leftovers, sub_fields
from .t5 import CHOICES, FLAG_HELP, FLAGS

FAMILIES = (Family(
    name="pix2struct",
    description="Pix2Struct: T5-style encoder over image patches (row/column embeddings), T5 decoder, untied head",
    flags={**FLAGS, "tied": False, "head_scale": False, "ffn": "gated", "activation": "gelu_new",
           "patch_width": 768, "max_rows": 4096},
    sizes=("L", "L_dec", "d", "h", "d_head", "V", "d_ff"),
    build=Ref("symgpt.families.blocks.pix2struct", "build"),
    flag_help={**FLAG_HELP, "patch_width": "pixel values per flattened patch (patch_embed_hidden_size)",
               "max_rows": "rows of the row and of the column embedding tables (seq_len)",
               "tied": "the LM head shares the token embedding (Pix2Struct: no)"},
    choices=CHOICES),)

_SILENT = ("dropout_rate", "attention_dropout", "initializer_factor", "initializer_range", "id2label", "label2id",
           "layer_norm_eps", "layer_norm_epsilon", "relative_attention_max_distance", "use_cache", "is_decoder",
           "is_encoder_decoder", "add_cross_attention", "decoder_start_token_id", "eos_token_id", "pad_token_id",
           "bos_token_id", "chunk_size_feed_forward", "tie_word_embeddings")


def read(f: Fields):
    """transformers' Pix2StructConfig: vision_config (Pix2StructVisionConfig), text_config
    (Pix2StructTextConfig); the defaults are pix2struct-base's."""
    v, t = sub_fields(f, "vision_config"), sub_fields(f, "text_config")
    sizes = {"d": t.int("hidden_size", 768), "h": t.int("num_heads", 12), "d_head": t.int("d_kv", 64),
             "d_ff": t.int("d_ff", 2048), "L_dec": t.int("num_layers", 12), "V": t.int("vocab_size", 50244)}
    enc = {"d": v.int("hidden_size", 768), "h": v.int("num_attention_heads", 12), "d_head": v.int("d_kv", 64),
           "d_ff": v.int("d_ff", 2048)}
    sizes["L"] = v.int("num_hidden_layers", 12)
    for k, val in enc.items():
        if val != sizes[k]:
            raise SymgptError(f"{f.where}: a Pix2Struct vision_config whose {k} ({val}) differs from the "
                              f"text_config's ({sizes[k]}) is not modelled")
    if sizes["h"] * sizes["d_head"] != sizes["d"]:
        raise SymgptError(f"{f.where}: Pix2Struct's text attention maps d to d: num_heads x d_kv must be "
                          f"hidden_size ({sizes['h']} x {sizes['d_head']} != {sizes['d']})")
    acts = {v.str("dense_act_fn", "gelu_new"), t.str("dense_act_fn", "gelu_new")}
    if acts != {"gelu_new"}:
        raise SymgptError(f"{f.where}: a Pix2Struct dense_act_fn other than gelu_new is not modelled")
    flags = {"tied": False, "head_scale": False, "ffn": "gated", "activation": "gelu_new",
             "buckets": t.int("relative_attention_num_buckets", 32),
             "patch_width": v.int("patch_embed_hidden_size", 768), "max_rows": v.int("seq_len", 4096)}
    v.silent("relative_attention_num_buckets", *_SILENT)
    t.silent(*_SILENT)
    note_leftovers(f, v, "vision_config")
    note_leftovers(f, t, "text_config")
    f.silent("is_vqa", "initializer_factor", "initializer_range", "decoder_start_token_id", "eos_token_id",
             "pad_token_id", "tie_word_embeddings", "id2label", "label2id", "is_encoder_decoder")
    f.notes.append("Pix2Struct: T_enc counts the flattened patches (Pix2StructImageProcessor's max_patches, "
                   "padding included); the lm_head is a V x d matrix of its own")
    return "pix2struct", flags, sizes


READERS = {"pix2struct": Reader(read, ("Pix2StructForConditionalGeneration",))}

PRESETS: tuple = ()

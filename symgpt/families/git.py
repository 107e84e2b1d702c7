"""GIT (Wang et al. 2022, "GIT: A Generative Image-to-text Transformer for Vision and Language";
transformers' ``GitForCausalLM``): a BERT-style text decoder run under a causal mask and its own
output layer, beside a held CLIP vision tower and visual projection (``blocks/git.py``). Counted:
every parameter and the forward over token ids; the cost of an image is not modelled (N_img must
be 0).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .bert_causal import CHOICES, FLAG_HELP, FLAGS
from .fields import NO_GENERATION, Fields, Reader, note_leftovers, sub_fields

_ADDED = {"tied": False, "vision_positions": 197, "image_embeddings": None}
_ADDED_HELP = {"tied": "the output layer's weight is the word embeddings' (tie_word_embeddings)",
               "vision_positions": "rows of the vision tower's position table ((image_size/patch_size)² + 1)",
               "image_embeddings": "learned per-image vectors of d_v (num_image_with_embedding; none: no table)"}

FAMILIES = (Family(name="git", description="GIT: a BERT-style decoder under a causal mask and its output layer, "
                   "a CLIP vision tower and projection (held: images are not modelled)",
                   flags={**FLAGS, "type_vocab": None, "head": "none", **_ADDED},
                   sizes=("L", "d", "h", "V", "T_max", "d_v", "h_v", "L_v", "d_ff_v", "P_patch", "C_img", "N_img"),
                   optional=("d_ff",), build=partial(Ref("symgpt.families.blocks.git", "build"), name="git"),
                   flag_help={**FLAG_HELP, **_ADDED_HELP}, choices=CHOICES),)


def read(f: Fields):
    """transformers' GitConfig and its vision_config (GitVisionConfig)."""
    sizes = {"V": f.int("vocab_size", 30522), "d": f.int("hidden_size", 768), "L": f.int("num_hidden_layers", 6),
             "h": f.int("num_attention_heads", 12), "d_ff": f.int("intermediate_size", 3072),
             "T_max": f.int("max_position_embeddings", 1024)}
    if sizes["d"] % sizes["h"]:
        raise SymgptError(f"{f.where}: hidden_size must be a multiple of num_attention_heads")
    pos = f.str("position_embedding_type", "absolute")
    if pos != "absolute":
        raise SymgptError(f"{f.where}: position_embedding_type {pos[:30]!r} is not modelled for GIT")
    flags = {"activation": f.activation("hidden_act", "gelu"), "tied": f.bool("tie_word_embeddings", False),
             "image_embeddings": f.int("num_image_with_embedding", 0, optional=True) or None}
    v = sub_fields(f, "vision_config")
    for key in ("image_size", "patch_size"):
        if isinstance(v.cfg.get(key), list):
            raise SymgptError(f"{v.where}: {key} given as a list is not modelled for GIT")
    side = v.int("image_size", 224) // v.int("patch_size", 16)
    sizes.update(d_v=v.int("hidden_size", 768), L_v=v.int("num_hidden_layers", 12),
                 h_v=v.int("num_attention_heads", 12), d_ff_v=v.int("intermediate_size", 3072),
                 P_patch=v.int("patch_size", 16), C_img=v.int("num_channels", 3), N_img=0)
    flags["vision_positions"] = side * side + 1
    v.silent("hidden_act", "layer_norm_eps", "attention_dropout", "initializer_range", "id2label", "label2id",
             "model_type", "projection_dim")
    note_leftovers(f, v, "vision_config")
    f.notes.append("GitForCausalLM runs its BERT-style layers under a causal mask over the text (bidirectional over "
                   f"image tokens): the same parameters and matmuls; {NO_GENERATION}")
    f.notes.append("the forward counted is over token ids, without images: the vision tower and projection are "
                   "held, their parameters counted. The cost of an image is not modelled for GIT")
    f.silent("layer_norm_eps", "hidden_dropout_prob", "attention_probs_dropout_prob", "pad_token_id", "use_cache",
             "id2label", "label2id", "initializer_range")
    return "git", flags, sizes


READERS = {"git": Reader(read, ("GitForCausalLM",))}

PRESETS: tuple = ()

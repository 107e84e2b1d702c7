"""Fuyu (Adept 2023, the Fuyu-8B model card; transformers' ``FuyuForCausalLM``, config ``fuyu``):
Persimmon's decoder (``families/persimmon.py``) with the image's patches as tokens, each projected by
one linear layer with bias (``blocks/fuyu.py``). Images per sequence are the size N_img, each
S_img × S_img pixels; a config is read with N_img = 0 and S_img = image_size.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields

FAMILIES = (
    Family(name="fuyu", description="Fuyu: a Persimmon decoder reading image patches through one linear layer",
           flags=Extended(FLAGS, dict(norm="layernorm", ffn="mlp", activation="relu2", fused_qkv=True, qkv_bias=True,
                                      proj_bias=True, mlp_bias=True, qk_norm="head", rotary_pct=50)),
           sizes=SIZES + ("S_img", "P_patch", "C_img", "N_img"), optional=OPTIONAL,
           build=partial(Ref("symgpt.families.blocks.fuyu", "build"), name="fuyu"), flag_help=Extended(FLAG_HELP),
           choices=Extended(CHOICES)),
)


def read(f: Fields):
    """transformers' FuyuConfig: text_config (PersimmonConfig), image_size, patch_size, num_channels."""
    from .persimmon import read_persimmon

    text = sub_fields(f, "text_config")
    mt = text.cfg.get("model_type", "persimmon")
    if mt != "persimmon":
        raise SymgptError(f"{f.where}: a Fuyu text_config of model_type {str(mt)[:40]!r} is not modelled")
    _, flags, sizes = read_persimmon(text)
    note_leftovers(f, text, "text_config")
    if f.bool("tie_word_embeddings", False):
        flags["tied"] = True
    sizes.update(S_img=f.int("image_size", 300), P_patch=f.int("patch_size", 30), C_img=f.int("num_channels", 3),
                 N_img=0)
    side = sizes["S_img"] // sizes["P_patch"]
    if sizes["S_img"] % sizes["P_patch"]:
        raise SymgptError(f"{f.where}: image_size {sizes['S_img']} is not a multiple of patch_size "
                          f"{sizes['P_patch']}: Fuyu's processor pads images to whole patches; give a padded side")
    f.notes.append(f"images: N_img per sequence (0 here; --set N_img=1 counts one), each S_img × S_img = "
                   f"{sizes['S_img']}×{sizes['S_img']} pixels (--set S_img=... for another padded side; "
                   f"non-square images are not modelled): ({sizes['S_img']}/{sizes['P_patch']})² = {side * side} "
                   f"patch tokens and {side} newline tokens, all counted in T; each patch is one linear map of "
                   f"{sizes['C_img']}·{sizes['P_patch']}² pixels")
    f.silent("image_token_id", "initializer_range", "id2label", "label2id", "vocab_size", "hidden_size")
    return "fuyu", flags, sizes


READERS = {"fuyu": Reader(read, ("FuyuForCausalLM",))}
PRESETS: tuple = ()

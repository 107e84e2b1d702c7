"""Granite-Docling (IBM; transformers' ``GraniteDoclingForConditionalGeneration``): Granite's text
decoder and a SigLIP-style vision tower with a coarse/fine pixel-shuffle connector, DeepStack
mergers and an optional density router, held (``blocks/granite_docling.py``): every parameter
counted, the forward over token ids; the cost of an image is not modelled (N_img must be 0).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .fields import Fields, Reader, note_leftovers, sub_fields
from .granite import FAMILIES as _GRANITE, read as read_granite

_TOWER = {"tower_out": 1024, "tower_positions": 1024, "pixel_shuffle": 4, "fine_route": True, "tower_deepstack": 3,
          "density_router": None}
_TOWER_HELP = {"tower_out": "the connector's output width (out_hidden_size)",
               "tower_positions": "rows of the tower's learned position table ((image_size/patch_size)²)",
               "pixel_shuffle": "the coarse path's pixel-shuffle factor s (scale_factor); the fine path's is s/2",
               "fine_route": "a second, fine connector path of factor s/2 (use_fine_route)",
               "tower_deepstack": "DeepStack mergers per connector path (one per deepstack_visual_indexes entry)",
               "density_router": "the density router's hidden width (density_router_hidden_size; none: no router)"}


def _extend(table: Extended, added: dict) -> Extended:
    return Extended(table.base, table.changes, {**table.added, **added})


_TEXT = _GRANITE[0]
FAMILIES = (Family(name="granite_docling", description="Granite-Docling: a Granite decoder with a SigLIP-style "
                   "vision tower and a pixel-shuffle connector (held: a forward over token ids runs none of it)",
                   flags=_extend(_TEXT.flags, _TOWER),
                   sizes=tuple(_TEXT.sizes) + ("d_v", "h_v", "L_v", "d_ff_v", "P_patch", "C_img", "N_img"),
                   optional=tuple(_TEXT.optional),
                   build=partial(Ref("symgpt.families.blocks.granite_docling", "build"), name="granite_docling",
                                 text=_TEXT.build),
                   flag_help=_extend(_TEXT.flag_help, _TOWER_HELP), choices=_TEXT.choices),)


def read(f: Fields):
    """transformers' GraniteDoclingConfig: text_config (GraniteDoclingTextConfig, Granite's fields),
    vision_config (GraniteDoclingVisionConfig), the density router's width."""
    text = sub_fields(f, "text_config")
    if not text.cfg:
        raise SymgptError(f"{f.where}: a Granite-Docling config without its text_config is not modelled (give the "
                          "checkpoint's config.json, which has one)")
    cfg = {k: v for k, v in text.cfg.items() if k not in ("tie_word_embeddings", "model_type")}
    t = Fields(cfg, text.where)
    _, flags, sizes = read_granite(t)
    note_leftovers(f, t, "text_config")
    f.notes.extend(n for n in t.notes if n not in f.notes)
    v = sub_fields(f, "vision_config")
    for key in ("image_size", "patch_size"):
        if isinstance(v.cfg.get(key), list):
            raise SymgptError(f"{v.where}: {key} given as a list is not modelled for Granite-Docling")
    side = v.int("image_size", 512) // v.int("patch_size", 16)
    sizes.update(d_v=v.int("hidden_size", 768), L_v=v.int("num_hidden_layers", 12),
                 h_v=v.int("num_attention_heads", 12), d_ff_v=v.int("intermediate_size", 3072),
                 P_patch=v.int("patch_size", 16), C_img=v.int("num_channels", 3), N_img=0)
    deep, _ = v.get("deepstack_visual_indexes", [3, 7, 10])
    if not isinstance(deep, list):
        raise SymgptError(f"{v.where}: field 'deepstack_visual_indexes' must be a list")
    flags.update(tower_out=v.int("out_hidden_size", 1024), tower_positions=side * side,
                 pixel_shuffle=v.int("scale_factor", 4), fine_route=v.bool("use_fine_route", True),
                 tower_deepstack=len(deep) or None, tied=f.bool("tie_word_embeddings", True),
                 density_router=f.int("density_router_hidden_size", 0, optional=True) or None)
    v.silent("hidden_act", "layer_norm_eps", "attention_dropout", "initializer_range", "id2label", "label2id",
             "model_type")
    note_leftovers(f, v, "vision_config")
    f.notes.append("the forward counted is over token ids, without images: transformers does not run the vision "
                   "tower, whose parameters are counted. The cost of an image is not modelled for Granite-Docling")
    f.silent("image_token_id", "pad_token_id", "use_cache", "id2label", "label2id", "initializer_range",
             "density_router_loss_weight", "density_router_threshold")
    return "granite_docling", flags, sizes


READERS = {"granite_docling": Reader(read, ("GraniteDoclingForConditionalGeneration",))}

PRESETS: tuple = ()

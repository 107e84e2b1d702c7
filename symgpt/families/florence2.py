"""Florence-2 (Xiao et al. 2024; transformers' ``Florence2ForConditionalGeneration``): BART's
encoder-decoder with a held DaViT vision backbone and projector (``blocks/florence2.py``). Counted:
every parameter and the forward over token ids; the cost of an image is not modelled (N_img must
be 0).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .bart import CHOICES, FLAG_HELP, FLAGS
from .base import Family
from .fields import Fields, Reader, note_leftovers, sub_fields

_ADDED = {"tower_stages": "128:1:7:0:512,256:1:3:1:1024,512:9:3:1:2048,1024:1:3:1:4096", "tower_channels": 3,
          "tower_qkv_bias": True, "tower_out": 1024, "tower_positions": 50}
_ADDED_HELP = {
    "tower_stages": "the DaViT stages, D:depth:kernel:prenorm:mlp_width each, comma-separated (embed_dim, depths, "
                    "patch_size, patch_prenorm, int(D·mlp_ratio))",
    "tower_channels": "the image channels (in_channels)",
    "tower_qkv_bias": "the backbone's qkv projections have biases (qkv_bias)",
    "tower_out": "the projector's width (projection_dim)",
    "tower_positions": "rows of the projector's row and column position tables (max_position_embeddings)"}

FAMILIES = (Family(name="florence2", description="Florence-2: BART's encoder-decoder with a DaViT vision backbone "
                   "and projector (held: a forward over token ids runs none of it)",
                   flags={**FLAGS, **_ADDED}, sizes=("L", "L_dec", "d", "h", "V", "d_ff", "T_max", "N_img"),
                   build=partial(Ref("symgpt.families.blocks.florence2", "build"), name="florence2"),
                   flag_help={**FLAG_HELP, **_ADDED_HELP}, choices=CHOICES),)


def _list(v: Fields, key: str, default: list, n: int | None, kind=int) -> list:
    value, _ = v.get(key, default)
    if not isinstance(value, list) or (n is not None and len(value) != n) or not all(
            isinstance(x, kind) and not (kind is int and isinstance(x, bool)) for x in value):
        raise SymgptError(f"{v.where}: field {key!r} must list one {kind.__name__} per stage")
    return value


def read(f: Fields):
    """transformers' Florence2Config: text_config (BartConfig), vision_config (Florence2VisionConfig)."""
    from .bart import read as read_bart

    text = sub_fields(f, "text_config")
    mt = text.cfg.get("model_type", "bart")
    if mt != "bart":
        raise SymgptError(f"{f.where}: a Florence-2 text_config of model_type {str(mt)[:40]!r} is not modelled")
    cfg = {k: v for k, v in text.cfg.items() if k != "tie_word_embeddings"}
    t = Fields(cfg, text.where)
    _, flags, sizes = read_bart(t)
    note_leftovers(f, t, "text_config")
    flags.update(tied=f.bool("tie_word_embeddings", True), head="lm")
    v = sub_fields(f, "vision_config")
    dims = _list(v, "embed_dim", [128, 256, 512, 1024], None)
    n = len(dims)
    depths = _list(v, "depths", [1, 1, 9, 1], n)
    kernels = _list(v, "patch_size", [7, 3, 3, 3], n)
    prenorm = _list(v, "patch_prenorm", [False, True, True, True], n, bool)
    for key in ("num_heads", "num_groups", "patch_stride", "patch_padding"):
        _list(v, key, [1] * n, n)
    ratio, _ = v.get("mlp_ratio", 4.0)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or ratio <= 0:
        raise SymgptError(f"{v.where}: field 'mlp_ratio' must be a positive number")
    # transformers' int(embed_dim · mlp_ratio): the float product, truncated
    widths = [int(D * ratio) for D in dims]
    flags.update(tower_stages=",".join(f"{D}:{k}:{p}:{int(q)}:{F}" for D, k, p, q, F in
                                       zip(dims, depths, kernels, prenorm, widths)),
                 tower_channels=v.int("in_channels", 3), tower_qkv_bias=v.bool("qkv_bias", True),
                 tower_out=v.int("projection_dim", 1024), tower_positions=v.int("max_position_embeddings", 50))
    v.silent("activation_function", "drop_path_rate", "window_size", "max_temporal_embeddings", "initializer_range",
             "id2label", "label2id", "model_type")
    note_leftovers(f, v, "vision_config")
    f.notes.append("the forward counted is over token ids, without images: the DaViT backbone and projector are "
                   "held, their parameters counted. The cost of an image is not modelled for Florence-2")
    f.silent("image_token_id", "id2label", "label2id", "initializer_range", "is_encoder_decoder")
    sizes["N_img"] = 0
    return "florence2", flags, sizes


READERS = {"florence2": Reader(read, ("Florence2ForConditionalGeneration",))}

PRESETS: tuple = ()

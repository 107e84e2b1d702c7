"""HyperCLOVA X Vision v2 (NAVER Cloud; transformers' ``HyperCLOVAXVisionV2ForConditionalGeneration``,
config ``hyperclovax_vision_v2``): a HyperCLOVA X decoder (``families/hyperclovax.py``), Qwen2.5-VL's
vision tower (``families/qwen_vl.py``) and a linear projector (``blocks/hyperclovax_vision.py``).
Parameters exact; images are not modelled (N_img must be 0).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields
from .qwen_vl import _ADDED, _HELP

FAMILIES = (
    Family(name="hyperclovax_vision", description="HyperCLOVA X Vision v2: a HyperCLOVA X decoder with Qwen2.5-VL's "
           "vision tower and a linear projector (held: a forward over token ids runs neither)",
           flags=Extended(FLAGS, dict(branch_norms=True), _ADDED),
           sizes=SIZES + ("d_v", "L_v", "d_ff_v", "P_patch", "C_img", "N_img"), optional=OPTIONAL,
           build=partial(Ref("symgpt.families.blocks.hyperclovax_vision", "build"), name="hyperclovax_vision"),
           flag_help=Extended(FLAG_HELP, added=_HELP), choices=Extended(CHOICES)),
)


def read(f: Fields):
    """transformers' HyperCLOVAXVisionV2Config: text_config (HyperCLOVAXConfig), vision_config
    (Qwen2_5_VLVisionConfig)."""
    from .hyperclovax import read as read_text

    text = sub_fields(f, "text_config")
    mt = text.cfg.get("model_type", "hyperclovax")
    if mt != "hyperclovax":
        raise SymgptError(f"{f.where}: a HyperCLOVA X Vision text_config of model_type {str(mt)[:40]!r} is not "
                          "modelled")
    _, flags, sizes = read_text(text)
    note_leftovers(f, text, "text_config")
    v = sub_fields(f, "vision_config")
    vt = v.cfg.get("model_type", "qwen2_5_vl_vision")
    if vt != "qwen2_5_vl_vision":
        raise SymgptError(f"{f.where}: a HyperCLOVA X Vision vision_config of model_type {str(vt)[:40]!r} is not "
                          "modelled (symgpt counts Qwen2.5-VL's tower)")
    for key in ("patch_size", "temporal_patch_size", "spatial_merge_size"):
        if isinstance(v.cfg.get(key), list):
            raise SymgptError(f"{f.where}: vision_config {key} given as a list is not modelled")
    sizes.update(d_v=v.int("hidden_size", 3584), L_v=v.int("depth", 32), d_ff_v=v.int("intermediate_size", 3420),
                 P_patch=v.int("patch_size", 14), C_img=v.int("in_channels", 3), N_img=0)
    flags.update(temporal_patch=v.int("temporal_patch_size", 2), merge_size=v.int("spatial_merge_size", 2),
                 vision_out_dim=v.int("out_hidden_size", 3584))
    v.int("num_heads", 16)
    v.str("hidden_act", "silu")
    v.silent("window_size", "fullatt_block_indexes", "tokens_per_second", "initializer_range", "rope_parameters",
             "model_type", "id2label", "label2id")
    note_leftovers(f, v, "vision_config")
    flags["tied"] = f.bool("tie_word_embeddings", True)
    f.notes.append("the forward counted is over token ids, without images or video: transformers runs neither the "
                   "vision tower nor the projector, whose parameters are counted. The cost of an image is not "
                   "modelled")
    f.silent("image_token_id", "video_token_id", "initializer_range", "id2label", "label2id")
    return "hyperclovax_vision", flags, sizes


READERS = {"hyperclovax_vision_v2": Reader(read, ("HyperCLOVAXVisionV2ForConditionalGeneration",))}
PRESETS: tuple = ()

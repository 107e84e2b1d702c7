"""More vision--language models read as a text decoder of a family symgpt already builds and a held
vision tower (the machinery of ``vlm_towers.py``; these towers: ``blocks/vlm_held_moe.py``).

- MiniMax-M3-VL (MiniMax; transformers' ``MiniMaxM3SparseForConditionalGeneration``): MiniMax-M3's
  language model (``minimax_m3_vl_text``, ``minimax_m3.py``), a CLIP-style tower with Conv3d
  patches and a 3-D rotary (``MiniMaxM3VLVisionModel``) and a two-stage projector
  (``MiniMaxM3VLMultiModalProjector``: each patch d_v -> f_p -> d, then m×m patches merged
  m²·d -> f_p -> d, f_p = projector_hidden_size).
- Step3p7 (StepFun; ``Step3p7ForConditionalGeneration``): Step 3.5's MoE decoder
  (``step3p5_text.py``), a ViT-style tower with layer scales and two strided 3×3 convolutions
  after it (``Step3p7VisionModel``: 16 patches into one token) and one linear projector.
- ERNIE 4.5 VL MoE (Baidu; ``Ernie4_5_VLMoeForConditionalGeneration``): ERNIE 4.5 MoE's decoder
  (``ernie4_5_moe``: its text experts, router and shared expert) whose MoE layers also hold
  vision experts (run on image tokens only: held), a ViT tower with Linear patches and a
  resampler (spatial and temporal MLPs, a projection to d and an RMSNorm).

Images per sequence are the size N_img, read as 0 (N_img > 0 is refused in one line).
"""

from __future__ import annotations

from functools import partial

from ..core.lazy import Ref
from .base import Family
from ..core.errors import SymgptError
from .fields import Fields, Reader, note_leftovers, sub_fields
from .deepseek_vl import _SAM, _SAM_HELP
from .ernie4_5_moe import FAMILIES as _ERNIE4_5_MOE
from .minimax_m3 import FAMILIES as _MINIMAX_M3
from .step3p5_text import TEXT_FAMILY as _STEP3P5
from .unlimited_ocr_text import FAMILIES as _UNLIMITED_OCR_TEXT
from .vlm_towers import _HELD, TOWER_CHOICES, TOWER_HELP, _extend, _family as _tower_family, _read, _text

BUILD = Ref("symgpt.families.blocks.vlm_held_moe", "build")

_TOWERS = ("minimax_m3", "step3p7", "ernie4_5_vl", "unlimited_ocr")
_ADDED = {"tower_projector_ff": None, "tower_projector_bias": False, "vision_experts_ff": None}
_HELP = {"tower": TOWER_HELP["tower"] + "; minimax_m3 (MiniMaxM3VLVisionModel), step3p7 (Step3p7VisionModel)",
         "tower_projector_bias": "the step3p7 projector has a bias (projector_bias)",
         "vision_experts_ff": "ernie4_5_vl: the width f_v of the held vision experts in each MoE layer "
                              "(moe_intermediate_size[1])",
         "tower_projector_ff": "the width f_p of the projector's hidden layers (projector_hidden_size)"}


def _family(name: str, description: str, text: Family, tower: str, own: tuple = ({}, {}), **defaults) -> Family:
    """A held-tower family (``vlm_towers._family``) with this module's flags, and *own* flags of its
    tower (defaults, help)."""
    base = _tower_family(name, description, text, tower, **defaults)
    added = {**_ADDED, **{k: v for k, v in defaults.items() if k in _ADDED}, **own[0]}
    return Family(name=name, description=description,
                  flags=_extend(base.flags, added),
                  sizes=base.sizes, optional=base.optional, build=partial(BUILD, name=name, text=text.build),
                  flag_help=_extend(base.flag_help, {**_HELP, **own[1]}),
                  choices=_extend(base.choices, {"tower": TOWER_CHOICES["tower"] + _TOWERS}))


FAMILIES = (
    _family("minimax_m3_vl", "MiniMax-M3-VL: MiniMax-M3's MoE decoder with a CLIP-style Conv3d tower and a "
            "two-stage merging projector" + _HELD, _text(_MINIMAX_M3, "minimax_m3_vl_text"), "minimax_m3",
            tower_temporal_patch=2, tower_out=6144, tower_heads=16, tower_projector_ff=6144),
    _family("step3p7", "Step3p7: Step 3.5's MoE decoder with a ViT-style tower, two strided convolutions and a "
            "linear projector" + _HELD, _STEP3P5, "step3p7", tower_temporal_patch=1, tower_merge=4, tower_out=4096,
            tower_heads=16, tower_positions=2704),
    _family("ernie4_5_vl_moe", "ERNIE 4.5 VL MoE: ERNIE 4.5 MoE's decoder with vision experts beside its text "
            "experts, a ViT tower and a resampler" + _HELD, _text(_ERNIE4_5_MOE, "ernie4_5_moe"), "ernie4_5_vl",
            tower_temporal_patch=2, tower_out=2560, tower_heads=16, vision_experts_ff=512),
    _family("unlimited_ocr", "Unlimited-OCR: a DeepSeek-style MoE decoder with multi-head attention, a SAM encoder "
            "and a CLIP encoder over its features, a linear projector" + _HELD,
            _UNLIMITED_OCR_TEXT[0], "unlimited_ocr",
            ({**_SAM, "sam_down0": 512, "sam_down1": 1024},
             {**{k: "the SAM encoder's " + v for k, v in _SAM_HELP.items()},
              "sam_down0": "channels of the first strided 3×3 conv after SAM's neck (downsample_channels[0])",
              "sam_down1": "channels of the second (downsample_channels[1])"}),
            tower_temporal_patch=1, tower_out=1280, tower_heads=16, tower_positions=257),
)


def _minimax_m3_tower(v: Fields, flags: dict, sizes: dict) -> None:
    """MiniMaxM3VLVisionConfig (image_size changes no count: the positions are a rotary)."""
    sizes.update(d_v=v.int("hidden_size", 1280), L_v=v.int("num_hidden_layers", 32),
                 d_ff_v=v.int("intermediate_size", 5120), P_patch=v.int("patch_size", 14),
                 C_img=v.int("num_channels", 3))
    flags.update(tower_temporal_patch=v.int("temporal_patch_size", 2), tower_merge=v.int("spatial_merge_size", 2),
                 tower_heads=v.int("num_attention_heads", 16), tower_positions=None)
    v.silent("image_size", "layer_norm_eps")


def _read_minimax_m3(f: Fields):
    family, flags, sizes = _read(f, "minimax_m3_vl", "minimax_m3_vl_text", _minimax_m3_tower,
                                 text_type="minimax_m3_vl_text", tie=(False, True))
    flags["tower_projector_ff"] = f.int("projector_hidden_size", 6144)
    flags["tower_out"] = sizes["d"]
    f.silent("merged_hidden_size", "image_token_index", "video_token_index")
    return family, flags, sizes


def _step3p7_tower(v: Fields, flags: dict, sizes: dict) -> None:
    """Step3p7VisionConfig: its aliases width, layers, heads; intermediate_size recomputed from
    mlp_ratio as transformers does (int(hidden_size · mlp_ratio), a float product: the class's own
    arithmetic, replayed to read the width it builds)."""
    v.rename({"width": "hidden_size", "layers": "num_hidden_layers", "heads": "num_attention_heads"})
    d_v = v.int("hidden_size", 1536)
    ratio, _ = v.get("mlp_ratio", 8960 / 1536)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or ratio <= 0:
        raise SymgptError(f"{v.where}: field 'mlp_ratio' must be a positive number")
    v.silent("intermediate_size")  # transformers recomputes it from mlp_ratio
    side = v.int("image_size", 728) // v.int("patch_size", 14)
    sizes.update(d_v=d_v, L_v=v.int("num_hidden_layers", 47), d_ff_v=int(d_v * ratio), P_patch=v.int("patch_size", 14),
                 C_img=v.int("num_channels", 3))
    if sizes["d_ff_v"] < 1 or side < 1:
        raise SymgptError(f"{v.where}: hidden_size · mlp_ratio and image_size / patch_size must be at least 1")
    flags.update(tower_temporal_patch=1, tower_merge=4, tower_heads=v.int("num_attention_heads", 16),
                 tower_positions=side * side)
    v.silent("layer_norm_eps", "layer_scale_init_value", "max_position_embeddings", "ls_init_value")


def _read_step3p7(f: Fields):
    family, flags, sizes = _read(f, "step3p7", "step3p5", _step3p7_tower, text_type="step3p5", tie=(False, True))
    flags.update(tower_out=sizes["d"], tower_projector_bias=f.bool("projector_bias", False))
    return family, flags, sizes


def _ernie_text(cfg: dict) -> dict:
    """Ernie4_5_VLMoeTextConfig as ERNIE 4.5 MoE's reader reads it: ``mlp_layer_types`` (dense
    first layers, then sparse) as moe_layer_start_index; moe_intermediate_size [text, vision] as the
    text experts' width (the vision experts': the family's vision_experts_ff)."""
    L = cfg.get("num_hidden_layers", 28)
    types = cfg.get("mlp_layer_types")
    if not isinstance(L, int) or isinstance(L, bool) or L < 1:
        raise SymgptError("text_config: num_hidden_layers must be a positive integer")
    if types is None:
        types = ["dense"] + ["sparse"] * (L - 1)
    n = types.count("dense") if isinstance(types, list) else -1
    if not isinstance(types, list) or len(types) != L or types != ["dense"] * n + ["sparse"] * (L - n):
        raise SymgptError("text_config: mlp_layer_types other than dense first layers then sparse ones is not "
                          "modelled")
    widths = cfg.get("moe_intermediate_size", [1536, 512])
    if not (isinstance(widths, list) and len(widths) == 2 and all(isinstance(w, int) and not isinstance(w, bool)
                                                                  and w >= 1 for w in widths)):
        raise SymgptError("text_config: moe_intermediate_size must be [text width, vision width]")
    changed = {k: v for k, v in cfg.items() if k not in ("mlp_layer_types", "moe_intermediate_size")}
    return {**changed, "moe_layer_start_index": n, "moe_layer_end_index": -1, "moe_layer_interval": 1,
            "moe_intermediate_size": widths[0], "_vision_experts_ff": widths[1]}


def _ernie_tower(v: Fields, flags: dict, sizes: dict) -> None:
    """Ernie4_5_VLMoeVisionConfig (aliases num_attention_heads, num_hidden_layers)."""
    v.rename({"num_attention_heads": "num_heads", "num_hidden_layers": "depth"})
    sizes.update(d_v=v.int("hidden_size", 1280), L_v=v.int("depth", 32), d_ff_v=v.int("intermediate_size", 5120),
                 P_patch=v.int("patch_size", 14), C_img=v.int("in_channels", 3))
    flags.update(tower_temporal_patch=v.int("temporal_merge_size", 2), tower_merge=v.int("spatial_merge_size", 2),
                 tower_heads=v.int("num_heads", 16), tower_positions=None)


def _read_ernie(f: Fields):
    text = f.cfg.get("text_config")
    if text is not None and not isinstance(text, dict):
        raise SymgptError(f"{f.where}: field 'text_config' must be a JSON object")
    text = _ernie_text(text or {})  # none: Ernie4_5_VLMoeTextConfig's defaults
    vision_ff = text.pop("_vision_experts_ff")
    f.cfg = {**f.cfg, "text_config": text}  # the same top-level fields, the text_config as ERNIE 4.5 MoE's
    family, flags, sizes = _read(f, "ernie4_5_vl_moe", "ernie4_5_moe", _ernie_tower, tie=(True, False))
    flags.update(tower_out=sizes["d"], vision_experts_ff=vision_ff)
    f.silent("image_start_token_id", "image_end_token_id", "video_start_token_id", "video_end_token_id")
    f.notes.append("the vision experts of each MoE layer (mlp.vision_moe: a router, its score bias and E experts "
                   f"of width {vision_ff}) run on image tokens only: held, counted in the parameters, not run")
    return family, flags, sizes


def _unlimited_tower(v: Fields, flags: dict, sizes: dict) -> None:
    """UnlimitedOcrVisionConfig: sam_config (UnlimitedOcrSamVisionConfig) and encoder_config
    (UnlimitedOcrVisionEncoderConfig: a CLIP encoder without its patch embedding)."""
    s = sub_fields(v, "sam_config")
    layers, image, patch = s.int("num_hidden_layers", 12), s.int("image_size", 1024), s.int("patch_size", 16)
    dim, heads = s.int("hidden_size", 768), s.int("num_attention_heads", 12)
    if image % patch or dim % heads:
        raise SymgptError(f"{v.where}: sam_config image_size must be a multiple of patch_size and hidden_size of "
                          "num_attention_heads")
    glob = s.get("global_attn_indexes", [2, 5, 8, 11])[0]
    if not isinstance(glob, list) or len(set(glob)) != len(glob) \
            or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < layers for i in glob):
        raise SymgptError(f"{v.where}: sam_config.global_attn_indexes must list distinct layer indices")
    window = s.int("window_size", 14, minimum=0)
    if window == 0:  # every layer global
        glob, window = list(range(layers)), 1
    down = s.get("downsample_channels", [512, 1024])[0]
    if not (isinstance(down, list) and len(down) == 2 and all(isinstance(c, int) and not isinstance(c, bool)
                                                                and c >= 1 for c in down)):
        raise SymgptError(f"{v.where}: sam_config.downsample_channels must be two channel counts")
    flags.update(sam_dim=dim, sam_layers=layers, sam_heads=heads, sam_mlp=s.int("mlp_dim", 3072),
                 sam_side=image // patch, sam_patch=patch, sam_channels=s.int("num_channels", 3),
                 sam_out=s.int("output_channels", 256), sam_window=window, sam_global=len(glob),
                 sam_qkv_bias=s.bool("qkv_bias", True), sam_abs_pos=s.bool("use_abs_pos", True),
                 sam_rel_pos=s.bool("use_rel_pos", True), sam_down0=down[0], sam_down1=down[1])
    s.silent("hidden_act", "layer_norm_eps", "attention_dropout", "initializer_range", "model_type", "id2label",
             "label2id")
    note_leftovers(v, s, "sam_config")
    e = sub_fields(v, "encoder_config")
    side = e.int("image_size", 224) // e.int("patch_size", 14)
    sizes.update(d_v=e.int("hidden_size", 1024), L_v=e.int("num_hidden_layers", 24),
                 d_ff_v=e.int("intermediate_size", 4096), P_patch=patch, C_img=flags["sam_channels"])
    flags.update(tower_temporal_patch=1, tower_merge=1, tower_heads=e.int("num_attention_heads", 16),
                 tower_positions=side * side + 1)
    e.silent("hidden_act", "layer_norm_eps", "attention_dropout", "initializer_range", "initializer_factor",
             "num_channels", "model_type", "id2label", "label2id")
    note_leftovers(v, e, "encoder_config")


def _read_unlimited(f: Fields):
    family, flags, sizes = _read(f, "unlimited_ocr", "unlimited_ocr_text", _unlimited_tower,
                                 text_type="unlimited_ocr_text", tie=(False, True))
    flags["tower_out"] = sizes["d"]
    return family, flags, sizes


READERS = {
    "minimax_m3_vl": Reader(_read_minimax_m3, ("MiniMaxM3SparseForConditionalGeneration",)),
    "step3p7": Reader(_read_step3p7, ("Step3p7ForConditionalGeneration",)),
    "ernie4_5_vl_moe": Reader(_read_ernie, ("Ernie4_5_VLMoeForConditionalGeneration",
                                            "Ernie4_5_VL_MoeForConditionalGeneration")),
    "unlimited_ocr": Reader(_read_unlimited, ("UnlimitedOcrForConditionalGeneration",)),
}

PRESETS: tuple = ()

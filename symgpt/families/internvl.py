"""InternVL (Chen et al. 2024, "Expanding Performance Boundaries of Open-Source Multimodal Models
with Model, Data, and Test-Time Scaling" (InternVL 2.5); transformers'
``InternVLForConditionalGeneration``) and Qianfan-OCR (Baidu 2025; ``QianfanOCRForConditionalGeneration``,
the same modules): InternViT, a pixel-shuffle MLP projector (``blocks/internvl.py``) and a Qwen2,
Qwen3 or Llama text decoder.

Images: N_img per sequence, each an S_img × S_img tile read whole (the processor's dynamic tiling
of a large image into tiles and a thumbnail is a count of tiles; count each as an image).
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields
from .vlm import VISION_CHOICES, VISION_FLAGS, VISION_HELP, VISION_SIZES

_ADDED = {"vision_norm": "layer_norm", "vision_qk_norm": False, "vision_qkv_bias": False, "vision_positions": True,
          "vision_mask_token": False, "vision_mean_pooling": True, "pixel_shuffle": 2}
_HELP = {"vision_norm": "InternViT's norms: layer_norm or rms_norm (norm_type)",
         "vision_qk_norm": "an RMSNorm over all heads of Q and of K (use_qk_norm)",
         "vision_qkv_bias": "the Q/K/V projections have biases (attention_bias)",
         "vision_positions": "learned absolute positions (use_absolute_position_embeddings)",
         "vision_mask_token": "a learned mask token, held (use_mask_token)",
         "vision_mean_pooling": "no final LayerNorm (use_mean_pooling)",
         "pixel_shuffle": "the side s of the pixel shuffle (1/downsample_ratio)"}


def _family(name, description):
    return Family(name=name, description=description,
                  flags=Extended(FLAGS, dict(gqa=True, qkv_bias=True),
                                 {**VISION_FLAGS, "vlm_projector": "internvl", "vision_tower": "internvit",
                                  "vision_activation": "gelu", "drop_cls": True, **_ADDED}),
                  sizes=SIZES + VISION_SIZES, optional=OPTIONAL,
                  build=partial(Ref("symgpt.families.blocks.internvl", "build"), name=name),
                  flag_help=Extended(FLAG_HELP, added={**VISION_HELP, **_HELP}),
                  choices=Extended(CHOICES, added={**VISION_CHOICES, "vlm_projector": ("internvl",),
                                                   "vision_tower": ("internvit",),
                                                   "vision_norm": ("layer_norm", "rms_norm")}))


FAMILIES = (_family("internvl", "InternVL: InternViT, a pixel-shuffle MLP projector, a Qwen2/Qwen3/Llama decoder"),
            _family("qianfan_ocr", "Qianfan-OCR: InternVL's modules (InternViT, pixel-shuffle MLP projector, a "
                    "Qwen3 decoder)"))


def _decoder(mt: str):
    """The text decoder's reader and its family's flag defaults, by text_config model_type."""
    import importlib

    module = {"qwen2": "qwen2", "qwen3": "qwen3", "llama": "llama"}.get(mt)
    if module is None:
        return None
    m = importlib.import_module(f"symgpt.families.{module}")
    family = next(fam for fam in m.FAMILIES if fam.name == mt)
    return m.READERS[mt].read, dict(family.flags)


def _side(v: Fields, key: str, default: int) -> int:
    raw = v.cfg.get(key, default)
    if isinstance(raw, list):
        if len(raw) != 2 or raw[0] != raw[1]:
            raise SymgptError(f"{v.where}: {key} {raw!r} is not square: only square images are modelled")
        v.used.add(key)
        if not isinstance(raw[0], int) or isinstance(raw[0], bool) or raw[0] < 1:
            raise SymgptError(f"{v.where}: {key} must be a positive integer")
        return raw[0]
    return v.int(key, default)


def read_internvit(v: Fields, flags: dict, sizes: dict) -> None:
    """transformers' InternVLVisionConfig (QianfanOCRVisionConfig alike)."""
    sizes.update(d_v=v.int("hidden_size", 1024), L_v=v.int("num_hidden_layers", 24),
                 h_v=v.int("num_attention_heads", 16), d_ff_v=v.int("intermediate_size", 4096),
                 S_img=_side(v, "image_size", 448), P_patch=_side(v, "patch_size", 14),
                 C_img=v.int("num_channels", 3))
    norm = v.str("norm_type", "layer_norm")
    if norm not in ("layer_norm", "rms_norm"):
        raise SymgptError(f"{v.where}: norm_type {norm[:30]!r} is not layer_norm or rms_norm")
    flags.update(vision_activation=v.activation("hidden_act", "gelu"), vision_norm=norm,
                 vision_qk_norm=v.bool("use_qk_norm", False), vision_qkv_bias=v.bool("attention_bias", False),
                 vision_positions=v.bool("use_absolute_position_embeddings", True),
                 vision_mask_token=v.bool("use_mask_token", False),
                 vision_mean_pooling=v.bool("use_mean_pooling", True))
    v.silent("attention_dropout", "layer_norm_eps", "layer_scale_init_value", "hidden_dropout_prob",
             "projection_dropout", "drop_path_rate", "initializer_range", "id2label", "label2id")


def _read(f: Fields, name: str, what: str, vision_type: str, text_default: str, tie_default: bool):
    text = sub_fields(f, "text_config")
    mt = text.cfg.get("model_type", text_default)
    decoder = _decoder(mt)
    if decoder is None:
        raise SymgptError(f"{f.where}: a {what} text_config of model_type {str(mt)[:40]!r} is not modelled (symgpt "
                          "counts a Qwen2, Qwen3 or Llama decoder)")
    if not text.cfg:
        raise SymgptError(f"{f.where}: a {what} config without its text_config is not modelled (give the "
                          "checkpoint's config.json, which has one)")
    read_text, defaults = decoder
    _, flags, sizes = read_text(text)
    flags = {**defaults, **flags}
    note_leftovers(f, text, "text_config")
    vision = sub_fields(f, "vision_config")
    vt = vision.cfg.get("model_type", vision_type)
    if vt != vision_type:
        raise SymgptError(f"{f.where}: a {what} vision_config of model_type {str(vt)[:40]!r} is not modelled")
    read_internvit(vision, flags, sizes)
    note_leftovers(f, vision, "vision_config")
    ratio = f.fraction("downsample_ratio", Fraction(1, 2))
    s = 1 / ratio
    if s.denominator != 1 or s < 1:
        raise SymgptError(f"{f.where}: downsample_ratio {ratio} is not 1/s for a whole s")
    s = int(s)
    layer = f.get("vision_feature_layer", -1)[0]
    if not isinstance(layer, int) or isinstance(layer, bool):
        raise SymgptError(f"{f.where}: vision_feature_layer as a list is not modelled")
    if f.str("vision_feature_select_strategy", "default") != "default":
        raise SymgptError(f"{f.where}: vision_feature_select_strategy 'full' (the class token kept) leaves no "
                          "square patch grid to pixel-shuffle")
    flags.update(vlm_projector="internvl", vision_tower="internvit", drop_cls=True, pixel_shuffle=s,
                 projector_activation=f.activation("projector_hidden_act", "gelu"),
                 tied=f.bool("tie_word_embeddings", tie_default))
    side, rest = divmod(sizes["S_img"], sizes["P_patch"])
    if rest or side % s:
        f.notes.append(f"this config cannot read an image: {sizes['S_img']}/{sizes['P_patch']} patches a side do "
                       f"not fall into {s}×{s} blocks (the pixel shuffle); counted with no images")
    else:
        f.notes.append(f"images: N_img per sequence (0 here; --set N_img=4 counts four), each an {sizes['S_img']}×"
                       f"{sizes['S_img']} tile read whole: ({sizes['S_img']}/{sizes['P_patch']})² = {side * side} "
                       f"patches and a class token (dropped), pixel-shuffled {s}×{s} to {side * side // (s * s)} "
                       "tokens; T counts those image tokens. The processor's dynamic tiling is not derived: count "
                       "each tile as an image")
    if layer != -1:
        f.notes.append(f"the projector reads hidden state {layer}; the tower runs every layer: every one is counted")
    f.silent("image_token_id", "image_seq_length", "id2label", "label2id", "initializer_range")
    sizes["N_img"] = 0
    return name, flags, sizes


READERS = {"internvl": Reader(lambda f: _read(f, "internvl", "InternVL", "internvl_vision", "qwen2", True),
                              ("InternVLForConditionalGeneration",)),
           "qianfan_ocr": Reader(lambda f: _read(f, "qianfan_ocr", "Qianfan-OCR", "qianfan_ocr_vision", "qwen3", False),
                                 ("QianfanOCRForConditionalGeneration",))}

PRESETS: tuple = ()

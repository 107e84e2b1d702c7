"""Llama 3.2 Vision (Meta 2024, the Llama 3.2 model card; transformers' ``MllamaForCausalLM``,
config ``mllama_text_model``, and ``MllamaForConditionalGeneration``, config ``mllama``): a
Llama decoder with gated cross-attention layers (``cross_attention_layers``) and, in the
conditional-generation model, a tiled vision tower and a linear projector (``blocks/mllama.py``).

Counted: every parameter, and the forward over token ids (no image): transformers skips the
cross-attention layers and runs no vision tower without ``cross_attention_states`` or
``pixel_values``. L is the count of self-attention layers (num_hidden_layers less the
cross-attention ones). With ``vision_run`` set, images are priced (``blocks/mllama_vision.py``):
every tile slot of the tiled encoder, its rows padded as transformers pads them, the projector
over the final and intermediate features, and the cross-attention layers over the image positions.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family, Preset
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader

BUILD = Ref("symgpt.families.blocks.mllama", "build")

_ADDED = {"cross_layers": 0, "vision_model": False, "max_tiles": 4, "aspect_ratios": 8, "global_layers": 8,
          "vision_output_dim": 7680, "vision_run": False, "patch_pad": 7, "intermediate_layers": 5}
_HELP = {
    "cross_layers": "gated cross-attention layers (held: a forward without images skips them)",
    "vision_model": "the vision tower and projector are present (held: a forward without images runs neither)",
    "max_tiles": "the vision tower's tiles per image (max_num_tiles)",
    "aspect_ratios": "the supported tile aspect ratios (rows of the tile tables: this + 1)",
    "global_layers": "the vision tower's gated global layers",
    "vision_output_dim": "the width of the concatenated vision features the projector reads",
    "vision_run": "run the vision tower, the projector and the cross-attention layers over N_img images of "
                  "max_num_tiles tiles (false: a forward over token ids, as transformers runs it without images)",
    "patch_pad": "zero rows appended to each tile's (S_img/P_patch)² + 1 rows to make a multiple of 8 "
                 "(MllamaVisionModel.forward)",
    "intermediate_layers": "the local layers whose outputs join the final features (len(intermediate_layers_indices))",
}
_VISION_SIZES = ("d_v", "h_v", "L_v", "d_ff_v", "S_img", "P_patch", "C_img", "N_img")


def _family(name, description, vision):
    return Family(name=name, description=description,
                  flags=Extended(FLAGS, dict(gqa=True), {**_ADDED, "vision_model": vision}),
                  sizes=SIZES + (_VISION_SIZES if vision else ()), optional=OPTIONAL,
                  build=partial(BUILD, name=name), flag_help=Extended(FLAG_HELP, added=_HELP),
                  choices=Extended(CHOICES))


FAMILIES = (
    _family("mllama_text", "Llama 3.2 Vision's text model: Llama with gated cross-attention layers", False),
    _family("mllama", "Llama 3.2 Vision: a tiled vision tower, a linear projector and a Llama decoder with "
                      "gated cross-attention layers", True),
)


def read_text(f: Fields) -> tuple[dict, dict]:
    """transformers' MllamaTextConfig."""
    from .llama import read_llama_like

    cross = f.cfg.get("cross_attention_layers")
    f.used.add("cross_attention_layers")
    if cross is None:
        cross = [3, 8, 13, 18, 23, 28, 33, 38]
    if not isinstance(cross, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in cross):
        raise SymgptError(f"{f.where}: field 'cross_attention_layers' must be a list of layer indices")
    flags, sizes = read_llama_like(f, dict(V=128256, d=4096, d_ff=14336, L=40, h=32, h_kv=8, T_max=131072))
    layers = set(i for i in cross if 0 <= i < sizes["L"])
    if len(layers) != len(cross):
        raise SymgptError(f"{f.where}: cross_attention_layers must list distinct indices below "
                          f"num_hidden_layers={sizes['L']}")
    if len(layers) >= sizes["L"]:
        raise SymgptError(f"{f.where}: every layer is a cross-attention layer: not modelled")
    sizes["L"] -= len(layers)
    flags["cross_layers"] = len(layers)
    f.notes.append(f"{len(layers)} of num_hidden_layers={sizes['L'] + len(layers)} layers are gated "
                   f"cross-attention layers: their parameters are counted, and a forward over token ids "
                   f"skips them (MllamaTextModel runs them only with cross_attention_states); L = {sizes['L']} "
                   "self-attention layers run")
    f.notes.append("the token embedding has vocab_size + 8 rows (MllamaTextModel.embed_tokens)")
    return flags, sizes


def read_mllama_text(f: Fields):
    flags, sizes = read_text(f)
    return "mllama_text", flags, sizes


def _sub(f: Fields, key: str) -> Fields:
    cfg = f.cfg.get(key) or {}
    f.used.add(key)
    if not isinstance(cfg, dict):
        raise SymgptError(f"{f.where}: field {key!r} must be a JSON object")
    return Fields(cfg, f"{f.where} {key}")


def _ints(v: Fields, key: str, default: list) -> list:
    val = v.cfg.get(key)
    v.used.add(key)
    return default if val is None else val


def read_mllama(f: Fields):
    """transformers' MllamaConfig: text_config (MllamaTextConfig), vision_config
    (MllamaVisionConfig), image_token_index."""
    text = _sub(f, "text_config")
    flags, sizes = read_text(text)
    f.notes.extend(text.notes)
    for k in text.leftovers():
        f.notes.append(f"field text_config.{k[:60]!r} is not understood by symgpt: ignored")
    v = _sub(f, "vision_config")
    img, patch = v.cfg.get("image_size", 448), v.cfg.get("patch_size", 14)
    if not isinstance(img, int) or not isinstance(patch, int):
        raise SymgptError(f"{f.where}: a vision_config image_size or patch_size given as a pair is not modelled")
    sizes.update(d_v=v.int("hidden_size", 1280), L_v=v.int("num_hidden_layers", 32),
                 d_ff_v=v.int("intermediate_size", 5120), S_img=v.int("image_size", 448),
                 P_patch=v.int("patch_size", 14), C_img=v.int("num_channels", 3))
    ratios = _ints(v, "supported_aspect_ratios", [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]])
    if not isinstance(ratios, list):
        raise SymgptError(f"{f.where}: vision_config field 'supported_aspect_ratios' must be a list")
    inter = _ints(v, "intermediate_layers_indices", [3, 7, 15, 23, 30])
    if not isinstance(inter, list):
        raise SymgptError(f"{f.where}: vision_config field 'intermediate_layers_indices' must be a list")
    rows = (sizes["S_img"] // sizes["P_patch"]) ** 2 + 1
    flags.update(vision_model=True, max_tiles=v.int("max_num_tiles", 4), aspect_ratios=len(ratios),
                 global_layers=v.int("num_global_layers", 8, minimum=0),
                 vision_output_dim=v.int("vision_output_dim", 7680), patch_pad=-rows % 8,
                 intermediate_layers=len(inter) or None)
    sizes["h_v"] = v.int("attention_heads", 16)
    v.activation("hidden_act", "gelu")
    v.silent("norm_eps", "initializer_range", "id2label", "label2id", "model_type")
    f.notes.extend(v.notes)
    for k in v.leftovers():
        f.notes.append(f"field vision_config.{k[:60]!r} is not understood by symgpt: ignored")
    n = (sizes["S_img"] // sizes["P_patch"]) ** 2 + 1
    dh = sizes.get("d_head", sizes["d"] // sizes["h"])
    per_image = 2 * flags["cross_layers"] * flags["max_tiles"] * n * sizes.get("h_kv", sizes["h"]) * dh
    f.notes.append(f"KV cache with images: transformers' cache also holds, in each of the {flags['cross_layers']} "
                   f"cross-attention layers, keys and values over N_img·max_num_tiles·((S_img/P_patch)²+1) = "
                   f"N_img·{flags['max_tiles']}·{n} image positions (every tile slot, padded ones too), "
                   f"h_kv·d_head wide: {per_image:,} values per image per sequence, written once in the prefill; "
                   "in inference.kv_cache with vision_run set")
    f.notes.append("without vision_run the forward counted is over token ids, without images: transformers runs "
                   "neither the vision tower nor the projector nor the cross-attention layers, whose parameters "
                   "are counted. With --set vision_run=true --set N_img=1: each image as transformers' "
                   f"pixel_values holds it, all {flags['max_tiles']} tile slots of {sizes['S_img']} px run (a tile "
                   f"the image leaves empty is zeros, masked but computed), each tile's {n} rows padded with "
                   f"{flags['patch_pad']} zero rows to a multiple of 8 as MllamaVisionModel does, the tiles one "
                   f"sequence of {flags['max_tiles'] * (n + flags['patch_pad'])} rows through the local and global "
                   "layers; the projector reads the final and intermediate layers' features; every cross-attention "
                   "layer attends from the T text positions (the <|image|> token is one of them) to the "
                   "image positions; the tile and position tables' lookups and tanh gates are elementwise")
    f.silent("image_token_index", "tie_word_embeddings", "initializer_range")
    sizes["N_img"] = 0
    return "mllama", flags, sizes


READERS = {"mllama_text_model": Reader(read_mllama_text, ("MllamaForCausalLM",)),
           "mllama": Reader(read_mllama, ("MllamaForConditionalGeneration",))}

PRESETS: tuple = (
    Preset("llama-3.2-11b-vision", "mllama",
           {"V": 128256, "d": 4096, "d_ff": 14336, "L": 32, "h": 32, "T_max": 131072, "h_kv": 8, "d_v": 1280,
            "L_v": 32, "d_ff_v": 5120, "S_img": 560, "P_patch": 14, "C_img": 3, "h_v": 16, "N_img": 0},
           flags={"cross_layers": 8},
           source="Meta 2024 (Llama 3.2 model card); meta-llama/Llama-3.2-11B-Vision(-Instruct): 40 decoder "
                  "layers of which 8 gated cross-attention, a tiled ViT-H/14 at 560 px of 32 local and 8 global "
                  "layers (tests/configs/vlm/llama-3.2-11b-vision.json)",
           note="10,670,220,835 parameters, the checkpoint's; published: 11B (L counts the 32 self-attention "
                "layers). Images: --set vision_run=true --set N_img=1 (4 tiles of 560×560 pixels each)"),
)

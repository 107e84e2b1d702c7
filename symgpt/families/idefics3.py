"""Idefics3 (Laurençon et al. 2024, "Building and better understanding vision-language models";
transformers' ``Idefics3ForConditionalGeneration``) and SmolVLM (Marafioti et al. 2025;
``SmolVLMForConditionalGeneration``, the same modules): a SigLIP-style vision tower
(``Idefics3VisionTransformer``: a Conv2d with bias, learned positions, pre-LN layers, a post
LayerNorm, no pooling head), a connector (a pixel shuffle of s × s patches into one token of
s²·d_v features, then one linear map to d without bias) and a Llama text decoder
(``blocks/idefics3.py`` builds them).

Images: N_img per sequence, each an S_img × S_img image (or crop) the tower reads whole:
(S_img/P_patch)² / s² tokens. The processor's splitting of a large image into crops plus a
downscaled global image is a count of crops per image; it is not derived here (every crop is
one of the N_img images).
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family, Preset
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields
from .granitemoe import ROUTER
from .vlm import VISION_CHOICES, VISION_FLAGS, VISION_HELP, VISION_SIZES, _llama, _read_towers

BUILD = Ref("symgpt.families.blocks.idefics3", "build")


#: Idefics2PerceiverConfig's sizes
_RESAMPLER = {"resampler_latents": 64, "resampler_depth": 3, "resampler_heads": 16, "resampler_head_dim": 96,
              "resampler_kv_heads": 4}
_RESAMPLER_HELP = {"resampler_latents": "the perceiver's learned latents (resampler_n_latents): tokens per image",
                   "resampler_depth": "the perceiver's layers (resampler_depth)",
                   "resampler_heads": "the perceiver's query heads (resampler_n_heads)",
                   "resampler_head_dim": "the perceiver's head width (resampler_head_dim)",
                   "resampler_kv_heads": "the perceiver's key/value heads (num_key_value_heads)"}


def _family(name, description):
    return Family(name=name, description=description,
                  flags=Extended(FLAGS, {}, {**VISION_FLAGS, "vlm_projector": "idefics3", "vision_head": False,
                                             "drop_cls": False, "projector_bias": False, "pixel_shuffle": 2}),
                  sizes=SIZES + VISION_SIZES, optional=OPTIONAL, build=partial(BUILD, name=name),
                  flag_help=Extended(FLAG_HELP, added={**VISION_HELP, "pixel_shuffle": "the side s of the "
                                                       "connector's pixel shuffle (scale_factor): s × s patches "
                                                       "make one token of s²·d_v features"}),
                  choices=Extended(CHOICES, added={**VISION_CHOICES, "vlm_projector": ("idefics3",)}))


FAMILIES = (_family("idefics3", "Idefics3: a SigLIP-style vision tower, a pixel-shuffle connector (one linear map), "
                    "a Llama text decoder"),
            _family("smolvlm", "SmolVLM: Idefics3's modules (SigLIP-style tower, pixel-shuffle connector, Llama "
                    "decoder)"),
            Family(name="idefics2", description="Idefics2: a SigLIP-style vision tower, a gated MLP and a perceiver "
                   "resampler (held: images are not modelled), a Mistral text decoder",
                   flags=Extended(FLAGS, dict(gqa=True), {**VISION_FLAGS, "vlm_projector": "idefics3",
                                                         "vision_head": False, "drop_cls": False,
                                                         **_RESAMPLER}),
                   sizes=SIZES + VISION_SIZES, optional=OPTIONAL,
                   build=partial(Ref("symgpt.families.blocks.idefics3", "build_idefics2"), name="idefics2"),
                   flag_help=Extended(FLAG_HELP, added={**VISION_HELP, **_RESAMPLER_HELP}),
                   choices=Extended(CHOICES, added={**VISION_CHOICES, "vlm_projector": ("idefics3",)})),
            Family(name="aria", description="Aria: Idefics3's vision tower, a cross-attention projector (held: images "
                   "are not modelled), Aria's mixture-of-experts text decoder",
                   flags=Extended(FLAGS, dict(gqa=True, moe=True, shared_expert="plain", router=ROUTER["router"],
                                             topk_norm=ROUTER["topk_norm"]),
                                  {**VISION_FLAGS, "vlm_projector": "idefics3", "vision_head": False, "drop_cls": False,
                                   "projector_queries": 256}),
                   sizes=SIZES + VISION_SIZES, optional=OPTIONAL,
                   build=partial(Ref("symgpt.families.blocks.idefics3", "build_aria"), name="aria"),
                   flag_help=Extended(FLAG_HELP, ROUTER["help_changes"],
                                      {**VISION_HELP, "projector_queries": "the projector's learned queries "
                                       "(max_value_projector_patch_to_query_dict)"}),
                   choices=Extended(CHOICES, ROUTER["choice_changes"],
                                    {**VISION_CHOICES, "vlm_projector": ("idefics3",)})))


def _tower(names: str):
    def read(v: Fields, flags: dict, sizes: dict) -> None:
        """transformers' Idefics3VisionConfig (SmolVLMVisionConfig alike)."""
        for key in ("image_size", "patch_size"):
            if isinstance(v.cfg.get(key), list):
                raise SymgptError(f"{v.where}: {key} given as a list is not modelled for {names}")
        sizes.update(d_v=v.int("hidden_size", 1152), L_v=v.int("num_hidden_layers", 12),
                     h_v=v.int("num_attention_heads", 16), d_ff_v=v.int("intermediate_size", 3072),
                     S_img=v.int("image_size", 224), P_patch=v.int("patch_size", 32), C_img=v.int("num_channels", 3))
        flags["vision_activation"] = v.activation("hidden_act", "gelu_pytorch_tanh")
        v.silent("attention_dropout", "layer_norm_eps", "initializer_range", "id2label", "label2id")
    return read


def _read(f: Fields, name: str, what: str, vision_type: str):
    flags, sizes = _read_towers(f, what, ("llama", "Llama", _llama), (vision_type, what, _tower(what)))
    s = f.int("scale_factor", 2)
    if s < 1:
        raise SymgptError(f"{f.where}: scale_factor must be at least 1")
    flags.update(vlm_projector="idefics3", vision_tower="siglip", vision_head=False, drop_cls=False,
                 projector_bias=False, pixel_shuffle=s, tied=f.bool("tie_word_embeddings", False))
    side, rest = divmod(sizes["S_img"], sizes["P_patch"])
    if rest or side % s:
        # the positions table still has (S_img // P_patch)² rows: the parameters are counted
        f.notes.append(f"this config cannot read an image: {sizes['S_img']}/{sizes['P_patch']} patches a side do "
                       f"not fall into {s}×{s} blocks (the connector's pixel shuffle); counted with no images")
    else:
        f.notes.append(f"images: N_img per sequence (0 here; --set N_img=4 counts four), each an "
                       f"{sizes['S_img']}×{sizes['S_img']} image or crop read whole: ({sizes['S_img']}/"
                       f"{sizes['P_patch']})² = {side * side} patches, pixel-shuffled {s}×{s} to "
                       f"{side * side // (s * s)} tokens; T counts those image tokens. The processor's split of a "
                       f"large image into crops and a global view is not derived: count each crop as an image")
    f.silent("image_token_id", "_pad_token_id", "pad_token_id", "use_cache", "id2label", "label2id",
             "initializer_range", "vocab_size")
    sizes["N_img"] = 0
    return name, flags, sizes


def _read_idefics2(f: Fields):
    """transformers' Idefics2Config: text_config (MistralConfig), vision_config
    (Idefics2VisionConfig), perceiver_config (Idefics2PerceiverConfig; its hidden_size is the
    decoder's)."""
    from .mistral import read as read_mistral

    def text(t):
        _, flags, sizes = read_mistral(t)
        return flags, sizes

    flags, sizes = _read_towers(f, "Idefics2", ("mistral", "Mistral", text),
                                ("idefics2_vision", "Idefics2", _tower("Idefics2")))
    p = sub_fields(f, "perceiver_config")
    flags.update(resampler_latents=p.int("resampler_n_latents", 64), resampler_depth=p.int("resampler_depth", 3),
                 resampler_heads=p.int("resampler_n_heads", 16), resampler_head_dim=p.int("resampler_head_dim", 96),
                 resampler_kv_heads=p.int("num_key_value_heads", 4), vlm_projector="idefics3",
                 vision_tower="siglip", vision_head=False, drop_cls=False, tied=f.bool("tie_word_embeddings", False))
    act = p.str("hidden_act", "silu")
    if act not in ("silu", "swish"):
        f.notes.append(f"the perceiver's activation {act[:30]!r} runs in no forward counted here")
    p.silent("hidden_size", "rms_norm_eps", "attention_dropout", "initializer_range", "id2label", "label2id")
    note_leftovers(f, p, "perceiver_config")
    f.notes.append("images are not modelled for Idefics2: the connector (a gated MLP and a perceiver resampler of "
                   f"{flags['resampler_latents']} latents) is held, its parameters counted; N_img must be 0")
    f.silent("image_token_id", "use_cache", "id2label", "label2id", "initializer_range")
    sizes["N_img"] = 0
    return "idefics2", flags, sizes


def _read_aria(f: Fields):
    """transformers' AriaConfig: text_config (AriaTextConfig), vision_config (Idefics3VisionConfig),
    the projector's queries."""
    from .aria import read as read_aria_text

    def text(t):
        _, flags, sizes = read_aria_text(t)
        return flags, sizes

    for key in ("text_config", "vision_config"):
        if not isinstance(f.cfg.get(key), dict):
            raise SymgptError(f"{f.where}: an Aria config without its {key} is not modelled (give the checkpoint's "
                              "config.json, which has one)")
    flags, sizes = _read_towers(f, "Aria", ("aria_text", "Aria", text),
                                ("idefics3_vision", "Idefics3", _tower("Aria")))
    queries = f.int("max_value_projector_patch_to_query_dict", 256)
    flags.update(projector_queries=queries, vlm_projector="idefics3", vision_tower="siglip", vision_head=False,
                 drop_cls=False, tied=f.bool("tie_word_embeddings", False))
    layer = f.get("vision_feature_layer", -1)[0]
    if not isinstance(layer, int) or isinstance(layer, bool):
        raise SymgptError(f"{f.where}: vision_feature_layer as a list is not modelled")
    f.notes.append("images are not modelled for Aria: the cross-attention projector is held, its parameters "
                   "counted; N_img must be 0")
    f.silent("image_token_index", "image_token_id", "projector_patch_to_query_dict", "id2label", "label2id",
             "initializer_range")
    sizes["N_img"] = 0
    return "aria", flags, sizes


READERS = {"aria": Reader(_read_aria, ("AriaForConditionalGeneration",)),
           "idefics2": Reader(_read_idefics2, ("Idefics2ForConditionalGeneration",)),
           "idefics3": Reader(lambda f: _read(f, "idefics3", "Idefics3", "idefics3_vision"),
                              ("Idefics3ForConditionalGeneration",)),
           "smolvlm": Reader(lambda f: _read(f, "smolvlm", "SmolVLM", "smolvlm_vision"),
                             ("SmolVLMForConditionalGeneration",))}

PRESETS: tuple = (
    Preset("smolvlm-256m", "idefics3",
           {"V": 49280, "d": 576, "d_ff": 1536, "L": 30, "h": 9, "T_max": 8192, "h_kv": 3, "d_v": 768, "L_v": 12,
            "h_v": 12, "d_ff_v": 3072, "S_img": 512, "P_patch": 16, "C_img": 3, "N_img": 0},
           flags={"pixel_shuffle": 4},
           source="Marafioti et al. 2025 (SmolVLM: Redefining small and efficient multimodal models); "
                  "HuggingFaceTB/SmolVLM-256M-Instruct: SigLIP B/16 at 512 px, a 4×4 pixel shuffle, SmolLM2-135M "
                  "(tests/configs/vlm/smolvlm-256m-instruct.json)",
           note="256,484,928 parameters, the checkpoint's; published: 256M. Images: --set N_img=1 (64 tokens "
                "each, one 512×512 crop; the processor's crops of a large image are each one image)"),
    Preset("smolvlm-500m", "idefics3",
           {"V": 49280, "d": 960, "d_ff": 2560, "L": 32, "h": 15, "T_max": 8192, "h_kv": 5, "d_v": 768, "L_v": 12,
            "h_v": 12, "d_ff_v": 3072, "S_img": 512, "P_patch": 16, "C_img": 3, "N_img": 0},
           flags={"pixel_shuffle": 4},
           source="Marafioti et al. 2025 (SmolVLM: Redefining small and efficient multimodal models); "
                  "HuggingFaceTB/SmolVLM-500M-Instruct: SigLIP B/16 at 512 px, a 4×4 pixel shuffle, SmolLM2-360M "
                  "(tests/configs/vlm/smolvlm-500m-instruct.json)",
           note="507,482,304 parameters, the checkpoint's; published: 500M. Images: --set N_img=1 (64 tokens "
                "each, one 512×512 crop; the processor's crops of a large image are each one image)"),
)


def split_crops(height: int, width: int, longest_edge: int = 4 * 364, crop: int = 364) -> int:
    """The images the Idefics3 processor makes of one height × width image with image splitting on
    (``Idefics3ImageProcessor``, do_image_splitting; defaults size.longest_edge = 1456,
    max_image_size.longest_edge = 364): the image is first resized so that its longer side is
    *longest_edge* (the shorter side ⌊longest_edge·short/long⌋, rounded up to even), then cut into
    ⌈H'/crop⌉ × ⌈W'/crop⌉ crops of crop × crop plus one global view; an image whose resized sides
    both fit one crop is not split (1). Each crop is one of the N_img images, of
    (crop/P_patch)²/s² tokens (169 at 364/14 and s = 2). Integer arithmetic throughout."""
    if height < 1 or width < 1 or longest_edge < 1 or crop < 1:
        raise SymgptError("image sides and sizes must be positive integers")
    if longest_edge > 4096:  # the processor then scales below its MAX_IMAGE_SIZE as well: not derived here
        raise SymgptError(f"a resized longest edge of {longest_edge} (over 4096) is not modelled")
    long, short = max(height, width), min(height, width)
    side = longest_edge * short // long
    side += side % 2
    side = max(side, 1)
    rows, cols = -(-longest_edge // crop), -(-side // crop)
    if longest_edge <= crop and side <= crop:
        return 1
    return rows * cols + 1

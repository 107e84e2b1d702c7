"""Vision--language models: a vision tower and a multi-modal projector beside a text decoder
(``blocks/vlm.py`` builds them): Gemma 3 (Gemma Team 2025; ``Gemma3ForConditionalGeneration``:
SigLIP, an average-pooled RMSNorm + linear projector, Gemma 3's text decoder) and LLaVA (Liu et
al. 2023; ``LlavaForConditionalGeneration``: CLIP, a 2-layer MLP projector, a Llama decoder) and
PaliGemma (Beyer et al. 2024; ``PaliGemmaForConditionalGeneration``: SigLIP, one linear
projector, a Gemma decoder).

Images per sequence are the size N_img: a config is read with N_img = 0 (text only, as the
model's forward without ``pixel_values``); ``--set N_img=4`` counts four images per sequence.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family, Preset
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields, unread_layers_note

#: LLaVA-NeXT's and LLaVA-OneVision's any-resolution tiling (families/llava_anyres.py): no image size, no image
ANYRES_FLAGS = {"image_height": None, "image_width": None, "grid_tiles": 1 << 1 | 1 << 2 | 1 << 8 | 1 << 9 | 1 << 16,
                "anyres_tile": 336, "anyres_side": 24, "anyres_max": None}
ANYRES_HELP = {
    "image_height": "each image's height in pixels before the processor tiles it (unset: no image; with "
                    "image_width, N_img images of that size run)",
    "image_width": "each image's width in pixels before the processor tiles it (unset: no image)",
    "grid_tiles": "the grids an image may be tiled to (image_grid_pinpoints, in crops of anyres_tile pixels): bit "
                  "8·(rows − 1) + (columns − 1) set for each rows × columns grid",
    "anyres_tile": "the side of a crop in pixels (the vision tower's image_size)",
    "anyres_side": "the features a side of a crop (image_size // patch_size)",
    "anyres_max": "LLaVA-OneVision's anyres_max_m: the grid's features are interpolated down past 1.21·m crops' "
                  "worth (unset: none, LLaVA-NeXT)",
}

BUILD = Ref("symgpt.families.blocks.vlm", "build")

#: the vision tower's and the images' sizes, besides the decoder's
VISION_SIZES = ("d_v", "h_v", "L_v", "d_ff_v", "S_img", "P_patch", "C_img", "N_img")

#: the flags every vision--language family adds to its decoder's
VISION_FLAGS = {"vlm_projector": "gemma3", "vision_tower": "siglip", "vision_activation": "gelu_tanh",
                "vision_head": False, "image_pool": 1, "drop_cls": True, "projector_bias": True,
                "projector_activation": "gelu"}
VISION_HELP = {
    "vlm_projector": "the multi-modal projector: gemma3 (avg pool, RMSNorm, linear), llava (2-layer MLP) or "
                     "paligemma (one linear with bias)",
    "vision_tower": "siglip (no class token, conv bias) or clip (class token, pre-LayerNorm)",
    "vision_activation": "the vision tower's MLP activation",
    "vision_head": "SigLIP's attention-pooling head is present and run (its output unused by the decoder)",
    "image_pool": "the side k of Gemma 3's k × k average pool of the patch grid",
    "drop_cls": "the class token is dropped before the projector (LLaVA's 'default' feature strategy)",
    "projector_bias": "the projector's linear maps have biases (LLaVA)",
    "projector_activation": "the activation between the projector's two linear maps (LLaVA)",
}
_ACTS = ("gelu", "gelu_tanh", "relu", "silu", "gelu_new")
VISION_CHOICES = {"vlm_projector": ("gemma3", "llava", "paligemma"), "vision_tower": ("siglip", "clip"),
                  "vision_activation": _ACTS, "projector_activation": _ACTS}


def vlm_family(name, description, decoder_changes, **vision_changes):
    flags = {**VISION_FLAGS, **vision_changes}
    return Family(name=name, description=description,
                  flags=Extended(FLAGS, decoder_changes, flags), sizes=SIZES + VISION_SIZES,
                  optional=OPTIONAL, build=partial(BUILD, name=name),
                  flag_help=Extended(FLAG_HELP, added=VISION_HELP),
                  choices=Extended(CHOICES, added=VISION_CHOICES))


FAMILIES = (
    vlm_family("gemma3", "Gemma 3: SigLIP vision tower, avg-pooled RMSNorm + linear projector, Gemma 3 text decoder",
               dict(activation="gelu_tanh", embed_scale=True, tied=True, gqa=True, norm_offset=True,
                    local_rope=True, branch_norms=True, qk_norm="head", window=True, full_every=6)),
    vlm_family("llava", "LLaVA: CLIP vision tower, 2-layer MLP projector, Llama text decoder",
               {}, vlm_projector="llava", vision_tower="clip", vision_activation="gelu"),
    vlm_family("paligemma", "PaliGemma: SigLIP vision tower, one linear projector, Gemma text decoder",
               dict(activation="gelu_tanh", embed_scale=True, tied=True, norm_offset=True),
               vlm_projector="paligemma", vision_activation="gelu_tanh", vision_head=False),
    Family(name="llava_next", description="LLaVA-NeXT: LLaVA's tower, projector and Llama decoder, and a learned "
           "image-newline vector (held: images, tiled by resolution, are not modelled)",
           flags=Extended(FLAGS, {}, {**VISION_FLAGS, "vlm_projector": "llava", "vision_tower": "clip",
                                      "vision_activation": "gelu", "image_newline": True, **ANYRES_FLAGS}),
           sizes=SIZES + VISION_SIZES, optional=OPTIONAL, build=partial(BUILD, name="llava_next"),
           flag_help=Extended(FLAG_HELP, added={**VISION_HELP, "image_newline": "LLaVA-NeXT's learned image-newline "
                                                "vector (d parameters)", **ANYRES_HELP}),
           choices=Extended(CHOICES, added=VISION_CHOICES)),
    Family(name="vipllava", description="ViP-LLaVA: LLaVA's CLIP tower and Llama decoder, a projector over "
           "several layers' features (held: images are not modelled)",
           flags=Extended(FLAGS, {}, {**VISION_FLAGS, "vlm_projector": "llava", "vision_tower": "clip",
                                      "vision_activation": "gelu", "feature_layers": 5}),
           sizes=SIZES + VISION_SIZES, optional=OPTIONAL, build=partial(BUILD, name="vipllava"),
           flag_help=Extended(FLAG_HELP, added={**VISION_HELP, "feature_layers": "the vision layers whose "
                                                "features the projector concatenates; its parameters are held: "
                                                "N_img must be 0"}),
           choices=Extended(CHOICES, added=VISION_CHOICES)),
    Family(name="llava_onevision", description="LLaVA-OneVision: SigLIP vision tower, LLaVA's 2-layer MLP projector, "
           "Qwen2 text decoder, a learned image-newline vector (held: images, tiled by resolution, are not modelled)",
           flags=Extended(FLAGS, dict(gqa=True, qkv_bias=True),
                          {**VISION_FLAGS, "vlm_projector": "llava", "vision_head": False, "drop_cls": False,
                           "image_newline": True, **ANYRES_FLAGS}),
           sizes=SIZES + VISION_SIZES, optional=OPTIONAL, build=partial(BUILD, name="llava_onevision"),
           flag_help=Extended(FLAG_HELP, added={**VISION_HELP, "image_newline": "the learned image-newline "
                                                "vector (d parameters)", **ANYRES_HELP}),
           choices=Extended(CHOICES, added=VISION_CHOICES)),
)


def read_siglip(v: Fields, flags: dict, sizes: dict) -> None:
    """transformers' SiglipVisionConfig (the tower's fields)."""
    sizes.update(d_v=v.int("hidden_size", 768), L_v=v.int("num_hidden_layers", 12),
                 h_v=v.int("num_attention_heads", 12), d_ff_v=v.int("intermediate_size", 3072),
                 S_img=v.int("image_size", 224), P_patch=v.int("patch_size", 16), C_img=v.int("num_channels", 3))
    flags["vision_activation"] = v.activation("hidden_act", "gelu_pytorch_tanh")
    flags["vision_head"] = v.bool("vision_use_head", True)
    v.silent("attention_dropout", "layer_norm_eps", "id2label", "label2id", "vision_use_head")


def read_gemma3(f: Fields):
    """transformers' Gemma3Config: text_config (Gemma3TextConfig), vision_config
    (SiglipVisionConfig), mm_tokens_per_image."""
    from .gemma2 import read_gemma3_text

    text = sub_fields(f, "text_config")
    _, flags, sizes = read_gemma3_text(text)
    note_leftovers(f, text, "text_config")
    vision = sub_fields(f, "vision_config")
    read_siglip(vision, flags, sizes)
    note_leftovers(f, vision, "vision_config")
    if vision.cfg.get("model_type", "siglip_vision_model") != "siglip_vision_model":
        raise SymgptError(f"{f.where}: a vision_config of model_type {str(vision.cfg['model_type'])[:40]!r} "
                          "is not modelled (Gemma 3's is siglip_vision_model)")
    side = sizes["S_img"] // sizes["P_patch"]
    tokens = f.int("mm_tokens_per_image", 256)
    per_side = int(tokens ** 0.5)
    kernel = side // per_side if per_side else 0
    flags.update(vlm_projector="gemma3", vision_tower="siglip", image_pool=max(kernel, 1))
    if kernel < 1 or kernel * per_side != side or per_side * per_side != tokens \
            or sizes["S_img"] % sizes["P_patch"]:
        f.notes.append(f"this config cannot read an image: {sizes['S_img']}/{sizes['P_patch']} patches a side do "
                       f"not pool to mm_tokens_per_image={tokens} (transformers' AvgPool2d kernel would be "
                       f"{kernel}); counted with no images")
    else:
        f.notes.append(f"images: N_img per sequence (0 here; --set N_img=4 counts four), each resized to "
                       f"{sizes['S_img']}×{sizes['S_img']}: ({sizes['S_img']}/{sizes['P_patch']})² = {side * side} "
                       f"patches pooled {kernel}×{kernel} to {tokens} tokens; T counts those image tokens. Under pan "
                       "and scan (the processor's do_pan_and_scan) an image is read as itself and its k crops: count "
                       "1 + k images (families/gemma3_pas.py: images_seen(height, width))")
    f.silent("boi_token_index", "eoi_token_index", "image_token_index", "id2label", "label2id",
             "tie_word_embeddings", "initializer_range")
    sizes["N_img"] = 0
    return "gemma3", flags, sizes


#: LlavaConfig's vision tower when its config.json has no vision_config (CLIP ViT-L/14 at 336)
_LLAVA_VISION = dict(d_v=1024, L_v=24, h_v=16, d_ff_v=4096, S_img=336, P_patch=14)


def read_llava_next(f: Fields):
    """transformers' LlavaNextConfig (LlavaNextVideoConfig alike): LLaVA's fields, the resolutions
    an image is tiled to (image_grid_pinpoints) and a learned image-newline vector of d."""
    _, flags, sizes = read_llava(f)
    f.notes[:] = [n for n in f.notes if not n.startswith("images: ")]
    from .llava_anyres import read_anyres

    read_anyres(f, flags, sizes, sizes["S_img"], onevision=False)
    f.silent("video_token_index", "video_token_id", "video_seq_length", "spatial_pool_mode",
             "spatial_pool_stride")
    flags["image_newline"] = True
    return "llava_next", flags, sizes


def _read_towers(f: Fields, what: str, decoder: tuple, tower: tuple):
    """The decoder and the vision tower of a vision--language config: *decoder* is (its text_config
    model_type, its name, a reader Fields -> (flags, sizes)), *tower* (its vision_config model_type,
    its name, a reader (Fields, flags, sizes) -> None). Another model_type in either is refused in one
    line; the fields neither reads are noted."""
    text_type, text_name, read_text = decoder
    text = sub_fields(f, "text_config")
    mt = text.cfg.get("model_type", text_type)
    if mt != text_type:
        raise SymgptError(f"{f.where}: a {what} text_config of model_type {str(mt)[:40]!r} is not modelled "
                          f"(symgpt counts {what} with a {text_name} decoder)")
    flags, sizes = read_text(text)
    note_leftovers(f, text, "text_config")
    vision_type, vision_name, read_vision = tower
    vision = sub_fields(f, "vision_config")
    vt = vision.cfg.get("model_type", vision_type)
    if vt != vision_type:
        raise SymgptError(f"{f.where}: a {what} vision_config of model_type {str(vt)[:40]!r} is not modelled "
                          f"(symgpt counts {vision_name}'s vision tower)")
    read_vision(vision, flags, sizes)
    note_leftovers(f, vision, "vision_config")
    return flags, sizes


def _llama(text: Fields):
    from .llama import read_llama_like

    return read_llama_like(text, dict(V=32000, d=4096, d_ff=11008, L=32, h=32, T_max=2048))


def _clip(f: Fields):
    """CLIP's tower, with LlavaConfig's own defaults where *f* has no vision_config."""
    given = "vision_config" in f.cfg
    return lambda v, flags, sizes: read_clip(v, flags, sizes, given)


def read_vipllava(f: Fields):
    """transformers' VipLlavaConfig: LLaVA's text_config (LlamaConfig) and vision_config
    (CLIPVisionConfig), a projector (LayerNorm, two linear maps with biases) over the features of
    the vision_feature_layer list concatenated."""
    flags, sizes = _read_towers(f, "ViP-LLaVA", ("llama", "Llama", _llama), ("clip_vision_model", "CLIP", _clip(f)))
    layers = f.get("vision_feature_layer", [-2, -5, -8, -11, 6])[0]
    if isinstance(layers, int) and not isinstance(layers, bool):
        layers = [layers]
    if not isinstance(layers, list) or not layers or not all(isinstance(i, int) and not isinstance(i, bool)
                                                             for i in layers):
        raise SymgptError(f"{f.where}: vision_feature_layer must be an integer or a list of integers")
    flags.update(vlm_projector="llava", vision_tower="clip", feature_layers=len(layers),
                 projector_activation=f.activation("projector_hidden_act", "gelu"))
    if f.bool("tie_word_embeddings", False):
        flags["tied"] = True
    f.notes.append(f"images are not modelled for ViP-LLaVA (its projector reads {len(layers)} layers' features "
                   "concatenated): N_img must be 0; the projector's parameters are held")
    f.silent("image_token_index", "image_token_id", "image_seq_length", "projector_layernorm_eps", "id2label",
             "label2id", "ignore_index", "initializer_range")
    sizes["N_img"] = 0
    return "vipllava", flags, sizes


def read_llava_onevision(f: Fields):
    """transformers' LlavaOnevisionConfig: text_config (Qwen2Config), vision_config
    (SiglipVisionConfig), LLaVA's projector fields and a learned image-newline vector of d."""
    from .qwen2 import read as read_qwen2

    flags, sizes = _read_towers(f, "LLaVA-OneVision", ("qwen2", "Qwen2", lambda t: read_qwen2(t)[1:]),
                                ("siglip_vision_model", "SigLIP", read_siglip))
    side, rest = divmod(tile := sizes["S_img"], sizes["P_patch"])
    if rest:
        # SiglipVisionEmbeddings: a stride-P convolution, (S // P)² patches and position rows
        f.notes.append(f"image_size {sizes['S_img']} is not a multiple of patch_size {sizes['P_patch']}: the patch "
                       f"convolution reads {side}×{side} patches (its last {rest} pixels a side unread), counted as "
                       f"S_img = {side * sizes['P_patch']}")
        sizes["S_img"] = side * sizes["P_patch"]
    layer = f.get("vision_feature_layer", -1)[0]
    if not isinstance(layer, int) or isinstance(layer, bool):
        raise SymgptError(f"{f.where}: vision_feature_layer as a list (features of several layers concatenated) "
                          "is not modelled")
    f.str("vision_feature_select_strategy", "full")
    if (unread := unread_layers_note(sizes["L_v"], layer)) is not None:
        f.notes.append(unread)
    flags.update(vlm_projector="llava", vision_tower="siglip", drop_cls=False, image_newline=True,
                 projector_bias=f.bool("multimodal_projector_bias", True),
                 projector_activation=f.activation("projector_hidden_act", "gelu"))
    if f.bool("tie_word_embeddings", False):
        flags["tied"] = True
    from .llava_anyres import read_anyres

    read_anyres(f, flags, sizes, tile, onevision=True)
    f.silent("image_token_index", "image_token_id", "video_token_index", "video_token_id",
             "id2label", "label2id", "initializer_range")
    sizes["N_img"] = 0
    return "llava_onevision", flags, sizes


def read_clip(v: Fields, flags: dict, sizes: dict, given: bool) -> None:
    """transformers' CLIPVisionConfig (the tower's fields); LlavaConfig's own defaults when the
    config has no vision_config."""
    dv = _LLAVA_VISION if not given else dict(d_v=768, L_v=12, h_v=12, d_ff_v=3072, S_img=224, P_patch=32)
    sizes.update(d_v=v.int("hidden_size", dv["d_v"]), L_v=v.int("num_hidden_layers", dv["L_v"]),
                 h_v=v.int("num_attention_heads", dv["h_v"]), d_ff_v=v.int("intermediate_size", dv["d_ff_v"]),
                 S_img=v.int("image_size", dv["S_img"]), P_patch=v.int("patch_size", dv["P_patch"]),
                 C_img=v.int("num_channels", 3))
    act = v.str("hidden_act", "quick_gelu")
    if act == "quick_gelu":
        act = "gelu"
        v.notes.append("the vision tower's quick_gelu (x·sigmoid(1.702x)) is counted as gelu: the same matmuls, "
                       "only elementwise costs differ")
    flags["vision_activation"] = v.activation_named("hidden_act", act)
    v.silent("attention_dropout", "layer_norm_eps", "id2label", "label2id", "projection_dim", "vocab_size",
             "initializer_factor", "initializer_range")


def read_llava(f: Fields):
    """transformers' LlavaConfig: text_config (LlamaConfig), vision_config (CLIPVisionConfig),
    the projector's fields and which vision features it reads."""
    flags, sizes = _read_towers(f, "LLaVA", ("llama", "Llama", _llama), ("clip_vision_model", "CLIP", _clip(f)))
    layer = f.get("vision_feature_layer", -2)[0]
    if not isinstance(layer, int) or isinstance(layer, bool):
        raise SymgptError(f"{f.where}: vision_feature_layer as a list (features of several layers concatenated) "
                          "is not modelled")
    strategy = f.str("vision_feature_select_strategy", "default")
    if strategy not in ("default", "full"):
        raise SymgptError(f"{f.where}: vision_feature_select_strategy {strategy[:40]!r} is not default or full")
    flags.update(vlm_projector="llava", vision_tower="clip", drop_cls=strategy == "default",
                 projector_bias=f.bool("multimodal_projector_bias", True),
                 projector_activation=f.activation("projector_hidden_act", "gelu"))
    tie = f.cfg.get("tie_word_embeddings")
    if tie is not None:
        flags["tied"] = bool(f.bool("tie_word_embeddings", False) or flags.get("tied"))
    side = sizes["S_img"] // sizes["P_patch"]
    tokens = side * side + (0 if strategy == "default" else 1)
    f.notes.append(f"images: N_img per sequence (0 here; --set N_img=4 counts four), each resized to "
                   f"{sizes['S_img']}×{sizes['S_img']}: ({sizes['S_img']}/{sizes['P_patch']})² = {side * side} "
                   f"patches{' (class token dropped)' if strategy == 'default' else ' and the class token'}: "
                   f"{tokens} tokens; T counts those image tokens")
    f.notes.append(f"the vision tower runs all {sizes['L_v']} layers (transformers asks it for every hidden "
                   f"state) and the projector reads hidden state {layer}: every layer is counted")
    if (unread := unread_layers_note(sizes["L_v"], layer)) is not None:
        f.notes.append(unread)
    f.silent("image_token_index", "image_token_id", "image_seq_length", "id2label", "label2id", "ignore_index",
             "initializer_range")
    sizes["N_img"] = 0
    return "llava", flags, sizes


def read_paligemma(f: Fields):
    """transformers' PaliGemmaConfig: text_config (GemmaConfig), vision_config
    (SiglipVisionConfig), the projector's output width (vision_config.projection_dim)."""
    from .gemma import read as read_gemma

    text = sub_fields(f, "text_config")
    if not text.cfg:  # transformers' PaliGemmaConfig then builds a decoder of its own: not read from defaults
        raise SymgptError(f"{f.where}: a PaliGemma config without its text_config is not modelled (give the "
                          "checkpoint's config.json, which has one)")
    mt = text.cfg.get("model_type", "gemma")
    if mt != "gemma":
        raise SymgptError(f"{f.where}: a PaliGemma text_config of model_type {str(mt)[:40]!r} is not modelled "
                          "(symgpt counts PaliGemma with a Gemma decoder)")
    _, flags, sizes = read_gemma(text)
    text.silent("num_image_tokens")
    if text.bool("use_bidirectional_attention", False):
        f.notes.append("the decoder attends bidirectionally over the prefix (PaliGemma's prefix-LM mask): the same "
                       "parameters, and the default convention counts attention without a causal discount")
    note_leftovers(f, text, "text_config")
    vision = sub_fields(f, "vision_config")
    vt = vision.cfg.get("model_type", "siglip_vision_model")
    if vt != "siglip_vision_model":
        raise SymgptError(f"{f.where}: a PaliGemma vision_config of model_type {str(vt)[:40]!r} is not modelled "
                          "(symgpt counts SigLIP's vision tower)")
    read_siglip(vision, flags, sizes)
    proj = vision.int("projection_dim", 2048)
    if proj != sizes["d"]:
        raise SymgptError(f"{f.where}: vision_config.projection_dim {proj} differs from the decoder's hidden_size "
                          f"{sizes['d']}: the image features would not fit the decoder")
    vision.silent("vocab_size", "num_image_tokens")
    note_leftovers(f, vision, "vision_config")
    flags.update(vlm_projector="paligemma", vision_tower="siglip")
    side = sizes["S_img"] // sizes["P_patch"]
    f.notes.append(f"images: N_img per sequence (0 here; --set N_img=4 counts four), each resized to "
                   f"{sizes['S_img']}×{sizes['S_img']}: ({sizes['S_img']}/{sizes['P_patch']})² = {side * side} "
                   f"tokens; T counts those image tokens")
    f.silent("image_token_index", "image_token_id", "projection_dim", "hidden_size", "vocab_size", "ignore_index",
             "id2label", "label2id", "initializer_range", "tie_word_embeddings")
    if not f.bool("tie_word_embeddings", True):
        flags["tied"] = False
    sizes["N_img"] = 0
    return "paligemma", flags, sizes


READERS = {"gemma3": Reader(read_gemma3, ("Gemma3ForConditionalGeneration",)),
           # ShieldGemma 2's config is Gemma 3's under its own model_type (the class is Gemma 3's)
           "shieldgemma2": Reader(read_gemma3, ("Gemma3ForConditionalGeneration",)),
           "paligemma": Reader(read_paligemma, ("PaliGemmaForConditionalGeneration",)),
           "llava_next": Reader(read_llava_next, ("LlavaNextForConditionalGeneration",)),
           # LLaVA-NeXT-Video: LLaVA-NeXT's parameters; its video pooling (spatial_pool_*) has none
           "llava_next_video": Reader(read_llava_next, ("LlavaNextVideoForConditionalGeneration",)),
           "vipllava": Reader(read_vipllava, ("VipLlavaForConditionalGeneration",)),
           "llava_onevision": Reader(read_llava_onevision, ("LlavaOnevisionForConditionalGeneration",)),
           "llava": Reader(read_llava, ("LlavaForConditionalGeneration",))}

PRESETS: tuple[Preset, ...] = (
    Preset("gemma-3-4b", "gemma3",
           {"L": 34, "h": 8, "h_kv": 4, "d_head": 256, "d": 2560, "d_ff": 10240, "V": 262208, "T_max": 131072,
            "W": 1024, "d_v": 1152, "L_v": 27, "h_v": 16, "d_ff_v": 4304, "S_img": 896, "P_patch": 14, "C_img": 3,
            "N_img": 0},
           flags={"image_pool": 4},
           source="Gemma Team 2025 (Gemma 3 Technical Report); google/gemma-3-4b-it, text model and SigLIP "
                  "vision encoder",
           note="4,300,079,472 parameters, the total of the checkpoint's safetensors on the Hugging Face Hub; "
                "published: 4B. Images of 896×896 pixels, 256 tokens each"),
    Preset("gemma-3-12b", "gemma3",
           {"L": 48, "h": 16, "h_kv": 8, "d_head": 256, "d": 3840, "d_ff": 15360, "V": 262208, "T_max": 131072,
            "W": 1024, "d_v": 1152, "L_v": 27, "h_v": 16, "d_ff_v": 4304, "S_img": 896, "P_patch": 14, "C_img": 3,
            "N_img": 0},
           flags={"image_pool": 4},
           source="Gemma Team 2025 (Gemma 3 Technical Report); google/gemma-3-12b-it, text model and SigLIP "
                  "vision encoder",
           note="12,187,325,040 parameters, the total of the checkpoint's safetensors on the Hugging Face Hub; "
                "published: 12B. Images of 896×896 pixels, 256 tokens each"),
    Preset("gemma-3-27b", "gemma3",
           {"L": 62, "h": 32, "h_kv": 16, "d_head": 128, "d": 5376, "d_ff": 21504, "V": 262208, "T_max": 131072,
            "W": 1024, "d_v": 1152, "L_v": 27, "h_v": 16, "d_ff_v": 4304, "S_img": 896, "P_patch": 14, "C_img": 3,
            "N_img": 0},
           flags={"image_pool": 4, "query_scalar": 168},
           source="Gemma Team 2025 (Gemma 3 Technical Report); google/gemma-3-27b-it, text model and SigLIP "
                  "vision encoder",
           note="27,432,406,640 parameters, the total of the checkpoint's safetensors on the Hugging Face Hub; "
                "published: 27B. Images of 896×896 pixels, 256 tokens each"),
    # --- LLaVA-1.5 7B and PaliGemma 3B: checked against their config.json and checkpoint totals ---
    Preset("llava-1.5-7b", "llava",
           {"V": 32064, "d": 4096, "d_ff": 11008, "L": 32, "h": 32, "T_max": 4096, "d_v": 1024, "L_v": 24,
            "h_v": 16, "d_ff_v": 4096, "S_img": 336, "P_patch": 14, "C_img": 3, "N_img": 0},
           source="Liu et al. 2023 (Improved Baselines with Visual Instruction Tuning); llava-hf/llava-1.5-7b-hf "
                  "config.json (tests/configs/vlm/llava-1.5-7b.json): CLIP ViT-L/14 at 336 px, a 2-layer MLP "
                  "projector, Vicuna-7B v1.5",
           note="7,063,427,072 parameters, the checkpoint's (686 tensors in its safetensors); published: 7B. "
                "Images: --set N_img=1 (576 tokens each, 336×336 pixels)"),
    Preset("paligemma-3b-224", "paligemma",
           {"V": 257216, "d": 2048, "d_ff": 16384, "L": 18, "h": 8, "T_max": 8192, "h_kv": 1, "d_head": 256,
            "d_v": 1152, "L_v": 27, "h_v": 16, "d_ff_v": 4304, "S_img": 224, "P_patch": 14, "C_img": 3,
            "N_img": 0},
           source="Beyer et al. 2024 (PaliGemma: A versatile 3B VLM for transfer); google/paligemma-3b-pt-224 and "
                  "-mix-224 (one architecture): SigLIP So400m/14 at 224 px, a linear projector, Gemma 2B "
                  "(tests/configs/vlm/paligemma-3b-224.json)",
           note="2,923,466,480 parameters, the checkpoint's as transformers loads it (the head tied to the "
                "embedding); published: 3B. Images: --set N_img=1 (256 tokens each, 224×224 pixels)"),
)

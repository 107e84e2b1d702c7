"""DeepSeek-VL (Lu et al. 2024, "DeepSeek-VL: Towards Real-World Vision-Language Understanding";
transformers' ``DeepseekVLForConditionalGeneration``): SigLIP's vision tower, a 2-layer MLP aligner
(``blocks/deepseek_vl.py``) and a Llama text decoder. Images: N_img per sequence, each resized to
S_img × S_img, (S_img/P_patch)² tokens.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, note_leftovers, sub_fields
from .vlm import VISION_CHOICES, VISION_FLAGS, VISION_HELP, VISION_SIZES, _llama, _read_towers, read_siglip

#: SamVisionConfig's sizes (the high-resolution encoder of DeepSeek-VL hybrid), and their fields
_SAM = {"sam_dim": 768, "sam_layers": 12, "sam_heads": 12, "sam_mlp": 3072, "sam_side": 64, "sam_patch": 16,
        "sam_channels": 3, "sam_out": 256, "sam_window": 14, "sam_global": 4, "sam_qkv_bias": True,
        "sam_abs_pos": True, "sam_rel_pos": True}
_SAM_HELP = {"sam_dim": "width (hidden_size)", "sam_layers": "layers (num_hidden_layers)",
             "sam_heads": "heads (num_attention_heads)", "sam_mlp": "MLP width (mlp_dim)",
             "sam_side": "image side in patches (image_size / patch_size)", "sam_patch": "patch side (patch_size)",
             "sam_channels": "image channels (num_channels)", "sam_out": "neck channels (output_channels)",
             "sam_window": "window side (window_size)", "sam_global": "global layers (global_attn_indexes)",
             "sam_qkv_bias": "QKV bias (qkv_bias)", "sam_abs_pos": "absolute positions (use_abs_pos)",
             "sam_rel_pos": "relative positions (use_rel_pos)"}

FAMILIES = (Family(name="deepseek_vl", description="DeepSeek-VL: SigLIP vision tower, 2-layer MLP aligner, Llama text "
                   "decoder",
                   flags=Extended(FLAGS, {}, {**VISION_FLAGS, "vlm_projector": "deepseek_vl", "drop_cls": False}),
                   sizes=SIZES + VISION_SIZES, optional=OPTIONAL,
                   build=partial(Ref("symgpt.families.blocks.deepseek_vl", "build"), name="deepseek_vl"),
                   flag_help=Extended(FLAG_HELP, added=VISION_HELP),
                   choices=Extended(CHOICES, added={**VISION_CHOICES, "vlm_projector": ("deepseek_vl",)})),
            Family(name="deepseek_vl_hybrid", description="DeepSeek-VL hybrid: SigLIP and a SAM high-resolution "
                   "encoder, an aligner of both (held: images are not modelled), Llama text decoder",
                   flags=Extended(FLAGS, {}, {**VISION_FLAGS, "vlm_projector": "deepseek_vl", "drop_cls": False,
                                              **_SAM}),
                   sizes=SIZES + VISION_SIZES, optional=OPTIONAL,
                   build=partial(Ref("symgpt.families.blocks.deepseek_vl", "build_hybrid"), name="deepseek_vl_hybrid"),
                   flag_help=Extended(FLAG_HELP, added={**VISION_HELP, **{k: f"the SAM high-resolution encoder's "
                                                        f"{v}" for k, v in _SAM_HELP.items()}}),
                   choices=Extended(CHOICES, added={**VISION_CHOICES, "vlm_projector": ("deepseek_vl",)})))


def read(f: Fields):
    """transformers' DeepseekVLConfig: text_config (LlamaConfig), vision_config (SiglipVisionConfig)."""
    for key in ("text_config", "vision_config"):
        if not isinstance(f.cfg.get(key), dict):
            raise SymgptError(f"{f.where}: a DeepSeek-VL config without its {key} is not modelled (give the "
                              "checkpoint's config.json, which has one)")
    flags, sizes = _read_towers(f, "DeepSeek-VL", ("llama", "Llama", _llama),
                                ("siglip_vision_model", "SigLIP", read_siglip))
    flags.update(vlm_projector="deepseek_vl", vision_tower="siglip", drop_cls=False,
                 tied=f.bool("tie_word_embeddings", True))
    side, rest = divmod(sizes["S_img"], sizes["P_patch"])
    if rest:
        raise SymgptError(f"{f.where}: vision_config image_size {sizes['S_img']} is not a multiple of patch_size "
                          f"{sizes['P_patch']}")
    f.notes.append(f"images: N_img per sequence (0 here; --set N_img=4 counts four), each resized to "
                   f"{sizes['S_img']}×{sizes['S_img']}: ({sizes['S_img']}/{sizes['P_patch']})² = {side * side} "
                   "tokens; T counts those image tokens")
    f.silent("image_token_id", "id2label", "label2id", "initializer_range")
    sizes["N_img"] = 0
    return "deepseek_vl", flags, sizes


def read_hybrid(f: Fields):
    """transformers' DeepseekVLHybridConfig: DeepSeek-VL's fields and high_res_vision_config
    (SamVisionConfig)."""
    _, flags, sizes = read(f)
    f.notes[:] = [n for n in f.notes if not n.startswith("images: ")]
    v = sub_fields(f, "high_res_vision_config")
    mt = v.cfg.get("model_type", "sam_vision_model")
    if mt != "sam_vision_model":
        raise SymgptError(f"{f.where}: a high_res_vision_config of model_type {str(mt)[:40]!r} is not modelled")
    layers, image, patch = v.int("num_hidden_layers", 12), v.int("image_size", 1024), v.int("patch_size", 16)
    dim, heads = v.int("hidden_size", 768), v.int("num_attention_heads", 12)
    if image % patch or dim % heads:
        raise SymgptError(f"{f.where}: high_res_vision_config image_size must be a multiple of patch_size and "
                          "hidden_size of num_attention_heads")
    glob = v.get("global_attn_indexes", [2, 5, 8, 11])[0]
    if not isinstance(glob, list) or not glob or len(set(glob)) != len(glob) \
            or not all(isinstance(i, int) and 0 <= i < layers for i in glob):
        raise SymgptError(f"{f.where}: high_res_vision_config.global_attn_indexes must list distinct layer indices")
    window = v.int("window_size", 14, minimum=0)
    if window == 0:  # every layer global: no windowed layer reads sam_window
        glob, window = list(range(layers)), 1
    flags.update(sam_dim=dim, sam_layers=layers, sam_heads=heads, sam_mlp=v.int("mlp_dim", 3072),
                 sam_side=image // patch, sam_patch=patch, sam_channels=v.int("num_channels", 3),
                 sam_out=v.int("output_channels", 256), sam_window=window, sam_global=len(glob),
                 sam_qkv_bias=v.bool("qkv_bias", True), sam_abs_pos=v.bool("use_abs_pos", True),
                 sam_rel_pos=v.bool("use_rel_pos", True))
    v.silent("hidden_act", "layer_norm_eps", "attention_dropout", "initializer_range", "mlp_ratio", "num_pos_feats",
             "scale", "id2label", "label2id")
    note_leftovers(f, v, "high_res_vision_config")
    f.notes.append("images are not modelled for DeepSeek-VL hybrid: the SAM high-resolution encoder, its neck and "
                   "projection and the aligner are held (SigLIP's tower runs only with images), their parameters "
                   "counted; N_img must be 0")
    return "deepseek_vl_hybrid", flags, sizes


READERS = {"deepseek_vl": Reader(read, ("DeepseekVLForConditionalGeneration",)),
           "deepseek_vl_hybrid": Reader(read_hybrid, ("DeepseekVLHybridForConditionalGeneration",))}

PRESETS: tuple = ()

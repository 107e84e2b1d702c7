"""Idefics3 / SmolVLM (``symgpt/families/idefics3.py``: SigLIP-style tower, pixel-shuffle
connector, Llama decoder) and Mistral 3 / LightOnOCR (``symgpt/families/pixtral.py``: Pixtral's
tower, a patch-merger projector): parameters against transformers' models, and forward FLOPs with
``pixel_values`` against ``FlopCounterMode`` on tiny CPU models built from tiny configs."""

from __future__ import annotations

import json

import pytest
import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

import symgpt
from symgpt.core.errors import SymgptError

IMAGE_TOKEN = 5
TEXT = {"model_type": "llama", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256}


def _flops(model, **inputs) -> int:
    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(use_cache=False, **inputs)
    return fcm.get_total_flops()


def _build(cls, cfg):
    config = cls.config_class(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    torch.manual_seed(0)
    return cls._from_config(config, attn_implementation="eager").eval()


def _write(tmp_path, cfg) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return str(path)


@pytest.mark.parametrize("model_type, model_class, vision_type", [
    ("idefics3", "Idefics3ForConditionalGeneration", "idefics3_vision"),
    ("smolvlm", "SmolVLMForConditionalGeneration", "smolvlm_vision")])
def test_idefics3_params_and_one_image(tmp_path, model_type, model_class, vision_type):
    # 28×28 images in 7×7 patches: a 4×4 grid, pixel-shuffled 2×2 to 4 tokens of 4·32 features
    cfg = {"model_type": model_type, "architectures": [model_class], "image_token_id": IMAGE_TOKEN,
           "scale_factor": 2, "text_config": TEXT,
           "vision_config": {"model_type": vision_type, "hidden_size": 32, "intermediate_size": 48,
                             "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 28, "patch_size": 7}}
    model = _build(getattr(transformers, model_class), cfg)
    path = _write(tmp_path, cfg)
    m = symgpt.load(path)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    for prefix, module in (("vision_model/", model.model.vision_model), ("connector/", model.model.connector)):
        assert sum(v for p, v in parts.items() if p.startswith(prefix)) == sum(p.numel() for p in module.parameters())

    t = 4
    ids = torch.tensor([[2, 7] + [IMAGE_TOKEN] * t + [9, 10, 11]])
    T = ids.shape[1]
    pixels = torch.rand(1, 1, 3, 28, 28)  # (batch, images, C, H, W), one whole image, no splitting
    assert symgpt.load(path, B=1, T=T).quantity("flops.forward") == _flops(model, input_ids=ids)
    assert symgpt.load(path, B=1, T=T, N_img=1).quantity("flops.forward") == \
        _flops(model, input_ids=ids, pixel_values=pixels)


def test_idefics3_refuses_a_grid_the_shuffle_cannot_split(tmp_path):
    # transformers' default Idefics3VisionConfig: 224/32 = 7 patches a side, not a multiple of 2
    cfg = {"model_type": "idefics3", "architectures": ["Idefics3ForConditionalGeneration"], "text_config": TEXT,
           "vision_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 1,
                             "num_attention_heads": 2}}
    model = _build(transformers.Idefics3ForConditionalGeneration, cfg)
    path = _write(tmp_path, cfg)
    assert symgpt.load(path).params == sum(p.numel() for p in model.parameters())
    with pytest.raises(SymgptError, match="multiple of the pixel shuffle's side 2"):
        symgpt.load(path, B=1, T=100, N_img=1).quantity("flops.forward")


PIXTRAL = {"model_type": "pixtral", "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
           "num_attention_heads": 2, "image_size": 28, "patch_size": 7}


@pytest.mark.parametrize("model_type, model_class, text_type, tower, projector", [
    ("mistral3", "Mistral3ForConditionalGeneration", "mistral", "vision_tower", "multi_modal_projector"),
    ("lighton_ocr", "LightOnOcrForConditionalGeneration", "qwen3", "vision_encoder", "vision_projection")])
def test_pixtral_params_and_images(tmp_path, model_type, model_class, text_type, tower, projector):
    # 28×28 images in 7×7 patches: a 4×4 grid, merged 2×2 to 4 tokens; two images share one packed
    # sequence in the tower (a block-diagonal mask over 32 patches)
    cfg = {"model_type": model_type, "architectures": [model_class], "image_token_id": IMAGE_TOKEN,
           "image_token_index": IMAGE_TOKEN, "spatial_merge_size": 2,
           "text_config": {**TEXT, "model_type": text_type, "head_dim": 16}, "vision_config": PIXTRAL}
    model = _build(getattr(transformers, model_class), cfg)
    path = _write(tmp_path, cfg)
    m = symgpt.load(path)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    for prefix, module in ((tower, getattr(model.model, tower)), (projector, getattr(model.model, projector))):
        assert sum(v for p, v in parts.items() if p.startswith(prefix + "/")) == \
            sum(p.numel() for p in module.parameters())

    for images in (1, 2):
        ids = torch.tensor([[2, 7] + [IMAGE_TOKEN] * 4 * images + [9, 10, 11]])
        T = ids.shape[1]
        pixels = torch.rand(images, 3, 28, 28)
        sizes = torch.tensor([[28, 28]] * images)
        assert symgpt.load(path, B=1, T=T).quantity("flops.forward") == _flops(model, input_ids=ids)
        assert symgpt.load(path, B=1, T=T, N_img=images).quantity("flops.forward") == \
            _flops(model, input_ids=ids, pixel_values=pixels, image_sizes=sizes)


def test_video_llava_params_and_one_image(tmp_path):
    # LLaVA's path for images (CLIP, class token dropped: (28/7)² = 16 tokens); the video tower held
    cfg = {"model_type": "video_llava", "architectures": ["VideoLlavaForConditionalGeneration"],
           "image_token_index": IMAGE_TOKEN, "video_token_index": 6, "text_config": TEXT,
           "vision_config": {"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 48,
                             "num_hidden_layers": 3, "num_attention_heads": 2, "image_size": 28, "patch_size": 7}}
    model = _build(transformers.VideoLlavaForConditionalGeneration, cfg)
    path = _write(tmp_path, cfg)
    m = symgpt.load(path)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    for prefix in ("image_tower", "video_tower", "multi_modal_projector"):
        assert sum(v for p, v in parts.items() if p.startswith(prefix + "/")) == \
            sum(p.numel() for p in getattr(model.model, prefix).parameters())
    ids = torch.tensor([[2, 7] + [IMAGE_TOKEN] * 16 + [9, 10, 11]])
    T = ids.shape[1]
    assert symgpt.load(path, B=1, T=T).quantity("flops.forward") == _flops(model, input_ids=ids)
    assert symgpt.load(path, B=1, T=T, N_img=1).quantity("flops.forward") == \
        _flops(model, input_ids=ids, pixel_values_images=torch.rand(1, 3, 28, 28))


@pytest.mark.parametrize("use_head", [True, False])
def test_cohere2_vision_params_and_one_image(tmp_path, use_head):
    # SigLIP over 28×28 images in 7×7 patches, pixel-shuffled 2×2 to 4 tokens; a SwiGLU projector.
    # The window (16) exceeds T: eager attention computes every score and masks, symgpt counts T·min(T, W)
    text = {"model_type": "cohere2", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
            "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "sliding_window": 16,
            "max_position_embeddings": 256}
    cfg = {"model_type": "cohere2_vision", "architectures": ["Cohere2VisionForConditionalGeneration"],
           "image_token_id": IMAGE_TOKEN, "downsample_factor": 2, "alignment_intermediate_size": 80,
           "text_config": text,
           "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 48,
                             "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 28, "patch_size": 7,
                             "vision_use_head": use_head}}
    model = _build(transformers.Cohere2VisionForConditionalGeneration, cfg)
    path = _write(tmp_path, cfg)
    m = symgpt.load(path)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    for prefix in ("vision_tower", "multi_modal_projector"):
        assert sum(v for p, v in parts.items() if p.startswith(prefix + "/")) == \
            sum(p.numel() for p in getattr(model.model, prefix).parameters())
    ids = torch.tensor([[2, 7] + [IMAGE_TOKEN] * 4 + [9, 10, 11]])
    T = ids.shape[1]
    assert symgpt.load(path, B=1, T=T).quantity("flops.forward") == _flops(model, input_ids=ids)
    assert symgpt.load(path, B=1, T=T, N_img=1).quantity("flops.forward") == \
        _flops(model, input_ids=ids, pixel_values=torch.rand(1, 3, 28, 28))


@pytest.mark.parametrize("model_type, model_class, text_type, vision", [
    ("internvl", "InternVLForConditionalGeneration", "qwen2", {}),
    ("internvl", "InternVLForConditionalGeneration", "llama",
     {"norm_type": "rms_norm", "use_qk_norm": True, "attention_bias": True, "use_mean_pooling": False,
      "use_mask_token": True}),
    ("qianfan_ocr", "QianfanOCRForConditionalGeneration", "qwen3", {"attention_bias": True})])
def test_internvl_params_and_one_image(tmp_path, model_type, model_class, text_type, vision):
    # InternViT over 28×28 images in 7×7 patches (+ a class token, dropped), pixel-shuffled 2×2 to 4 tokens
    cfg = {"model_type": model_type, "architectures": [model_class], "image_token_id": IMAGE_TOKEN,
           "downsample_ratio": 0.5, "text_config": {**TEXT, "model_type": text_type},
           "vision_config": {"model_type": f"{model_type}_vision", "hidden_size": 32, "intermediate_size": 48,
                             "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": [28, 28],
                             "patch_size": [7, 7], **vision}}
    model = _build(getattr(transformers, model_class), cfg)
    path = _write(tmp_path, cfg)
    m = symgpt.load(path)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    for prefix in ("vision_tower", "multi_modal_projector"):
        assert sum(v for p, v in parts.items() if p.startswith(prefix + "/")) == \
            sum(p.numel() for p in getattr(model.model, prefix).parameters())
    ids = torch.tensor([[2, 7] + [IMAGE_TOKEN] * 4 + [9, 10, 11]])
    T = ids.shape[1]
    assert symgpt.load(path, B=1, T=T).quantity("flops.forward") == _flops(model, input_ids=ids)
    assert symgpt.load(path, B=1, T=T, N_img=1).quantity("flops.forward") == \
        _flops(model, input_ids=ids, pixel_values=torch.rand(1, 3, 28, 28))


def test_idefics2_params_and_text_flops(tmp_path):
    # the perceiver resampler is held: parameters counted, images refused
    cfg = {"model_type": "idefics2", "architectures": ["Idefics2ForConditionalGeneration"],
           "image_token_id": IMAGE_TOKEN, "text_config": {**TEXT, "model_type": "mistral", "sliding_window": 64},
           "perceiver_config": {"hidden_size": 64, "resampler_n_latents": 3, "resampler_depth": 2,
                                "resampler_n_heads": 4, "resampler_head_dim": 8, "num_key_value_heads": 2},
           "vision_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
                             "num_attention_heads": 2, "image_size": 28, "patch_size": 7}}
    model = _build(transformers.Idefics2ForConditionalGeneration, cfg)
    path = _write(tmp_path, cfg)
    m = symgpt.load(path)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    for prefix in ("vision_model", "connector"):
        assert sum(v for p, v in parts.items() if p.startswith(prefix + "/")) == \
            sum(p.numel() for p in getattr(model.model, prefix).parameters())
    ids = torch.tensor([[2, 7, 9, 10, 11]])
    assert symgpt.load(path, B=1, T=5).quantity("flops.forward") == _flops(model, input_ids=ids)
    with pytest.raises(SymgptError, match="N_img must be 0"):
        symgpt.load(path, B=1, T=100, N_img=1).quantity("flops.forward")


@pytest.mark.parametrize("vision", [{}, {"window_size": 0, "qkv_bias": False, "use_abs_pos": False},
                                    {"use_rel_pos": False}])
def test_got_ocr2_params_and_text_flops(tmp_path, vision):
    # a SAM-style tower of 3 layers, one global (relative positions over the 4×4 grid), two windowed (w = 2)
    cfg = {"model_type": "got_ocr2", "architectures": ["GotOcr2ForConditionalGeneration"],
           "image_token_index": IMAGE_TOKEN, "text_config": {**TEXT, "model_type": "qwen2"},
           "vision_config": {"hidden_size": 32, "mlp_dim": 48, "num_hidden_layers": 3, "num_attention_heads": 2,
                             "image_size": 64, "patch_size": 16, "window_size": 2, "global_attn_indexes": [1],
                             "output_channels": 24, **vision}}
    model = _build(transformers.GotOcr2ForConditionalGeneration, cfg)
    path = _write(tmp_path, cfg)
    m = symgpt.load(path)
    assert m.params == sum(p.numel() for p in model.parameters())
    ids = torch.tensor([[2, 7, 9, 10, 11]])
    assert symgpt.load(path, B=1, T=5).quantity("flops.forward") == _flops(model, input_ids=ids)
    with pytest.raises(SymgptError, match="N_img must be 0"):
        symgpt.load(path, B=1, T=100, N_img=1).quantity("flops.forward")


def test_deepseek_vl_params_and_one_image(tmp_path):
    # SigLIP (its pooling head run, unused) over 28×28 images in 7×7 patches: 16 tokens each
    cfg = {"model_type": "deepseek_vl", "architectures": ["DeepseekVLForConditionalGeneration"],
           "image_token_id": IMAGE_TOKEN, "text_config": TEXT,
           "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 48,
                             "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 28, "patch_size": 7,
                             "vision_use_head": True}}
    model = _build(transformers.DeepseekVLForConditionalGeneration, cfg)
    path = _write(tmp_path, cfg)
    m = symgpt.load(path)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    for prefix in ("vision_model", "aligner"):
        assert sum(v for p, v in parts.items() if p.startswith(prefix + "/")) == \
            sum(p.numel() for p in getattr(model.model, prefix).parameters())
    ids = torch.tensor([[2, 7] + [IMAGE_TOKEN] * 16 + [9, 10, 11]])
    T = ids.shape[1]
    assert symgpt.load(path, B=1, T=T).quantity("flops.forward") == _flops(model, input_ids=ids)
    assert symgpt.load(path, B=1, T=T, N_img=1).quantity("flops.forward") == \
        _flops(model, input_ids=ids, pixel_values=torch.rand(1, 3, 28, 28))


@pytest.mark.parametrize("changes", [{}, {"projector_use_layernorm": False, "projector_bias": False,
                                          "vision_config": {"vision_use_head": False}}])
def test_lfm2_vl_params_and_text_flops(tmp_path, changes):
    # the SigLIP2 tower and projector are held: parameters counted, images refused
    vision = {"model_type": "siglip2_vision_model", "hidden_size": 32, "intermediate_size": 48,
              "num_hidden_layers": 2, "num_attention_heads": 2, "num_patches": 16, "patch_size": 4,
              **changes.get("vision_config", {})}
    cfg = {"model_type": "lfm2_vl", "architectures": ["Lfm2VlForConditionalGeneration"],
           "image_token_id": IMAGE_TOKEN, "projector_hidden_size": 40, "downsample_factor": 2,
           "text_config": {"model_type": "lfm2", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
                           "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
                           "layer_types": ["conv", "full_attention", "conv"], "max_position_embeddings": 256},
           "vision_config": vision, **{k: v for k, v in changes.items() if k != "vision_config"}}
    model = _build(transformers.Lfm2VlForConditionalGeneration, cfg)
    path = _write(tmp_path, cfg)
    m = symgpt.load(path)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    for prefix in ("vision_tower", "multi_modal_projector"):
        assert sum(v for p, v in parts.items() if p.startswith(prefix + "/")) == \
            sum(p.numel() for p in getattr(model.model, prefix).parameters())
    ids = torch.tensor([[2, 7, 9, 10, 11]])
    assert symgpt.load(path, B=1, T=5).quantity("flops.forward") == _flops(model, input_ids=ids)
    with pytest.raises(SymgptError, match="N_img must be 0"):
        symgpt.load(path, B=1, T=100, N_img=1).quantity("flops.forward")


def test_deepseek_vl_hybrid_params_and_text_flops(tmp_path):
    # the SAM high-resolution encoder, its neck and projection and the aligner are held: images refused
    cfg = {"model_type": "deepseek_vl_hybrid", "architectures": ["DeepseekVLHybridForConditionalGeneration"],
           "image_token_id": IMAGE_TOKEN, "text_config": TEXT,
           "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 48,
                             "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 28, "patch_size": 7},
           "high_res_vision_config": {"model_type": "sam_vision_model", "hidden_size": 24, "mlp_dim": 40,
                                      "num_hidden_layers": 3, "num_attention_heads": 2, "image_size": 64,
                                      "patch_size": 16, "window_size": 2, "global_attn_indexes": [1],
                                      "output_channels": 8}}
    model = _build(transformers.DeepseekVLHybridForConditionalGeneration, cfg)
    path = _write(tmp_path, cfg)
    assert symgpt.load(path).params == sum(p.numel() for p in model.parameters())
    ids = torch.tensor([[2, 7, 9, 10, 11]])
    assert symgpt.load(path, B=1, T=5).quantity("flops.forward") == _flops(model, input_ids=ids)
    with pytest.raises(SymgptError, match="N_img must be 0"):
        symgpt.load(path, B=1, T=100, N_img=1).quantity("flops.forward")


def test_aria_params(tmp_path):
    # Idefics3's tower and Aria's mixture-of-experts decoder; the cross-attention projector held, images refused
    cfg = {"model_type": "aria", "architectures": ["AriaForConditionalGeneration"], "image_token_index": IMAGE_TOKEN,
           "projector_patch_to_query_dict": {"16": 3}, "max_value_projector_patch_to_query_dict": 3,
           "text_config": {"model_type": "aria_text", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
                           "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                           "moe_num_experts": 4, "moe_topk": 2, "moe_num_shared_experts": 1},
           "vision_config": {"model_type": "idefics3_vision", "hidden_size": 32, "intermediate_size": 48,
                             "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 28, "patch_size": 7}}
    model = _build(transformers.AriaForConditionalGeneration, cfg)
    path = _write(tmp_path, cfg)
    m = symgpt.load(path)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    for prefix in ("vision_tower", "multi_modal_projector"):
        assert sum(v for p, v in parts.items() if p.startswith(prefix + "/")) == \
            sum(p.numel() for p in getattr(model.model, prefix).parameters())
    with pytest.raises(SymgptError, match="N_img must be 0"):
        symgpt.load(path, B=1, T=100, N_img=1).quantity("flops.forward")


def _idefics3_patch_counter():
    """transformers' own Idefics3ImageProcessor.get_number_of_image_patches and the resize helpers
    it calls, read from its source (the module itself imports torchvision and PIL, not installed)."""
    import ast
    import math
    from pathlib import Path

    src = Path(transformers.__file__).parent / "models" / "idefics3" / "image_processing_idefics3.py"
    keep = []
    for node in ast.parse(src.read_text()).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("_resize_output_size"):
            keep.append(node)
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "MAX_IMAGE_SIZE" for t in node.targets):
            keep.append(node)
        elif isinstance(node, ast.ClassDef) and node.name == "Idefics3ImageProcessor":
            keep += [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "get_number_of_image_patches"]
    assert len(keep) == 4
    ns = {"math": math}
    exec(compile(ast.Module(body=keep, type_ignores=[]), str(src), "exec"), ns)
    return ns["get_number_of_image_patches"]


@pytest.mark.parametrize("longest, crop", [(1456, 364), (2048, 512), (364, 364)])
def test_idefics3_split_crops_as_the_processor_splits(longest, crop):
    # N_img of one image: the processor's crops plus its global view (0 crops from transformers: the image alone)
    import itertools
    import types

    from symgpt.families.idefics3 import split_crops

    count = _idefics3_patch_counter()
    proc = types.SimpleNamespace(do_image_splitting=True, max_image_size={"longest_edge": crop},
                                 size={"longest_edge": longest})
    for h, w in itertools.product(range(20, 3000, 97), range(20, 3000, 89)):
        assert split_crops(h, w, longest, crop) == (count(proc, h, w)[0] or 1), (h, w)

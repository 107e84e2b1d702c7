"""PaliGemma (``symgpt/families/vlm.py``, ``PaliGemmaForConditionalGeneration``: SigLIP, one
linear projector, a Gemma decoder), LLaVA-NeXT and LLaVA-OneVision (their image-newline vector held), ViP-LLaVA (its projector held), Qwen2-VL
(its vision tower held) and ShieldGemma 2 (Gemma 3's class under its own model_type): parameters against transformers'
models, and forward FLOPs against ``FlopCounterMode`` on tiny CPU models (PaliGemma: the FLOPs
one image adds, the forward with ``pixel_values`` minus the same forward without them)."""

from __future__ import annotations

import json

import pytest

import symgpt

import torch
import transformers

IMAGE_TOKEN = 5


def _paligemma() -> dict:
    """A tiny PaliGemma: 28×28 images in 7×7 patches, 16 tokens each."""
    return {
        "model_type": "paligemma", "architectures": ["PaliGemmaForConditionalGeneration"],
        "image_token_index": IMAGE_TOKEN, "projection_dim": 64, "hidden_size": 64,
        "text_config": {"model_type": "gemma", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
                        "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
                        "head_dim": 32, "max_position_embeddings": 256},
        "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 48,
                          "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 28, "patch_size": 7,
                          "projection_dim": 64},
    }


def _flops(model, **inputs) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(use_cache=False, **inputs)
    return fcm.get_total_flops()


def _write(tmp_path, cfg) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return str(path)


def test_paligemma_params_and_image_flops(tmp_path):
    cfg = _paligemma()
    config = transformers.PaliGemmaConfig(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    torch.manual_seed(0)
    model = transformers.PaliGemmaForConditionalGeneration._from_config(config, attn_implementation="eager").eval()
    path = _write(tmp_path, cfg)
    m = symgpt.load(path)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    for prefix, module in (("vision_tower/", model.model.vision_tower),
                           ("multi_modal_projector/", model.model.multi_modal_projector)):
        assert sum(v for p, v in parts.items() if p.startswith(prefix)) == sum(p.numel() for p in module.parameters())

    t = 16  # (28/7)² patches, every one a token
    ids = torch.tensor([[IMAGE_TOKEN] * t + [2, 9, 10, 11]])
    T = ids.shape[1]
    pixels = torch.rand(1, 3, 28, 28)
    with_image = _flops(model, input_ids=ids, pixel_values=pixels)
    text_only = _flops(model, input_ids=ids)

    m0 = symgpt.load(path, B=1, T=T)
    m1 = symgpt.load(path, B=1, T=T, N_img=1)
    assert m0.quantity("flops.forward") == text_only
    assert int(m1.quantity("flops.forward")) - int(m0.quantity("flops.forward")) == with_image - text_only


@pytest.mark.parametrize("model_type, model_class", [
    ("llava_next", "LlavaNextForConditionalGeneration"), ("llava_next_video", "LlavaNextVideoForConditionalGeneration")])
def test_llava_next_params_and_text_flops(tmp_path, model_type, model_class):
    cfg = {"model_type": model_type, "architectures": [model_class], "image_token_index": IMAGE_TOKEN,
           "image_grid_pinpoints": [[28, 56], [56, 28]],
           "text_config": {"model_type": "llama", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
                           "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                           "max_position_embeddings": 256},
           "vision_config": {"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 48,
                             "num_hidden_layers": 3, "num_attention_heads": 2, "image_size": 28, "patch_size": 7}}
    cls = getattr(transformers, model_class)
    config = cls.config_class(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    torch.manual_seed(0)
    model = cls._from_config(config, attn_implementation="eager").eval()
    path = _write(tmp_path, cfg)
    m = symgpt.load(path, B=1, T=6)
    assert m.params == sum(p.numel() for p in model.parameters())
    assert m.quantity("params").values()["image_newline"] == model.model.image_newline.numel()
    ids = torch.tensor([[2, 9, 10, 11, 12, 13]])
    assert m.quantity("flops.forward") == _flops(model, input_ids=ids)
    with pytest.raises(symgpt.core.errors.SymgptError, match="N_img must be 0"):
        symgpt.load(path, B=1, T=100, N_img=1).quantity("flops.forward")


@pytest.mark.parametrize("model_type, config_class, model_class", [
    ("paligemma", "PaliGemmaConfig", "PaliGemmaForConditionalGeneration"),
    ("llava_next", "LlavaNextConfig", "LlavaNextForConditionalGeneration"),
    ("qwen2_vl", "Qwen2VLConfig", "Qwen2VLForConditionalGeneration"),
    ("llava_onevision", "LlavaOnevisionConfig", "LlavaOnevisionForConditionalGeneration"),
    ("vipllava", "VipLlavaConfig", "VipLlavaForConditionalGeneration"),
    ("shieldgemma2", "ShieldGemma2Config", "Gemma3ForConditionalGeneration")])
def test_default_configs_params_on_meta(model_type, config_class, model_class):
    """The default configuration, saved as transformers saves it, against the class built from it."""
    config = getattr(transformers, config_class)()
    with torch.device("meta"):
        model = getattr(transformers, model_class)._from_config(config)
    cfg = json.loads(config.to_json_string(use_diff=False))
    cfg["architectures"] = [model_class]
    from symgpt.model.model import from_config

    assert from_config(cfg, "x").params == sum(p.numel() for p in model.parameters())


def test_paligemma_refuses_a_projection_that_does_not_fit(tmp_path):
    cfg = _paligemma()
    cfg["vision_config"]["projection_dim"] = 48
    with pytest.raises(symgpt.core.errors.SymgptError, match="projection_dim 48"):
        symgpt.load(_write(tmp_path, cfg))


QWEN2_VL_TEXT = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
                 "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256,
                 "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}}
QWEN2_VL_VISION = {"depth": 3, "embed_dim": 32, "mlp_ratio": 2, "num_heads": 2, "hidden_size": 64,
                   "patch_size": 7, "spatial_merge_size": 2, "temporal_patch_size": 2}


def test_qwen2_vl_params_and_text_flops(tmp_path):
    """Qwen2-VL (``Qwen2VLForConditionalGeneration``): its vision tower (LayerNorms, fc1/fc2 of
    int(embed_dim·mlp_ratio)) held, the forward over token ids against FlopCounterMode."""
    fields = {"text_config": QWEN2_VL_TEXT, "vision_config": QWEN2_VL_VISION}
    config = transformers.Qwen2VLConfig(**fields)
    torch.manual_seed(0)
    model = transformers.Qwen2VLForConditionalGeneration._from_config(config, attn_implementation="eager").eval()
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "qwen2_vl", "architectures": ["Qwen2VLForConditionalGeneration"],
                                **fields}))
    m = symgpt.load(str(path), B=2, T=10)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    assert sum(v for p, v in parts.items() if p.startswith("visual/")) == \
        sum(p.numel() for p in model.model.visual.parameters())
    ids = torch.randint(0, 200, (2, 10))
    assert m.quantity("flops.forward") == _flops(model, input_ids=ids, attention_mask=torch.ones_like(ids))
    with pytest.raises(symgpt.core.errors.SymgptError, match="N_img must be 0"):
        symgpt.load(str(path), B=1, T=10, N_img=1).quantity("flops.forward")


def test_llava_onevision_params_and_text_flops(tmp_path):
    """LLaVA-OneVision (``LlavaOnevisionForConditionalGeneration``: SigLIP at a side the patch does
    not divide, LLaVA's projector, a Qwen2 decoder, the image-newline vector)."""
    cfg = {"model_type": "llava_onevision", "architectures": ["LlavaOnevisionForConditionalGeneration"],
           "image_token_index": IMAGE_TOKEN, "image_grid_pinpoints": [[30, 30], [30, 60]],
           "text_config": {"model_type": "qwen2", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
                           "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                           "max_position_embeddings": 256},
           "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 48,
                             "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 30, "patch_size": 7,
                             "vision_use_head": False}}
    config = transformers.LlavaOnevisionConfig(**{k: v for k, v in cfg.items()
                                                   if k not in ("model_type", "architectures")})
    torch.manual_seed(0)
    model = transformers.LlavaOnevisionForConditionalGeneration._from_config(config, attn_implementation="eager").eval()
    path = _write(tmp_path, cfg)
    m = symgpt.load(path, B=1, T=6)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    assert sum(v for p, v in parts.items() if p.startswith("vision_tower/")) == \
        sum(p.numel() for p in model.model.vision_tower.parameters())
    ids = torch.tensor([[2, 9, 10, 11, 12, 13]])
    assert m.quantity("flops.forward") == _flops(model, input_ids=ids)
    with pytest.raises(symgpt.core.errors.SymgptError, match="N_img must be 0"):
        symgpt.load(path, B=1, T=100, N_img=1).quantity("flops.forward")


def test_vipllava_params_and_text_flops(tmp_path):
    """ViP-LLaVA (``VipLlavaForConditionalGeneration``: CLIP, a projector over three layers'
    features concatenated, held, a Llama decoder)."""
    cfg = {"model_type": "vipllava", "architectures": ["VipLlavaForConditionalGeneration"],
           "image_token_index": IMAGE_TOKEN, "vision_feature_layer": [-2, -1, 1],
           "text_config": {"model_type": "llama", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
                           "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                           "max_position_embeddings": 256},
           "vision_config": {"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 48,
                             "num_hidden_layers": 3, "num_attention_heads": 2, "image_size": 28, "patch_size": 7}}
    config = transformers.VipLlavaConfig(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    torch.manual_seed(0)
    model = transformers.VipLlavaForConditionalGeneration._from_config(config, attn_implementation="eager").eval()
    path = _write(tmp_path, cfg)
    m = symgpt.load(path, B=1, T=6)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    assert sum(v for p, v in parts.items() if p.startswith("multi_modal_projector/")) == \
        sum(p.numel() for p in model.model.multi_modal_projector.parameters())
    ids = torch.tensor([[2, 9, 10, 11, 12, 13]])
    assert m.quantity("flops.forward") == _flops(model, input_ids=ids)
    with pytest.raises(symgpt.core.errors.SymgptError, match="N_img must be 0"):
        symgpt.load(path, B=1, T=100, N_img=1).quantity("flops.forward")

"""Vision--language models (``symgpt/families/vlm.py``): parameters against transformers' models
built on the meta device, and the forward FLOPs one image adds against ``FlopCounterMode`` on tiny
CPU models of the same classes, fed a real image tensor (the forward with ``pixel_values`` minus
the same forward without them: the vision tower and the projector)."""

from __future__ import annotations

import json

import pytest

import symgpt

import torch
import transformers

IMAGE_TOKEN = 5


def _gemma3(vision_use_head: bool) -> dict:
    """A tiny Gemma 3: 28×28 images in 7×7 patches (a 4×4 grid) pooled 2×2 to 4 tokens."""
    return {
        "model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
        "mm_tokens_per_image": 4, "image_token_index": IMAGE_TOKEN, "boi_token_index": 6, "eoi_token_index": 7,
        "text_config": {"model_type": "gemma3_text", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
                        "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
                        "head_dim": 32, "query_pre_attn_scalar": 32, "sliding_window": 512,
                        "max_position_embeddings": 256},
        "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 48,
                          "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 28, "patch_size": 7,
                          "vision_use_head": vision_use_head},
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


@pytest.mark.parametrize("head", [False, True])
def test_gemma3_params_and_image_flops(tmp_path, head):
    cfg = _gemma3(head)
    config = transformers.Gemma3Config(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    torch.manual_seed(0)
    model = transformers.Gemma3ForConditionalGeneration._from_config(config, attn_implementation="eager").eval()
    path = _write(tmp_path, cfg)
    assert symgpt.load(path).params == sum(p.numel() for p in model.parameters())

    T, t = 8, 4
    ids = torch.tensor([[2, 6] + [IMAGE_TOKEN] * t + [7, 9]])
    assert ids.shape[1] == T
    pixels = torch.rand(1, 3, 28, 28)  # one image (the processor resizes every image to 28×28)
    with_image = _flops(model, input_ids=ids, pixel_values=pixels, token_type_ids=(ids == IMAGE_TOKEN).long())
    text_only = _flops(model, input_ids=ids)

    m0 = symgpt.load(path, B=1, T=T)
    m1 = symgpt.load(path, B=1, T=T, N_img=1)
    assert m0.quantity("flops.forward") == text_only
    assert int(m1.quantity("flops.forward")) - int(m0.quantity("flops.forward")) == with_image - text_only


def _llava(strategy: str) -> dict:
    """A tiny LLaVA: 28×28 images in 7×7 patches (16 patches and the class token)."""
    return {
        "model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
        "image_token_index": IMAGE_TOKEN, "vision_feature_layer": -2,
        "vision_feature_select_strategy": strategy, "projector_hidden_act": "gelu",
        "text_config": {"model_type": "llama", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
                        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                        "max_position_embeddings": 256},
        "vision_config": {"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 48,
                          "num_hidden_layers": 3, "num_attention_heads": 2, "image_size": 28, "patch_size": 7},
    }


@pytest.mark.parametrize("strategy", ["default", "full"])
def test_llava_params_and_image_flops(tmp_path, strategy):
    cfg = _llava(strategy)
    config = transformers.LlavaConfig(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    torch.manual_seed(0)
    model = transformers.LlavaForConditionalGeneration._from_config(config, attn_implementation="eager").eval()
    path = _write(tmp_path, cfg)
    assert symgpt.load(path).params == sum(p.numel() for p in model.parameters())

    t = 16 if strategy == "default" else 17  # (28/7)² patches, and the class token under "full"
    ids = torch.tensor([[2] + [IMAGE_TOKEN] * t + [9, 10, 11]])
    T = ids.shape[1]
    pixels = torch.rand(1, 3, 28, 28)
    with_image = _flops(model, input_ids=ids, pixel_values=pixels)
    text_only = _flops(model, input_ids=ids)

    m0 = symgpt.load(path, B=1, T=T)
    m1 = symgpt.load(path, B=1, T=T, N_img=1)
    assert m0.quantity("flops.forward") == text_only
    assert int(m1.quantity("flops.forward")) - int(m0.quantity("flops.forward")) == with_image - text_only
    # serving: the tower runs in the prefill, once per image; a decode step runs the decoder alone,
    # over a KV cache of T positions that counts the image tokens (the tower caches nothing)
    pre = {m: int(m.quantity("inference.prefill.flops")) for m in (m0, m1)}
    assert pre[m1] - pre[m0] == with_image - text_only
    assert int(m1.quantity("inference.decode.flops")) == int(m0.quantity("inference.decode.flops"))
    assert int(m1.quantity("inference.kv_cache")) == int(m0.quantity("inference.kv_cache"))


def test_llava_1_5_7b_params_on_meta():
    """llava-hf/llava-1.5-7b-hf's config.json (tests/configs/README.md) built on the meta device."""
    from pathlib import Path

    path = Path(__file__).parent / "configs" / "vlm" / "llava-1.5-7b.json"
    cfg = json.loads(path.read_text())
    config = transformers.LlavaConfig(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    with torch.device("meta"):
        model = transformers.LlavaForConditionalGeneration(config)
    m = symgpt.load(str(path))
    assert m.params == sum(p.numel() for p in model.parameters())
    # the tower and the projector, each its own rows of the breakdown
    parts = m.quantity("params").values()
    for prefix, module in (("vision_tower/", model.model.vision_tower),
                           ("multi_modal_projector/", model.model.multi_modal_projector)):
        assert sum(v for p, v in parts.items() if p.startswith(prefix)) == sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("model_type, config_class, model_class", [
    ("gemma3", "Gemma3Config", "Gemma3ForConditionalGeneration"),
    ("llava", "LlavaConfig", "LlavaForConditionalGeneration")])
def test_default_configs_params_on_meta(model_type, config_class, model_class):
    """A config.json with no fields but model_type reads as transformers' defaults (LlavaConfig's
    own vision tower, CLIP ViT-L/14 at 336, when vision_config is absent)."""
    with torch.device("meta"):
        model = getattr(transformers, model_class)(getattr(transformers, config_class)())
    from symgpt.model.model import from_config

    assert from_config({"model_type": model_type}, "x").params == sum(p.numel() for p in model.parameters())


def _cli(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "symgpt", *args], capture_output=True, text=True)


def test_cli_counts_images_and_lists_the_tower():
    from pathlib import Path

    path = str(Path(__file__).parent.parent / "examples" / "llava-1.5-7b-config.json")
    r = _cli("params", path, "--json")
    assert r.returncode == 0, r.stderr
    parts = json.loads(r.stdout)["params"]["breakdown"]
    assert any(p.startswith("vision_tower/") for p in parts) and "multi_modal_projector/linear_1" in parts
    # four images of 576 tokens need a prompt of at least 2,304 positions
    r = _cli("flops", path, "--set", "N_img=4", "--set", "T=100")
    assert r.returncode == 2 and r.stderr.startswith("symgpt: error:") and "N_img" in r.stderr
    r = _cli("flops", path, "--set", "N_img=-1")
    assert r.returncode == 2 and "non-negative" in r.stderr

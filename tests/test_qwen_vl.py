"""Qwen2.5-VL (``symgpt/families/qwen_vl.py``): parameters against transformers'
``Qwen2_5_VLForConditionalGeneration`` built on the meta device (the default configuration and
Qwen/Qwen2.5-VL-3B-Instruct's config.json, tests/configs/README.md), and the forward over token
ids against ``FlopCounterMode`` on tiny CPU models (text fields nested in text_config, and at
the top level as older config.json files keep them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import torch
import transformers

import symgpt  # noqa: E402
from symgpt.model.model import from_config  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

TEXT = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}}
VISION = {"depth": 3, "hidden_size": 32, "intermediate_size": 48, "num_heads": 2, "out_hidden_size": 64,
          "fullatt_block_indexes": [1], "window_size": 56, "patch_size": 7, "spatial_merge_size": 2,
          "temporal_patch_size": 2}


def _meta_params(cfg: dict) -> int:
    with torch.device("meta"):
        model = transformers.Qwen2_5_VLForConditionalGeneration(transformers.Qwen2_5_VLConfig(**cfg))
    return sum(p.numel() for p in model.parameters())


def test_default_config_params_on_meta():
    assert from_config({"model_type": "qwen2_5_vl"}, "x").params == _meta_params({})


def test_qwen2_5_vl_3b_instruct_params_on_meta():
    path = Path(__file__).parent / "configs" / "vlm" / "qwen2.5-vl-3b-instruct.json"
    cfg = json.loads(path.read_text())
    fields = {k: v for k, v in cfg.items() if k not in ("model_type", "architectures")}
    m = symgpt.load(str(path))
    assert m.params == _meta_params(fields)
    with torch.device("meta"):
        model = transformers.Qwen2_5_VLForConditionalGeneration(transformers.Qwen2_5_VLConfig(**fields))
    parts = m.quantity("params").values()
    assert sum(v for p, v in parts.items() if p.startswith("visual/")) == \
        sum(p.numel() for p in model.model.visual.parameters())


@pytest.mark.parametrize("nested", [True, False])
def test_params_and_text_flops_on_cpu(tmp_path, nested):
    fields = {"text_config": TEXT, "vision_config": VISION} if nested else \
        {**TEXT, "vision_config": VISION, "tie_word_embeddings": True}
    config = transformers.Qwen2_5_VLConfig(**fields)
    torch.manual_seed(0)
    model = transformers.Qwen2_5_VLForConditionalGeneration._from_config(config, attn_implementation="eager").eval()
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "qwen2_5_vl", **fields}))
    m = symgpt.load(str(path), B=2, T=10)
    assert m.params == sum(p.numel() for p in model.parameters())
    from torch.utils.flop_counter import FlopCounterMode

    ids = torch.randint(0, 200, (2, 10))
    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
    assert m.quantity("flops.forward") == fcm.get_total_flops()


def test_sliding_window_refused(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "qwen2_5_vl", "text_config": {**TEXT, "use_sliding_window": True}}))
    with pytest.raises(symgpt.SymgptError, match="use_sliding_window"):
        symgpt.load(str(path)).params


def test_images_refused_not_counted_as_text():
    import subprocess
    import sys

    path = str(Path(__file__).parent / "configs" / "vlm" / "qwen2.5-vl-3b-instruct.json")
    r = subprocess.run([sys.executable, "-m", "symgpt", "flops", path, "--set", "N_img=1"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and r.stderr.startswith("symgpt: error:") and "N_img must be 0" in r.stderr


def _one_image(side: int):
    """The tiny model, one side × side image (grid side/7 patches a side) between text tokens."""
    fields = {"text_config": TEXT, "vision_config": VISION, "image_token_id": 290, "vision_start_token_id": 291,
              "vision_end_token_id": 292, "video_token_id": 293}
    grid = side // VISION["patch_size"]
    tokens = grid * grid // VISION["spatial_merge_size"] ** 2
    ids = torch.cat([torch.randint(0, 200, (1, 2)), torch.tensor([[291] + [290] * tokens + [292]]),
                     torch.randint(0, 200, (1, 3))], 1)
    return fields, grid, ids


@pytest.mark.parametrize("side", [112, 168])
def test_one_image_flops_on_cpu(tmp_path, side):
    # pixel_values as the processor hands them: (patches, C·t_p·P²) with grid_thw (1, side/P, side/P);
    # window_size 56 px: 2×2 windows of 8×8 patches at 112 px, 3×3 at 168 px; block 1 attends the whole image
    fields, grid, ids = _one_image(side)
    torch.manual_seed(0)
    model = transformers.Qwen2_5_VLForConditionalGeneration._from_config(
        transformers.Qwen2_5_VLConfig(**fields), attn_implementation="eager").eval()
    width = 3 * VISION["temporal_patch_size"] * VISION["patch_size"] ** 2
    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(input_ids=ids, attention_mask=torch.ones_like(ids), pixel_values=torch.randn(grid * grid, width),
              image_grid_thw=torch.tensor([[1, grid, grid]]), use_cache=False)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "qwen2_5_vl", **fields}))
    m = symgpt.load(str(path), B=1, T=ids.shape[1], N_img=1, S_img=side, vision_run=True)
    assert m.quantity("flops.forward") == fcm.get_total_flops()
    assert m.params == sum(p.numel() for p in model.parameters())


def test_tokens_per_image_closed_form():
    # Qwen2.5-VL's processor: a 448×448 image at patch 14, merge 2 -> (448/14)²/4 = 256 tokens
    from symgpt.families.blocks.qwen_vl import tokens_per_image
    from symgpt.core.symbols import P_patch, S_img

    assert tokens_per_image({"merge_size": 2}).subs({S_img: 448, P_patch: 14}) == 256


def test_an_image_off_the_window_grid_is_refused(tmp_path):
    fields, _, _ = _one_image(112)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "qwen2_5_vl", **fields}))
    with pytest.raises(symgpt.SymgptError, match="multiple of the attention window"):
        symgpt.load(str(path), B=1, T=100, N_img=1, S_img=84, vision_run=True).quantity("flops.forward")


def test_qwen2_5_vl_7b_preset_is_its_config_and_the_checkpoint_total():
    # the checkpoint's model.safetensors.index.json: total_size 16,584,333,312 bytes of bfloat16
    path = Path(__file__).parent / "configs" / "vlm" / "qwen2.5-vl-7b-instruct.json"
    cfg = json.loads(path.read_text())
    p, c = symgpt.load("qwen2.5-vl-7b"), symgpt.load(str(path))
    assert p.family is c.family and dict(p.sizes) == dict(c.sizes) and p.flags == c.flags
    n = _meta_params({k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    assert p.params == n == 16_584_333_312 // 2
    assert f"{n:,}" in symgpt.families.presets()["qwen2.5-vl-7b"].note

"""LLaVA-NeXT and LLaVA-OneVision with images tiled by resolution (``families/llava_anyres.py``,
``blocks/llava_anyres.py``): the forward FLOPs with ``pixel_values`` against ``FlopCounterMode``
on tiny CPU models of transformers' ``LlavaNextForConditionalGeneration`` and
``LlavaOnevisionForConditionalGeneration``, fed the crops and image sizes the closed form names;
the token count is checked by transformers itself (its forward refuses image features whose count
differs from the image-token positions of ``input_ids``), and by hand for LLaVA-NeXT's defaults."""

from __future__ import annotations

import json

import pytest

import symgpt
from symgpt.families.llava_anyres import anyres, grid_mask, pinpoints_of

import torch
import transformers

IMG = 290
TEXT = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 4096}
PINS = [[28, 56], [56, 28], [56, 56], [84, 28], [28, 84]]


def _flops(model, **inputs) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(use_cache=False, **inputs)
    return fcm.get_total_flops()


def _check(tmp_path, cls, config, cfg, side, h, w):
    torch.manual_seed(0)
    model = cls._from_config(config, attn_implementation="eager").eval()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    m0 = symgpt.load(str(path))
    f = m0.flags
    crops, tokens = anyres(h, w, pinpoints_of(f["grid_tiles"], f["anyres_tile"]), f["anyres_tile"], side,
                           f["anyres_max"])
    ids = torch.tensor([[1] + [IMG] * tokens + [5, 6]])
    tile = config.vision_config.image_size
    flops = _flops(model, input_ids=ids, pixel_values=torch.rand(1, crops, 3, tile, tile),
                   image_sizes=torch.tensor([[h, w]]))
    m = symgpt.load(str(path), B=1, T=ids.shape[1], N_img=1, image_height=h, image_width=w)
    assert m.params == sum(p.numel() for p in model.parameters())
    assert m.quantity("flops.forward") == flops
    assert m.quantity("inference.prefill.flops") == flops
    return crops, tokens


@pytest.mark.parametrize("h,w", [(30, 70), (50, 20), (45, 45), (100, 31)])
def test_llava_next_image_flops(tmp_path, h, w):
    vis = {"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
           "num_attention_heads": 2, "image_size": 28, "patch_size": 7}
    text = {"model_type": "llama", **TEXT}
    cfg = {"model_type": "llava_next", "text_config": text, "vision_config": vis, "image_token_index": IMG,
           "image_grid_pinpoints": PINS}
    config = transformers.LlavaNextConfig(text_config=text, vision_config=vis, image_token_index=IMG,
                                          image_grid_pinpoints=PINS)
    _check(tmp_path, transformers.LlavaNextForConditionalGeneration, config, cfg, 4, h, w)


# 30×200 px: a 1×3 grid of 28-px crops whose 4×12 features are kept whole (48 > 1.21·3·16: interpolated
# at anyres_max_3); 45×45: 2×2 crops, 8×8 features, interpolated to 6×6 at anyres_max_2
@pytest.mark.parametrize("h,w,cap", [(30, 200, 3), (45, 45, 2), (50, 20, 9)])
def test_llava_onevision_image_flops(tmp_path, h, w, cap):
    vis = {"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
           "num_attention_heads": 2, "image_size": 28, "patch_size": 7, "vision_use_head": False}
    text = {"model_type": "qwen2", **TEXT}
    pins = [[28 * i, 28 * j] for i in range(1, 4) for j in range(1, 4)]
    cfg = {"model_type": "llava_onevision", "text_config": text, "vision_config": vis, "image_token_index": IMG,
           "image_grid_pinpoints": pins, "vision_aspect_ratio": f"anyres_max_{cap}"}
    config = transformers.LlavaOnevisionConfig(text_config=text, vision_config=vis, image_token_index=IMG,
                                               image_grid_pinpoints=pins, vision_aspect_ratio=f"anyres_max_{cap}")
    _check(tmp_path, transformers.LlavaOnevisionForConditionalGeneration, config, cfg, 4, h, w)


def test_llava_next_default_tokens_by_hand():
    """LLaVA-NeXT's defaults (336-px crops, 24 features a side, pinpoints 336×672, 672×336,
    672×672, 1008×336, 336×1008), an image of 500 × 800 px: select_best_resolution keeps
    min(672/800, 672/500)·(800, 500) = 672 × 420 px of it on 672×672 (282,240 pixels; 180,432 on
    336×1008 or 336×672, 70,560 on the others): a 2×2 grid, 5 crops. Its 48×48 features unpadded
    to 800:500: 500·48/800 = 30 rows, (48 − 30)/2 = 9 dropped above and below; 30 rows of 48
    features and a newline: 576 + 30·49 = 2046 tokens."""
    pins = [[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]]
    assert anyres(500, 800, pins, 336, 24) == (5, 576 + 30 * 49)
    assert grid_mask(pins, 336) == 1 << 1 | 1 << 2 | 1 << 8 | 1 << 9 | 1 << 16  # (rows − 1)·8 + (cols − 1)
    assert sorted(pinpoints_of(grid_mask(pins, 336), 336)) == sorted(tuple(p) for p in pins)


def test_images_need_both_sides_and_whole_grids(tmp_path):
    from symgpt.model.model import from_config

    m = from_config({"model_type": "llava_next"}, "x")
    with pytest.raises(symgpt.SymgptError, match="N_img must be 0"):
        m.with_(B=1, T=4000, N_img=1, image_height=500).quantity("flops.forward")
    assert grid_mask([[336, 500]], 336) is None
    cfg = {"model_type": "llava_next", "image_grid_pinpoints": [[336, 500]]}
    with pytest.raises(symgpt.SymgptError, match="whole grids"):
        from_config(cfg, "x").with_(B=1, T=4000, N_img=1, image_height=500, image_width=800).quantity("flops.forward")

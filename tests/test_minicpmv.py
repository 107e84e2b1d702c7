"""MiniCPM-V 4.6 / 4.7 and MiniCPM-OCR (``symgpt/families/minicpmv.py``): parameters against
transformers' classes built on the meta device from small configs that move what the defaults hide
(merger_times 2, a 3×3 window merger, untied and tied heads); an image refused in one line."""

from __future__ import annotations

import json

import pytest

import symgpt
from symgpt.core.errors import SymgptError

import torch
import transformers


def _tiny(model_type: str, cls: str, tied: bool) -> dict:
    return {"model_type": model_type, "architectures": [cls], "merger_times": 2, "tie_word_embeddings": tied,
            "text_config": {"model_type": "qwen3_5_text", "vocab_size": 300, "hidden_size": 64,
                            "intermediate_size": 96, "num_hidden_layers": 4, "num_attention_heads": 4,
                            "num_key_value_heads": 2, "head_dim": 16, "linear_num_key_heads": 2,
                            "linear_num_value_heads": 4, "linear_key_head_dim": 8, "linear_value_head_dim": 8,
                            "tie_word_embeddings": tied},
            "vision_config": {"model_type": f"{model_type}_vision", "hidden_size": 32, "intermediate_size": 48,
                              "num_hidden_layers": 3, "num_attention_heads": 2, "image_size": 42, "patch_size": 7,
                              "insert_layer_id": 1, "window_kernel_size": [3, 3]}}


@pytest.mark.parametrize("model_type,cls,tied", [
    ("minicpmv4_6", "MiniCPMV4_6ForConditionalGeneration", False),
    ("minicpmv4_7", "MiniCPMV4_7ForConditionalGeneration", False),
    ("minicpm_ocr", "MiniCPMOcrForConditionalGeneration", True)])
def test_minicpmv_params(tmp_path, model_type, cls, tied):
    cfg = _tiny(model_type, cls, tied)
    config = transformers.AutoConfig.for_model(model_type, **{k: v for k, v in cfg.items()
                                                             if k not in ("model_type", "architectures")})
    with torch.device("meta"):
        model = getattr(transformers, cls)(config)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    assert symgpt.load(str(path)).params == sum(p.numel() for p in model.parameters())
    with pytest.raises(SymgptError, match="not modelled for MiniCPM-V"):
        symgpt.load(str(path), N_img=1).params

"""Gemma 4's multimodal classes without towers (``symgpt/families/gemma4.py``): with
vision_config and audio_config null, transformers' Gemma4ForConditionalGeneration builds its text
model alone (oracle: the class on the meta device); a config with a tower is refused in one line."""

from __future__ import annotations

import json

import pytest

import symgpt
from symgpt.core.errors import SymgptError

import torch
import transformers


def _tiny(model_type: str) -> dict:
    text = {"model_type": f"{model_type}_text", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
            "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32,
            "global_head_dim": 64, "max_position_embeddings": 256, "sliding_window": 16}
    if model_type == "gemma4":
        text.update(hidden_size_per_layer_input=16, vocab_size_per_layer_input=300)
    cls = "Gemma4ForConditionalGeneration" if model_type == "gemma4" else "Gemma4UnifiedForConditionalGeneration"
    return {"model_type": model_type, "architectures": [cls], "text_config": text, "vision_config": None,
            "audio_config": None}


@pytest.mark.parametrize("model_type", ["gemma4", "gemma4_unified"])
def test_without_towers_is_the_text_model(tmp_path, model_type):
    cfg = _tiny(model_type)
    config_cls = transformers.Gemma4Config if model_type == "gemma4" else transformers.Gemma4UnifiedConfig
    config = config_cls(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    with torch.device("meta"):
        model = getattr(transformers, cfg["architectures"][0])(config)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    assert symgpt.load(str(path)).params == sum(p.numel() for p in model.parameters())
    cfg["vision_config"] = {"hidden_size": 32}
    path.write_text(json.dumps(cfg))
    with pytest.raises(SymgptError, match="vision tower is not modelled"):
        symgpt.load(str(path))

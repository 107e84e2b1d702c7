"""HyperCLOVA X Vision v2 (``symgpt/families/hyperclovax_vision.py``): parameters against transformers'
``HyperCLOVAXVisionV2ForConditionalGeneration`` built on the meta device from a small config (an untied
head, a projector out of a narrower tower); an image refused in one line."""

from __future__ import annotations

import json

import pytest

import symgpt
from symgpt.core.errors import SymgptError

import torch
import transformers


@pytest.mark.parametrize("tied", [False, True])
def test_hyperclovax_vision_params(tmp_path, tied):
    cfg = {"model_type": "hyperclovax_vision_v2", "architectures": ["HyperCLOVAXVisionV2ForConditionalGeneration"],
           "tie_word_embeddings": tied,
           "text_config": {"model_type": "hyperclovax", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
                           "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                           "tie_word_embeddings": tied},
           "vision_config": {"model_type": "qwen2_5_vl_vision", "hidden_size": 32, "intermediate_size": 40, "depth": 3,
                             "num_heads": 2, "patch_size": 7, "out_hidden_size": 48, "fullatt_block_indexes": [2]}}
    config = transformers.AutoConfig.for_model(cfg["model_type"], **{k: v for k, v in cfg.items()
                                                                   if k not in ("model_type", "architectures")})
    with torch.device("meta"):
        model = transformers.HyperCLOVAXVisionV2ForConditionalGeneration(config)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    assert symgpt.load(str(path)).params == sum(p.numel() for p in model.parameters())
    with pytest.raises(SymgptError, match="N_img must be 0"):
        symgpt.load(str(path), N_img=1).params

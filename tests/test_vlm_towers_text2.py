"""More vision--language models read as a text decoder of a family symgpt already builds and a held
vision tower (``symgpt/families/vlm_towers.py``): on tiny non-default configurations, the parameter
count against transformers' own model built on the meta device, and an image refused."""

from __future__ import annotations

import json

import pytest

import torch
import transformers

import symgpt

_QWEN3_TEXT = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
               "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "max_position_embeddings": 256,
               "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3],
                                   "mrope_interleaved": True}}
_QWEN3_VISION = {"depth": 3, "hidden_size": 32, "intermediate_size": 48, "num_heads": 2, "out_hidden_size": 64,
                 "patch_size": 4, "num_position_embeddings": 16, "deepstack_visual_indexes": [1]}

_SMALL = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
          "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256}

META = {
    # Cosmos3OmniForConditionalGeneration: Qwen3-VL's class under another model_type
    "cosmos3_omni": ("Cosmos3OmniConfig", "Cosmos3OmniForConditionalGeneration",
                     {"text_config": _QWEN3_TEXT, "vision_config": _QWEN3_VISION, "tie_word_embeddings": True}),
    # a squared-ReLU LLaMA decoder, a SigLIP2-style tower of 9 positions, a merger of width 40
    "cosmos3_edge": ("Cosmos3EdgeConfig", "Cosmos3EdgeForConditionalGeneration",
                     {"text_config": {**_SMALL, "head_dim": 16, "rope_parameters": {
                         "rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}},
                      "vision_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
                                        "num_attention_heads": 2, "patch_size": 4, "num_patches": 9},
                      "projector_hidden_size": 40}),
}


def _write(tmp_path, cls: str, config) -> str:
    path = tmp_path / "config.json"
    cfg = json.loads(config.to_json_string(use_diff=False))
    path.write_text(json.dumps({**cfg, "architectures": [cls]}))
    return str(path)


@pytest.mark.parametrize("model_type", sorted(META))
def test_params_on_meta(tmp_path, model_type):
    config_cls, cls, fields = META[model_type]
    config = getattr(transformers, config_cls)(**fields)
    with torch.device("meta"):
        model = getattr(transformers, cls)._from_config(config)
    m = symgpt.load(_write(tmp_path, cls, config))
    assert m.params == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("model_type", sorted(META))
def test_an_image_is_refused(tmp_path, model_type):
    config_cls, cls, fields = META[model_type]
    config = getattr(transformers, config_cls)(**fields)
    with pytest.raises(symgpt.SymgptError, match="N_img must be 0"):
        symgpt.load(_write(tmp_path, cls, config), N_img=1).params

"""Vision--language models read as a text decoder and a held vision tower
(``symgpt/families/vlm_towers.py``): on tiny non-default configurations (a tied head, one DeepStack
merger, biases on, a small position table), the parameter count against transformers' own model
and the forward over token ids against ``FlopCounterMode`` on CPU; an image is refused."""

from __future__ import annotations

import json

import pytest

import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

import symgpt

_QWEN3_TEXT = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
               "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "max_position_embeddings": 256,
               "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3],
                                   "mrope_interleaved": True}}
_QWEN3_VISION = {"depth": 3, "hidden_size": 32, "intermediate_size": 48, "num_heads": 2, "out_hidden_size": 64,
                 "patch_size": 4, "num_position_embeddings": 16, "deepstack_visual_indexes": [1]}
_GLM_TEXT = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256,
             "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 2, 4]}}
_GLM_VISION = {"depth": 2, "hidden_size": 32, "intermediate_size": 80, "num_heads": 4, "out_hidden_size": 48,
               "patch_size": 7, "image_size": 28, "attention_bias": True}

_SMALL = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
          "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256}

CASES = {
    "qwen3_vl": ("Qwen3VLConfig", "Qwen3VLForConditionalGeneration",
                 {"text_config": _QWEN3_TEXT, "vision_config": _QWEN3_VISION, "tie_word_embeddings": True}),
    "qwen3_vl_moe": ("Qwen3VLMoeConfig", "Qwen3VLMoeForConditionalGeneration",
                     {"text_config": {**_QWEN3_TEXT, "moe_intermediate_size": 32, "num_experts": 4,
                                      "num_experts_per_tok": 2},
                      "vision_config": _QWEN3_VISION}),
    "glm4v": ("Glm4vConfig", "Glm4vForConditionalGeneration",
              {"text_config": _GLM_TEXT, "vision_config": _GLM_VISION}),
    "glm_ocr": ("GlmOcrConfig", "GlmOcrForConditionalGeneration",
                {"text_config": _GLM_TEXT, "vision_config": {**_GLM_VISION, "intermediate_size": 40}}),
    "video_llama_3": ("VideoLlama3Config", "VideoLlama3ForConditionalGeneration",
                      {"text_config": {**_SMALL, "model_type": "qwen2"}, "tie_word_embeddings": True,
                       "vision_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
                                         "num_attention_heads": 2, "patch_size": 4}}),
    "paddleocr_vl": ("PaddleOCRVLConfig", "PaddleOCRVLForConditionalGeneration",
                     {"text_config": {**_SMALL, "head_dim": 16, "rope_parameters": {
                         "rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}},
                      "vision_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
                                        "num_attention_heads": 2, "patch_size": 7, "image_size": 28,
                                        "spatial_merge_size": 2}}),
}


def _write(tmp_path, model_type: str, cls: str, config) -> str:
    path = tmp_path / "config.json"
    cfg = json.loads(config.to_json_string(use_diff=False))
    path.write_text(json.dumps({**cfg, "architectures": [cls]}))
    return str(path)


@pytest.mark.parametrize("model_type", sorted(CASES))
def test_params_and_text_flops_on_cpu(tmp_path, model_type):
    config_cls, cls, fields = CASES[model_type]
    config = getattr(transformers, config_cls)(**fields)
    torch.manual_seed(0)
    model = getattr(transformers, cls)._from_config(config, attn_implementation="eager",
                                                    experts_implementation="eager").eval()
    m = symgpt.load(_write(tmp_path, model_type, cls, config), B=2, T=10)
    assert m.params == sum(p.numel() for p in model.parameters())
    # the tower and projector: every parameter outside the text model and its head
    visual = sum(v for p, v in m.quantity("params").values().items() if p.startswith(("visual/", "projector/")))
    assert visual == sum(p.numel() for n, p in model.named_parameters()
                         if not n.startswith(("model.language_model.", "lm_head.")))
    ids = torch.randint(0, 200, (2, 10))
    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
    assert m.quantity("flops.forward") == fcm.get_total_flops()


def test_an_image_is_refused(tmp_path):
    config_cls, cls, fields = CASES["glm4v"]
    path = _write(tmp_path, "glm4v", cls, getattr(transformers, config_cls)(**fields))
    with pytest.raises(symgpt.SymgptError, match="N_img must be 0"):
        symgpt.load(path, N_img=1).params


META = {
    "exaone4_5": ("Exaone4_5_Config", "Exaone4_5_ForConditionalGeneration",
                  {"text_config": {**_SMALL, "model_type": "exaone4"},
                   "vision_config": {"depth": 2, "hidden_size": 32, "intermediate_size": 48, "num_heads": 4,
                                     "num_key_value_heads": 2, "out_hidden_size": 64, "patch_size": 7}}),
    "qwen2_5_omni_thinker": ("Qwen2_5OmniThinkerConfig", "Qwen2_5OmniThinkerForConditionalGeneration",
                             {"text_config": {**_SMALL, "rope_parameters": {"rope_type": "default", "mrope_section": [2, 3, 3]}},
                              "vision_config": {"depth": 2, "hidden_size": 32, "intermediate_size": 48, "num_heads": 4,
                                                "out_hidden_size": 64, "patch_size": 7},
                              "audio_config": {"d_model": 16, "encoder_layers": 2, "encoder_ffn_dim": 24,
                                               "encoder_attention_heads": 2, "num_mel_bins": 8, "output_dim": 64}}),
    "qwen3_omni_moe_thinker": ("Qwen3OmniMoeThinkerConfig", "Qwen3OmniMoeThinkerForConditionalGeneration",
                               {"text_config": {**_SMALL, "hidden_size": 60, "num_attention_heads": 8,
                                                "moe_intermediate_size": 32, "num_experts": 4,
                                                "num_experts_per_tok": 2},
                                "vision_config": {**_QWEN3_VISION, "out_hidden_size": 60},
                                "audio_config": {"d_model": 16, "encoder_layers": 2, "encoder_ffn_dim": 24,
                                                 "encoder_attention_heads": 2, "num_mel_bins": 10,
                                                 "downsample_hidden_size": 6, "output_dim": 60}}),
    "kimi_k25": ("Kimi_K25Config", "Kimi_K25ForConditionalGeneration",
                 {"text_config": {"model_type": "deepseek_v3", "vocab_size": 300, "hidden_size": 64,
                                  "intermediate_size": 96, "moe_intermediate_size": 32, "num_hidden_layers": 2,
                                  "first_k_dense_replace": 1, "num_attention_heads": 4, "num_key_value_heads": 4,
                                  "n_routed_experts": 4, "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1,
                                  "q_lora_rank": 32, "kv_lora_rank": 16, "qk_nope_head_dim": 16,
                                  "qk_rope_head_dim": 8, "v_head_dim": 16},
                  "projection_hidden_size": 32, "tie_word_embeddings": False,
                  "vision_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
                                    "num_attention_heads": 2, "patch_size": 7, "pos_emb_height": 4,
                                    "pos_emb_width": 3}}),
}


@pytest.mark.parametrize("model_type", sorted(META))
def test_params_on_meta(tmp_path, model_type):
    config_cls, cls, fields = META[model_type]
    config = getattr(transformers, config_cls)(**fields)
    with torch.device("meta"):
        model = getattr(transformers, cls)._from_config(config)
    m = symgpt.load(_write(tmp_path, model_type, cls, config))
    assert m.params == sum(p.numel() for p in model.parameters())

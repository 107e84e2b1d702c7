"""More vision--language models read as a text decoder of a family symgpt already builds and a held
vision tower (``symgpt/families/vlm_held_moe.py``): on tiny non-default configurations built with
transformers on CPU, the parameter count (all, and the tower's and projector's) against the
model's own, the forward FLOPs over token ids against FlopCounterMode, and an image refused."""

from __future__ import annotations

import json

import pytest
import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

import symgpt

_MINIMAX_M3_TEXT = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 24, "num_hidden_layers": 3,
                    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
                    "max_position_embeddings": 256, "dense_intermediate_size": 40, "shared_intermediate_size": 32,
                    "num_local_experts": 8, "num_experts_per_tok": 2, "mlp_layer_types": ["dense", "sparse", "sparse"]}

_STEP3P5_TEXT = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 3,
                 "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "max_position_embeddings": 256,
                 "moe_intermediate_size": 24, "n_routed_experts": 8, "num_experts_per_tok": 2, "share_expert_dim": 32,
                 "mlp_layer_types": ["dense", "sparse", "sparse"], "sliding_window": 8}

_ERNIE_TEXT = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 3,
               "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256,
               "mlp_layer_types": ["dense", "sparse", "sparse"], "moe_intermediate_size": [24, 16],
               "moe_num_experts": 8, "moe_k": 2, "moe_num_shared_experts": 1,
               "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [3, 3, 2]}}

_UNLIMITED_TEXT = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 3,
                   "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 16, "max_position_embeddings": 256,
                   "moe_intermediate_size": 24, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1,
                   "mlp_layer_types": ["dense", "sparse", "sparse"], "sliding_window": 8,
                   "layer_types": ["reference_sliding_attention"] * 3}
_UNLIMITED_VISION = {"sam_config": {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "mlp_dim": 48,
                                    "image_size": 64, "patch_size": 16, "window_size": 2, "global_attn_indexes": [1],
                                    "output_channels": 16, "downsample_channels": [24, 40]},
                     "encoder_config": {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
                                        "intermediate_size": 48, "image_size": 16, "patch_size": 4}}

CASES = {
    # a dense first layer then experts, a 2-layer tower of width 32, a projector of width 40, 2×2 merged
    "minimax_m3_vl": ("MiniMaxM3VLConfig", "MiniMaxM3SparseForConditionalGeneration",
                      {"text_config": _MINIMAX_M3_TEXT,
                       "vision_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
                                         "num_attention_heads": 2, "patch_size": 4, "temporal_patch_size": 2},
                       "projector_hidden_size": 40}, ("model.vision_tower.", "model.multi_modal_projector.")),
    # a dense first layer then experts with a shared one, a 2-layer tower of width 32 (MLP 1.5×), 16 positions
    "step3p7": ("Step3p7Config", "Step3p7ForConditionalGeneration",
                {"text_config": _STEP3P5_TEXT,
                 "vision_config": {"hidden_size": 32, "mlp_ratio": 1.5, "num_hidden_layers": 2,
                                   "num_attention_heads": 2, "image_size": 16, "patch_size": 4},
                 "projector_bias": True}, ("model.vision_model.", "model.multi_modal_projector.")),
    # text experts of width 24 and held vision experts of width 16, a 2-layer tower of width 32 and its resampler
    "ernie4_5_vl_moe": ("Ernie4_5_VLMoeConfig", "Ernie4_5_VLMoeForConditionalGeneration",
                        {"text_config": _ERNIE_TEXT,
                         "vision_config": {"hidden_size": 32, "intermediate_size": 48, "depth": 2, "num_heads": 2,
                                           "patch_size": 4}},
                        ("model.vision_tower.", "model.resampler_model.")),
    # reference sliding-window layers (a prompt attends over itself whole), a SAM encoder of 2 layers (one global)
    # and a CLIP encoder of 2 layers over its features
    "unlimited_ocr": ("UnlimitedOcrConfig", "UnlimitedOcrForConditionalGeneration",
                      {"text_config": _UNLIMITED_TEXT, "vision_config": _UNLIMITED_VISION},
                      ("model.vision_tower.", "model.multi_modal_projector.", "model.view_separator",
                       "model.image_newline")),
}


def _write(tmp_path, cls: str, config) -> str:
    path = tmp_path / "config.json"
    cfg = json.loads(config.to_json_string(use_diff=False))
    path.write_text(json.dumps({**cfg, "architectures": [cls]}))
    return str(path)


def _model(model_type):
    config_cls, cls, fields, _ = CASES[model_type]
    config = getattr(transformers, config_cls)(**fields)
    torch.manual_seed(0)
    model = getattr(transformers, cls)._from_config(config, attn_implementation="eager",
                                                    experts_implementation="eager").eval()
    return config, cls, model


@pytest.mark.parametrize("model_type", sorted(CASES))
def test_params_and_text_flops_on_cpu(tmp_path, model_type):
    config, cls, model = _model(model_type)
    m = symgpt.load(_write(tmp_path, cls, config), B=2, T=10)
    assert m.params == sum(p.numel() for p in model.parameters())
    # the tower, its projector and any held experts: every parameter a forward over token ids does not use
    visual = sum(v for p, v in m.quantity("params").values().items()
                 if p.startswith(("visual/", "projector/", "vision_moe/")))
    assert visual == sum(p.numel() for n, p in model.named_parameters()
                         if n.startswith(CASES[model_type][3]) or ".mlp.vision_moe." in n)
    ids = torch.randint(0, 200, (2, 10))
    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
    assert m.quantity("flops.forward") == fcm.get_total_flops()


@pytest.mark.parametrize("model_type", sorted(CASES))
def test_an_image_is_refused_and_noted(tmp_path, model_type):
    config, cls, _ = _model(model_type)
    path = _write(tmp_path, cls, config)
    assert any("does not run the vision tower" in n for n in symgpt.load(path).notes)
    with pytest.raises(symgpt.SymgptError, match="N_img must be 0") as err:
        symgpt.load(path, N_img=1).params
    assert "\n" not in str(err.value)

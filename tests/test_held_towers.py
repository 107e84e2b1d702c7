"""Ovis2, OmniASR, Fun-ASR-Nano, Nemotron 3 Nano Omni and Janus read as a text decoder beside a held tower
(``symgpt/families/held_towers.py``): on tiny non-default configurations (a hidden stride of 2 and
biases on, a feature encoder without biases, one timestamp layer, a SwiGLU RADIO tower, a
two-level VQ-VAE with a doubled latent), the parameter count against
transformers' own model (the tower's share apart), the forward over token ids against
``FlopCounterMode`` on CPU; an image or an audio clip is refused in one line."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

import torch
from torch.utils.flop_counter import FlopCounterMode

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

DEFAULTS = Path(__file__).parent / "configs" / "vlm_zoo"

_LLAMA = {"model_type": "llama", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
          "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
          "max_position_embeddings": 256}

CASES = {
    "ovis2": ("Ovis2Config", "Ovis2ForConditionalGeneration", "N_img",
              {"text_config": {**_LLAMA, "model_type": "qwen2"}, "hidden_size": 48, "vocab_size": 280,
               "vision_config": {"hidden_size": 32, "intermediate_size": 40, "num_hidden_layers": 2,
                                 "num_attention_heads": 2, "image_size": 28, "patch_size": 7, "qkv_bias": True,
                                 "mlp_bias": True, "vocab_size": 50, "hidden_stride": 2,
                                 "num_visual_indicator_tokens": 3}}),
    "omniasr": ("OmniASRConfig", "OmniASRForConditionalGeneration", "N_aud",
                {"text_config": _LLAMA,
                 "audio_config": {"hidden_size": 32, "intermediate_size": 56, "num_hidden_layers": 2,
                                  "num_attention_heads": 4, "conv_dim": [24, 24, 24], "conv_kernel": [5, 3, 2],
                                  "conv_stride": [3, 2, 2], "num_conv_pos_embeddings": 8,
                                  "num_conv_pos_embedding_groups": 4, "conv_bias": False}}),
    "fun_asr_nano": ("FunAsrNanoConfig", "FunAsrNanoForConditionalGeneration", "N_aud",
                     {"text_config": {**_LLAMA, "model_type": "qwen3"}, "tie_word_embeddings": False,
                      "audio_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 4,
                                       "num_attention_heads": 4, "num_mel_bins": 10, "num_stacked_frames": 3,
                                       "num_timestamp_prediction_layers": 1, "fsmn_kernel_size": 5},
                      "adaptor_config": {"hidden_size": 64, "intermediate_size": 16, "num_hidden_layers": 1,
                                         "num_attention_heads": 4, "projector_hidden_size": 40}}),
    "nemotron_h_omni": ("NemotronH_Omni_Reasoning_V3_Config", "NemotronH_Omni_Reasoning_V3", "N_img",
                        {"text_config": {"model_type": "nemotron_h", "vocab_size": 300, "hidden_size": 64,
                                         "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 2,
                                         "head_dim": 16, "mamba_num_heads": 8, "mamba_head_dim": 16, "n_groups": 2,
                                         "ssm_state_size": 16, "conv_kernel": 4, "expand": 2, "chunk_size": 8,
                                         "layers_block_type": ["linear_attention", "moe", "full_attention", "mlp"],
                                         "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
                                         "moe_shared_expert_intermediate_size": 32},
                         "vision_config": {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
                                           "patch_size": 4, "max_img_size": 32, "num_registers": 2, "mlp_ratio": 3.0,
                                           "use_swiglu_ffn": True, "qkv_bias": False, "video_temporal_patch_size": 3},
                         "video_temporal_patch_size": 3, "vision_hidden_size": 32, "projector_hidden_size": 40}),
    "janus": ("JanusConfig", "JanusForConditionalGeneration", "N_img",
              {"text_config": _LLAMA, "tie_word_embeddings": False,
               "vision_config": {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 32,
                                 "patch_size": 8, "mlp_ratio": 2.0, "attention_bias": False, "use_qk_norm": True,
                                 "projection_dim": 48, "depth": 3},
               "vq_config": {"base_channels": 32, "channel_multiplier": [1, 2, 2], "num_res_blocks": 1,
                             "latent_channels": 16, "embed_dim": 4, "num_embeddings": 40, "double_latent": True,
                             "projection_dim": 24, "num_hidden_layers": 1, "image_token_embed_dim": 64,
                             "out_channels": 2}}),
}


def _write(tmp_path, cls: str, config) -> str:
    path = tmp_path / "config.json"
    cfg = json.loads(config.to_json_string(use_diff=False))
    path.write_text(json.dumps({**cfg, "architectures": [cls]}))
    return str(path)


def _model(model_type):
    config_cls, cls, _, fields = CASES[model_type]
    module = importlib.import_module(f"transformers.models.{model_type}")
    config = getattr(module, config_cls)(**fields)
    torch.manual_seed(0)
    klass = getattr(module, cls)
    # experts as one matmul per (token, chosen expert), which FlopCounterMode counts (as tests/test_hybrid.py)
    kw = {"experts_implementation": "batched_mm"} if klass._can_set_experts_implementation() else {}
    model = klass._from_config(config, attn_implementation="eager", **kw).eval()
    text = getattr(model, "language_model", None)  # Nemotron Omni: a whole causal LM inside, its experts its own
    if not kw and text is not None and type(text)._can_set_experts_implementation():
        text.set_experts_implementation("batched_mm")
    return config, cls, model


@pytest.mark.parametrize("model_type", sorted(CASES))
def test_params_and_text_flops_on_cpu(tmp_path, model_type):
    config, cls, model = _model(model_type)
    m = symgpt.load(_write(tmp_path, cls, config), B=2, T=10)
    assert m.family.name == model_type
    assert not [n for n in m.notes if "not understood" in n], m.notes
    assert m.params == sum(p.numel() for p in model.parameters())
    # the tower and projector: every parameter outside the text model and its head
    held = sum(v for p, v in m.quantity("params").values().items()
               if p.startswith(("vision_tower/", "visual_embeddings_table", "audio_tower/", "multi_modal_projector",
                                "vision_model/", "aligner", "vqmodel/", "generation_")))
    assert held == sum(p.numel() for n, p in model.named_parameters()
                       if not n.startswith(("model.language_model.", "lm_head.", "language_model.")))
    ids = torch.randint(0, 200, (2, 10))
    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
    assert m.quantity("flops.forward") == fcm.get_total_flops()


@pytest.mark.parametrize("model_type", sorted(CASES))
def test_images_or_audio_refused_in_one_line(tmp_path, model_type):
    config, cls, _ = _model(model_type)
    n = CASES[model_type][2]
    m = symgpt.load(_write(tmp_path, cls, config), B=1, T=8)
    with pytest.raises(SymgptError, match="not modelled") as e:
        m.with_(**{n: 1}).quantity("params").value
    assert "\n" not in str(e.value)
    assert any(f"{n} must be 0" in note for note in m.notes)


def test_ovis2_untied_head_of_another_width_refused():
    cfg = json.loads((DEFAULTS / "ovis2.json").read_text())
    with pytest.raises(SymgptError, match="untied head whose hidden_size or vocab_size differs"):
        from_config({**cfg, "tie_word_embeddings": False}, "o")


def test_omniasr_uneven_feature_encoder_refused():
    cfg = json.loads((DEFAULTS / "omniasr.json").read_text())
    cfg["audio_config"] = {**cfg["audio_config"], "conv_dim": [512, 256, 256, 256, 256, 256, 256]}
    with pytest.raises(SymgptError, match="conv_dim entries differ"):
        from_config(cfg, "o")


_ONE_LAYER = {"model_type": "qwen3", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
              "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16}


@pytest.mark.parametrize("model_type,fields", [
    # one encoder layer, no adaptor layers; more timestamp layers than layers (one final LayerNorm)
    ("fun_asr_nano", {"text_config": _ONE_LAYER, "adaptor_config": {"hidden_size": 64, "intermediate_size": 16, "num_hidden_layers": 0},
                      "audio_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 1,
                                       "num_attention_heads": 4, "num_timestamp_prediction_layers": 0}}),
    ("fun_asr_nano", {"text_config": _ONE_LAYER, "adaptor_config": {"hidden_size": 64, "intermediate_size": 16, "num_hidden_layers": 0},
                      "audio_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 3,
                                       "num_attention_heads": 4, "num_timestamp_prediction_layers": 5}}),
    # a feature encoder of one convolution
    ("omniasr", {"text_config": {**_ONE_LAYER, "model_type": "llama"},
                 "audio_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 1,
                                  "num_attention_heads": 4, "conv_dim": [16], "conv_kernel": [4], "conv_stride": [2],
                                  "num_conv_pos_embeddings": 4, "num_conv_pos_embedding_groups": 2}}),
], ids=["fun_asr_one_layer", "fun_asr_more_timestamp_layers", "omniasr_one_conv"])
def test_edge_shapes_on_meta(model_type, fields):
    config_cls, cls, _, _ = CASES[model_type]
    module = importlib.import_module(f"transformers.models.{model_type}")
    config = getattr(module, config_cls)(**fields)
    with torch.device("meta"):
        model = getattr(module, cls)(config)
    cfg = {**json.loads(config.to_json_string(use_diff=False)), "architectures": [cls]}
    assert from_config(cfg, "e").params.value == sum(p.numel() for p in model.parameters())


def test_janus_tower_priced_per_image_on_cpu(tmp_path):
    # the aligner as wide as the decoder: the vision tower and aligner run on the image (32×32 pixels in
    # 8×8 patches: 16 image tokens); the VQ-VAE and the generation modules stay held
    module = importlib.import_module("transformers.models.janus")
    fields = {**CASES["janus"][3], "image_token_id": 5}
    fields["vision_config"] = {**fields["vision_config"], "projection_dim": 64, "use_qk_norm": False,
                               "attention_bias": True}
    config = module.JanusConfig(**fields)
    torch.manual_seed(0)
    model = module.JanusForConditionalGeneration._from_config(config, attn_implementation="eager").eval()
    path = _write(tmp_path, "JanusForConditionalGeneration", config)
    m = symgpt.load(path)
    assert m.flags["janus_run"] and m.params == sum(p.numel() for p in model.parameters())
    ids = torch.tensor([[2] + [5] * 16 + [9, 10, 11]])
    T = ids.shape[1]

    def flops(**inputs):
        with FlopCounterMode(display=False) as fcm, torch.no_grad():
            model(use_cache=False, **inputs)
        return fcm.get_total_flops()

    with_image, text_only = flops(input_ids=ids, pixel_values=torch.rand(1, 3, 32, 32)), flops(input_ids=ids)
    m0, m1 = symgpt.load(path, B=1, T=T), symgpt.load(path, B=1, T=T, N_img=1)
    assert m0.quantity("flops.forward") == text_only
    assert int(m1.quantity("flops.forward")) - int(m0.quantity("flops.forward")) == with_image - text_only
    # the tower runs in the prefill, once per image; a decode step runs the decoder alone
    assert int(m1.quantity("inference.prefill.flops")) - int(m0.quantity("inference.prefill.flops")) == \
        with_image - text_only
    assert int(m1.quantity("inference.decode.flops")) == int(m0.quantity("inference.decode.flops"))
    with pytest.raises(SymgptError, match="T must count the N_img images' tokens"):
        symgpt.load(path, B=1, T=10, N_img=1).quantity("flops.forward").value

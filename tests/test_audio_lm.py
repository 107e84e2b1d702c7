"""Qwen2-Audio (Qwen2AudioForConditionalGeneration) against transformers: parameters on the meta
device for the configuration class's defaults, and the forward FLOPs of a prompt with one padded
clip under FlopCounterMode on a tiny CPU model."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.model.model import from_config

TINY = {"model_type": "qwen2_audio", "audio_token_index": 5,
        "audio_config": {"model_type": "qwen2_audio_encoder", "d_model": 16, "encoder_layers": 2,
                         "encoder_attention_heads": 2, "encoder_ffn_dim": 24, "num_mel_bins": 6,
                         "max_source_positions": 8},
        "text_config": {"model_type": "qwen2", "vocab_size": 64, "hidden_size": 32, "intermediate_size": 40,
                        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                        "max_position_embeddings": 64}}


def _params(model):
    return sum(p.numel() for p in model.parameters())


def test_default_config_params_exact_on_meta():
    hf = build({"model_type": "qwen2_audio"}, "Qwen2AudioForConditionalGeneration")
    m = from_config({"model_type": "qwen2_audio", "architectures": ["Qwen2AudioForConditionalGeneration"]}, "q")
    assert m.family.name == "qwen2_audio"
    assert m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


def test_tiny_config_params_and_forward_flops_with_one_clip():
    hf = build(TINY, "Qwen2AudioForConditionalGeneration", device="cpu").eval()
    m = from_config({**TINY, "architectures": ["Qwen2AudioForConditionalGeneration"]}, "tiny")
    assert m.params.value == _params(hf)
    text = 6
    ids = torch.cat([torch.full((1, 4), 5), torch.randint(6, 64, (1, text))], dim=1)  # 8/2 = 4 audio tokens
    feats = torch.rand(1, 6, 16)  # padded: 2 · max_source_positions frames
    mask = torch.ones(1, 16, dtype=torch.long)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(input_ids=ids, input_features=feats, feature_attention_mask=mask, use_cache=False)
    got = m.with_(B=1, T=4 + text, N_aud=1).quantity("flops.forward").value
    assert got == fc.get_total_flops()

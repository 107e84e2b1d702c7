"""Voxtral (VoxtralForConditionalGeneration) against transformers: parameters on the meta device
for the configuration class's defaults, and the forward FLOPs of a prompt with one padded clip
under FlopCounterMode on a tiny CPU model (the encoder's positions stacked 4 to a row before the
projector)."""

import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.model.model import from_config

CLS = "VoxtralForConditionalGeneration"
TINY = {"model_type": "voxtral", "audio_token_id": 5,
        "audio_config": {"model_type": "voxtral_encoder", "hidden_size": 16, "num_hidden_layers": 2,
                         "num_attention_heads": 2, "intermediate_size": 64, "num_mel_bins": 6,
                         "max_source_positions": 8},
        "text_config": {"model_type": "llama", "vocab_size": 64, "hidden_size": 32, "intermediate_size": 40,
                        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                        "max_position_embeddings": 64}}


def _params(model):
    return sum(p.numel() for p in model.parameters())


def test_default_config_params_exact_on_meta():
    hf = build({"model_type": "voxtral"}, CLS)
    m = from_config({"model_type": "voxtral", "architectures": [CLS]}, "v")
    assert m.family.name == "voxtral"
    assert m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


def test_tiny_config_params_and_forward_flops_with_one_clip():
    hf = build(TINY, CLS, device="cpu").eval()
    m = from_config({**TINY, "architectures": [CLS]}, "tiny")
    assert m.params.value == _params(hf)
    text = 6
    ids = torch.cat([torch.full((1, 2), 5), torch.randint(6, 64, (1, text))], dim=1)  # 8 positions / 4 = 2 tokens
    feats = torch.rand(1, 6, 16)  # padded: 2 · max_source_positions frames
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(input_ids=ids, input_features=feats, use_cache=False)
    got = m.with_(B=1, T=2 + text, N_aud=1).quantity("flops.forward").value
    assert got == fc.get_total_flops()

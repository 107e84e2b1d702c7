"""BLIP (BlipForConditionalGeneration) against transformers: parameters on the meta device for the
committed default configuration; on a tiny CPU model the parameters and the forward FLOPs under
FlopCounterMode of one pass (the image through the vision model, the text through the decoder with
cross-attention onto it)."""

import json
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLS = "BlipForConditionalGeneration"
CFG = Path(__file__).parent / "configs" / "vlm_zoo" / "blip.json"
TINY = {"model_type": "blip",
        "vision_config": {"hidden_size": 24, "num_attention_heads": 2, "num_hidden_layers": 2, "intermediate_size": 40,
                          "image_size": 8, "patch_size": 4},
        "text_config": {"hidden_size": 16, "num_attention_heads": 2, "num_hidden_layers": 3, "intermediate_size": 28,
                        "vocab_size": 50, "max_position_embeddings": 12, "encoder_hidden_size": 24,
                        "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}}


def _params(model):
    return sum(p.numel() for p in model.parameters())


def test_default_config_params_exact_on_meta():
    cfg = json.loads(CFG.read_text())
    hf = build({k: v for k, v in cfg.items() if k not in ("architectures", "transformers_version")}, CLS)
    m = from_config(cfg, "p")
    assert m.family.name == "blip"
    assert m.params.value == _params(hf)


def test_tiny_model_params_and_forward_flops():
    hf = build(TINY, CLS, device="cpu").eval()
    m = from_config({**TINY, "architectures": [CLS]}, "tiny")
    assert m.params.value == _params(hf)
    Bn, T = 2, 6
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(pixel_values=torch.rand(Bn, 3, 8, 8), input_ids=torch.randint(0, 50, (Bn, T)), use_cache=False)
    assert m.with_(B=Bn, T=T).quantity("flops.forward").value == fc.get_total_flops()


def test_a_decoder_over_another_width_is_refused_in_one_line():
    cfg = {**TINY, "text_config": {**TINY["text_config"], "encoder_hidden_size": 32}, "architectures": [CLS]}
    with pytest.raises(SymgptError) as e:
        from_config(cfg, "x")
    assert "not modelled" in str(e.value) and "\n" not in str(e.value)

"""Pix2Struct (Pix2StructForConditionalGeneration) against transformers: parameters on the meta
device for the committed default configuration; on a tiny CPU model the parameters and the
forward FLOPs under FlopCounterMode of one pass (patches through the encoder, one decoder pass)."""

import json
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLS = "Pix2StructForConditionalGeneration"
CFG = Path(__file__).parent / "configs" / "vlm_zoo" / "pix2struct.json"
TINY = {"model_type": "pix2struct",
        "vision_config": {"hidden_size": 16, "num_attention_heads": 2, "d_kv": 8, "d_ff": 24,
                          "num_hidden_layers": 2, "patch_embed_hidden_size": 12, "seq_len": 9,
                          "dropout_rate": 0.0},
        "text_config": {"hidden_size": 16, "num_heads": 2, "d_kv": 8, "d_ff": 24, "num_layers": 3,
                        "vocab_size": 50, "dropout_rate": 0.0}}


def _params(model):
    return sum(p.numel() for p in model.parameters())


def test_default_config_params_exact_on_meta():
    cfg = json.loads(CFG.read_text())
    hf = build({k: v for k, v in cfg.items() if k not in ("architectures", "transformers_version")}, CLS)
    m = from_config(cfg, "p")
    assert m.family.name == "pix2struct"
    assert m.params.value == _params(hf)


def test_tiny_model_params_and_forward_flops():
    hf = build(TINY, CLS, device="cpu").eval()
    m = from_config({**TINY, "architectures": [CLS]}, "tiny")
    assert m.params.value == _params(hf)
    Bn, T, T_dec = 2, 6, 5
    idx = torch.randint(0, 9, (Bn, T, 2)).float()
    patches = torch.cat([idx, torch.rand(Bn, T, 12)], dim=-1)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(flattened_patches=patches, attention_mask=torch.ones(Bn, T),
           decoder_input_ids=torch.randint(0, 50, (Bn, T_dec)), use_cache=False)
    assert m.with_(B=Bn, T_enc=T, T_dec=T_dec).quantity("flops.forward").value == fc.get_total_flops()


def test_unequal_towers_refused_in_one_line():
    cfg = {**TINY, "vision_config": {**TINY["vision_config"], "hidden_size": 32}, "architectures": [CLS]}
    with pytest.raises(SymgptError) as e:
        from_config(cfg, "x")
    assert "not modelled" in str(e.value) and "\n" not in str(e.value)

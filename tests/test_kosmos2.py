"""Kosmos-2 (Kosmos2ForConditionalGeneration) against transformers: parameters on the meta device
for the committed default configuration; on a tiny CPU model the parameters and the forward FLOPs
under FlopCounterMode of one pass over one image (its latent-query outputs at the positions
``image_embeds_position_mask`` marks) and the text around them."""

import json
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLS = "Kosmos2ForConditionalGeneration"
CFG = Path(__file__).parent / "configs" / "vlm_zoo" / "kosmos-2.json"
NQ = 4
TINY = {"model_type": "kosmos-2", "latent_query_num": NQ,
        "vision_config": {"hidden_size": 24, "num_attention_heads": 2, "num_hidden_layers": 2, "intermediate_size": 40,
                          "image_size": 8, "patch_size": 4},
        "text_config": {"embed_dim": 16, "attention_heads": 2, "layers": 2, "ffn_dim": 28, "vocab_size": 50,
                        "max_position_embeddings": 32, "dropout": 0.0, "attention_dropout": 0.0}}


def _params(model):
    return sum(p.numel() for p in model.parameters())


def test_default_config_params_exact_on_meta():
    cfg = json.loads(CFG.read_text())
    hf = build({k: v for k, v in cfg.items() if k not in ("architectures", "transformers_version")}, CLS)
    m = from_config(cfg, "p")
    assert m.family.name == "kosmos-2"
    assert m.params.value == _params(hf)


def test_tiny_model_params_and_forward_flops_over_one_image():
    hf = build(TINY, CLS, device="cpu").eval()
    m = from_config({**TINY, "architectures": [CLS]}, "tiny")
    assert m.params.value == _params(hf)
    Bn, T = 2, NQ + 6
    mask = torch.zeros(Bn, T, dtype=torch.bool)
    mask[:, 1:1 + NQ] = True
    # with grad enabled: under no_grad, FlopCounterMode's module hooks raise on this model
    with FlopCounterMode(display=False) as fc:
        hf(pixel_values=torch.rand(Bn, 3, 8, 8), input_ids=torch.randint(3, 50, (Bn, T)),
           image_embeds_position_mask=mask, use_cache=False)
    assert m.with_(B=Bn, T=T, N_img=1).quantity("flops.forward").value == fc.get_total_flops()


def test_cross_attention_in_the_text_model_is_refused_in_one_line():
    cfg = {**TINY, "text_config": {**TINY["text_config"], "add_cross_attention": True}, "architectures": [CLS]}
    with pytest.raises(SymgptError) as e:
        from_config(cfg, "x")
    assert "not modelled" in str(e.value) and "\n" not in str(e.value)

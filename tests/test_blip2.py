"""BLIP-2 (Blip2ForConditionalGeneration with an OPT language model) against transformers:
parameters on the meta device for the committed default configuration; on a tiny CPU model the
parameters and the forward FLOPs under FlopCounterMode of one pass over one image (its query
outputs in the places of the image tokens) and the text after them."""

import json
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLS = "Blip2ForConditionalGeneration"
CFG = Path(__file__).parent / "configs" / "vlm_zoo" / "blip-2.json"
NQ, IMAGE = 4, 49
TINY = {"model_type": "blip-2", "num_query_tokens": NQ, "image_token_index": IMAGE,
        "vision_config": {"hidden_size": 24, "num_attention_heads": 2, "num_hidden_layers": 2, "intermediate_size": 40,
                          "image_size": 8, "patch_size": 4},
        "qformer_config": {"hidden_size": 16, "num_attention_heads": 2, "num_hidden_layers": 4, "intermediate_size": 20,
                           "encoder_hidden_size": 24, "cross_attention_frequency": 2,
                           "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0},
        "text_config": {"model_type": "opt", "hidden_size": 20, "num_attention_heads": 2, "num_hidden_layers": 2,
                        "ffn_dim": 28, "vocab_size": 50, "max_position_embeddings": 32, "word_embed_proj_dim": 20,
                        "dropout": 0.0}}


def _params(model):
    return sum(p.numel() for p in model.parameters())


def test_default_config_params_exact_on_meta():
    cfg = json.loads(CFG.read_text())
    hf = build({k: v for k, v in cfg.items() if k not in ("architectures", "transformers_version")}, CLS)
    m = from_config(cfg, "p")
    assert m.family.name == "blip-2"
    assert m.params.value == _params(hf)


def test_tiny_model_params_and_forward_flops_over_one_image():
    hf = build(TINY, CLS, device="cpu").eval()
    m = from_config({**TINY, "architectures": [CLS]}, "tiny")
    assert m.params.value == _params(hf)
    Bn, T = 2, NQ + 5
    ids = torch.randint(3, 40, (Bn, T))
    ids[:, :NQ] = IMAGE
    # with grad enabled: under no_grad, FlopCounterMode's module hooks raise on this model
    with FlopCounterMode(display=False) as fc:
        hf(pixel_values=torch.rand(Bn, 3, 8, 8), input_ids=ids, use_cache=False)
    assert m.with_(B=Bn, T=T, N_img=1).quantity("flops.forward").value == fc.get_total_flops()


@pytest.mark.parametrize("change", [{"use_decoder_only_language_model": False},
                                    {"qformer_config": {**TINY["qformer_config"], "num_hidden_layers": 3}}])
def test_what_is_not_modelled_is_refused_in_one_line(change):
    with pytest.raises(SymgptError) as e:
        from_config({**TINY, **change, "architectures": [CLS]}, "x")
    assert "not modelled" in str(e.value) and "\n" not in str(e.value)


# InstructBLIP: the Q-Former's instruction parts are counted and held; images refused
IB = {"model_type": "instructblip", **{k: v for k, v in TINY.items() if k != "model_type"}}


@pytest.mark.parametrize("model_type, cls", [("instructblip", "InstructBlipForConditionalGeneration"),
                                             ("instructblipvideo", "InstructBlipVideoForConditionalGeneration")])
def test_instructblip_default_config_params_exact_on_meta(model_type, cls):
    cfg = json.loads((CFG.parent / f"{model_type}.json").read_text())
    hf = build({k: v for k, v in cfg.items() if k not in ("architectures", "transformers_version")}, cls)
    m = from_config(cfg, "p")
    assert m.family.name == model_type
    assert m.params.value == _params(hf)


def test_instructblip_tiny_params_text_flops_and_images_refused():
    cls = "InstructBlipForConditionalGeneration"
    qf = {**TINY["qformer_config"], "vocab_size": 30, "max_position_embeddings": 10}
    hf = build({**IB, "qformer_config": qf}, cls, device="cpu").eval()
    m = from_config({**IB, "qformer_config": qf, "architectures": [cls]}, "tiny")
    assert m.params.value == _params(hf)
    Bn, T = 2, 7
    ids = torch.randint(3, 40, (Bn, T))
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf.language_model(input_ids=ids, use_cache=False)  # what N_img = 0 costs: the OPT decoder alone
    assert m.with_(B=Bn, T=T).quantity("flops.forward").value == fc.get_total_flops()
    with pytest.raises(SymgptError) as e:
        m.with_(B=Bn, T=T, N_img=1).quantity("flops.forward")
    assert "not modelled" in str(e.value) and "\n" not in str(e.value)

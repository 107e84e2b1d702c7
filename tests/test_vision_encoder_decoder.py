"""VisionEncoderDecoderModel (a ViT encoder, a BERT decoder with cross-attention) against
transformers: parameters on the meta device for the committed default configuration; on a tiny
CPU model the parameters and the forward FLOPs under FlopCounterMode of one pass (pixels through
ViTModel with its pooler, decoder ids through BertLMHeadModel)."""

import json
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLS = "VisionEncoderDecoderModel"
CFG = Path(__file__).parent / "configs" / "vlm_zoo" / "vision-encoder-decoder.json"
ENC = {"model_type": "vit", "hidden_size": 16, "num_attention_heads": 2, "num_hidden_layers": 2,
       "intermediate_size": 20, "image_size": 8, "patch_size": 4, "num_channels": 3}
DEC = {"model_type": "bert", "hidden_size": 16, "num_attention_heads": 2, "num_hidden_layers": 3,
       "intermediate_size": 28, "vocab_size": 50, "max_position_embeddings": 12, "is_decoder": True,
       "add_cross_attention": True, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
TINY = {"model_type": "vision-encoder-decoder", "encoder": ENC, "decoder": DEC}


def _params(model):
    return sum(p.numel() for p in model.parameters())


def test_default_config_params_exact_on_meta():
    cfg = json.loads(CFG.read_text())
    hf = build({k: v for k, v in cfg.items() if k not in ("architectures", "transformers_version")}, CLS)
    m = from_config(cfg, "p")
    assert m.family.name == "vision-encoder-decoder"
    assert m.params.value == _params(hf)


def test_tiny_model_params_and_forward_flops():
    hf = build(TINY, CLS, device="cpu").eval()
    m = from_config({**TINY, "architectures": [CLS]}, "tiny")
    assert m.params.value == _params(hf)
    Bn, T_dec = 2, 5
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(pixel_values=torch.rand(Bn, 3, 8, 8), decoder_input_ids=torch.randint(0, 50, (Bn, T_dec)), use_cache=False)
    assert m.with_(B=Bn, T_dec=T_dec).quantity("flops.forward").value == fc.get_total_flops()


@pytest.mark.parametrize("change", [{"encoder": {**ENC, "model_type": "deit"}},
                                    {"decoder": {**DEC, "hidden_size": 32, "num_attention_heads": 2}}])
def test_what_is_not_modelled_is_refused_in_one_line(change):
    with pytest.raises(SymgptError) as e:
        from_config({**TINY, **change, "architectures": [CLS]}, "x")
    assert "not modelled" in str(e.value) and "\n" not in str(e.value)

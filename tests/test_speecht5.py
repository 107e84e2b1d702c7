"""SpeechT5 (SpeechT5ForSpeechToText) against transformers: parameters on the meta device for the
configuration class's defaults and for tiny configurations of other shapes (a LayerNorm after every
convolution, convolution biases, no SpecAugment vector, an untied head); on tiny CPU models the text
decoder's forward FLOPs under FlopCounterMode given the encoder's output (transformers'
encoder_outputs); audio input (the held speech encoder) refused in one line."""

import json
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers.modeling_outputs import BaseModelOutput

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLS = "SpeechT5ForSpeechToText"
DEFAULTS = json.loads((Path(__file__).parent / "configs" / "vlm_zoo" / "speecht5.json").read_text())
TINY = {"model_type": "speecht5", "vocab_size": 40, "hidden_size": 24, "encoder_layers": 2, "decoder_layers": 3,
        "encoder_attention_heads": 4, "decoder_attention_heads": 2, "encoder_ffn_dim": 40, "decoder_ffn_dim": 36,
        "conv_dim": [8, 8, 8], "conv_kernel": [4, 3, 2], "conv_stride": [2, 2, 2], "num_feat_extract_layers": 3,
        "num_conv_pos_embeddings": 6, "num_conv_pos_embedding_groups": 3, "encoder_max_relative_position": 7}
SHAPES = {"tiny": TINY,
          "layer_norms": {**TINY, "feat_extract_norm": "layer", "conv_bias": True, "mask_time_prob": 0.0,
                          "tie_word_embeddings": False},
          "one_conv": {**TINY, "conv_dim": [8], "conv_kernel": [5], "conv_stride": [5], "num_feat_extract_layers": 1,
                       "feat_extract_norm": "layer", "conv_bias": True, "mask_feature_prob": 0.1}}


def _params(model):
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("cfg", [DEFAULTS, *SHAPES.values()], ids=["defaults", *SHAPES])
def test_params_exact_on_meta(cfg):
    hf = build(cfg, CLS)
    m = from_config({**cfg, "architectures": [CLS]}, "t5")
    assert m.family.name == "speecht5"
    assert m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


@pytest.mark.parametrize("name", ["tiny", "layer_norms"])
def test_decoder_forward_flops_given_the_encoder_output(name):
    cfg = SHAPES[name]
    hf = build(cfg, CLS, device="cpu").eval()
    m = from_config({**cfg, "architectures": [CLS]}, "t5")
    Bn, T_enc, T_dec = 2, 7, 5
    enc = BaseModelOutput(last_hidden_state=torch.rand(Bn, T_enc, 24))
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(encoder_outputs=enc, decoder_input_ids=torch.randint(0, 40, (Bn, T_dec)), use_cache=False)
    assert m.with_(B=Bn, T_enc=T_enc, T_dec=T_dec).quantity("flops.forward").value == fc.get_total_flops()


def test_audio_input_refused_in_one_line():
    m = from_config({**TINY, "architectures": [CLS]}, "t5")
    with pytest.raises(SymgptError, match="audio input is not modelled") as e:
        m.with_(B=1, T_enc=8, T_dec=4, N_aud=1).quantity("params").value
    assert "\n" not in str(e.value)


def test_a_feature_encoder_of_several_widths_refused():
    with pytest.raises(SymgptError, match="conv_dim"):
        from_config({**TINY, "conv_dim": [8, 16, 8], "architectures": [CLS]}, "t5")

"""SpeechEncoderDecoderModel (a wav2vec 2.0 encoder, a BERT decoder) against transformers: parameters
on the meta device for the configuration class's defaults and for tiny configurations of other
shapes (encoder and decoder widths that differ: enc_to_dec_proj; a LayerNorm after every convolution,
convolution biases, the stable-layer-norm layers, no SpecAugment vector); on tiny CPU models the
decoder's forward FLOPs under FlopCounterMode given the encoder's output (transformers'
encoder_outputs); audio input (the held encoder) refused in one line."""

import json
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLS = "SpeechEncoderDecoderModel"
DEFAULTS = json.loads((Path(__file__).parent / "configs" / "vlm_zoo" / "speech-encoder-decoder.json").read_text())
ENC = {"model_type": "wav2vec2", "hidden_size": 24, "num_hidden_layers": 2, "num_attention_heads": 4,
       "intermediate_size": 40, "conv_dim": [8, 8, 8], "conv_kernel": [4, 3, 2], "conv_stride": [2, 2, 2],
       "num_feat_extract_layers": 3, "num_conv_pos_embeddings": 6, "num_conv_pos_embedding_groups": 3}
DEC = {"model_type": "bert", "is_decoder": True, "add_cross_attention": True, "hidden_size": 32,
       "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 36, "vocab_size": 50,
       "max_position_embeddings": 20}
SMALL = {"projected": {"model_type": "speech-encoder-decoder", "encoder": ENC, "decoder": DEC},
         "same_width": {"model_type": "speech-encoder-decoder",
                        "encoder": {**ENC, "hidden_size": 32, "num_conv_pos_embedding_groups": 4, "feat_extract_norm": "layer", "conv_bias": True,
                                    "do_stable_layer_norm": True, "mask_time_prob": 0.0},
                        "decoder": {**DEC, "hidden_act": "relu", "type_vocab_size": 3}}}


def _params(model):
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("cfg", [DEFAULTS, *SMALL.values()], ids=["defaults", *SMALL])
def test_params_exact_on_meta(cfg):
    hf = build(cfg, CLS)
    m = from_config({**cfg, "architectures": [CLS]}, "sed")
    assert m.family.name == "speech-encoder-decoder"
    assert m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


@pytest.mark.parametrize("name", list(SMALL))
def test_decoder_forward_flops_given_the_encoder_output(name):
    cfg = SMALL[name]
    hf = build(cfg, CLS, device="cpu").eval()
    m = from_config({**cfg, "architectures": [CLS]}, "sed")
    Bn, T_enc, T_dec = 2, 7, 5
    enc = (torch.rand(Bn, T_enc, cfg["encoder"]["hidden_size"]),)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(encoder_outputs=enc, decoder_input_ids=torch.randint(0, 50, (Bn, T_dec)), use_cache=False)
    assert m.with_(B=Bn, T_enc=T_enc, T_dec=T_dec).quantity("flops.forward").value == fc.get_total_flops()


def test_audio_input_refused_in_one_line():
    m = from_config({**SMALL["projected"], "architectures": [CLS]}, "sed")
    with pytest.raises(SymgptError, match="audio input is not modelled") as e:
        m.with_(B=1, T_enc=8, T_dec=4, N_aud=1).quantity("params").value
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("change, message", [({"encoder": {**ENC, "model_type": "hubert"}}, "only a wav2vec2"),
                                             ({"encoder": {**ENC, "add_adapter": True}}, "adapters")])
def test_other_encoders_refused(change, message):
    with pytest.raises(SymgptError, match=message):
        from_config({**SMALL["projected"], **change, "architectures": [CLS]}, "sed")

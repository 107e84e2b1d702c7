"""Canary (CanaryForConditionalGeneration) and Cohere ASR (CohereAsrForConditionalGeneration) against
transformers: parameters on the meta device for the configuration classes' defaults and for tiny
configurations of other shapes (grouped key/value heads, a head width of its own, no biases, another
subsampling factor, tied or untied heads); on tiny CPU models the decoder's forward FLOPs under
FlopCounterMode, given the encoder's output (transformers' encoder_outputs argument); audio input
(the held FastConformer encoder) refused in one line."""

import json
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers.models.parakeet.modeling_parakeet import ParakeetEncoderModelOutput

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLS = {"canary": "CanaryForConditionalGeneration", "cohere_asr": "CohereAsrForConditionalGeneration"}
_DIR = Path(__file__).parent / "configs" / "vlm_zoo"
ENC = {"model_type": "parakeet_encoder", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
       "intermediate_size": 40, "subsampling_conv_channels": 6, "num_mel_bins": 20, "subsampling_factor": 4,
       "conv_kernel_size": 5}
DEC = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
       "head_dim": 12, "intermediate_size": 48, "vocab_size": 50, "max_position_embeddings": 40}
SMALL = {
    "canary": {"model_type": "canary", "vocab_size": 50, "encoder_config": ENC,
               "decoder_config": {"model_type": "canary_decoder", **DEC}},
    "canary_plain": {"model_type": "canary", "vocab_size": 50, "tie_word_embeddings": False,
                     "encoder_config": {**ENC, "attention_bias": False, "convolution_bias": False,
                                        "subsampling_factor": 2, "subsampling_conv_kernel_size": 5},
                     "decoder_config": {"model_type": "canary_decoder", **DEC, "num_key_value_heads": 4,
                                        "head_dim": 8, "attention_bias": False, "hidden_act": "gelu"}},
    "cohere_asr": {"model_type": "cohere_asr", **DEC, "encoder_config": {**ENC, "hidden_size": 24}},
    "cohere_asr_tied": {"model_type": "cohere_asr", **DEC, "num_key_value_heads": None, "head_dim": None,
                        "tie_word_embeddings": True, "attention_bias": False,
                        "encoder_config": {**ENC, "subsampling_factor": 8}},
}


def _cls(cfg):
    return CLS[cfg["model_type"]]


def _params(model):
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("cfg", [json.loads((_DIR / f"{t}.json").read_text()) for t in CLS] + list(SMALL.values()),
                         ids=[f"{t}_defaults" for t in CLS] + list(SMALL))
def test_params_exact_on_meta(cfg):
    cfg = {k: v for k, v in cfg.items() if v is not None}
    hf = build(cfg, _cls(cfg))
    m = from_config({**cfg, "architectures": [_cls(cfg)]}, "asr")
    assert m.family.name == cfg["model_type"]
    assert m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


@pytest.mark.parametrize("name", list(SMALL))
def test_decoder_forward_flops_given_the_encoder_output(name):
    cfg = {k: v for k, v in SMALL[name].items() if v is not None}
    hf = build(cfg, _cls(cfg), device="cpu").eval()
    m = from_config({**cfg, "architectures": [_cls(cfg)]}, "asr")
    Bn, T_enc, T_dec = 2, 7, 5
    width = cfg["encoder_config"]["hidden_size"]
    enc = ParakeetEncoderModelOutput(last_hidden_state=torch.rand(Bn, T_enc, width))
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(encoder_outputs=enc, decoder_input_ids=torch.randint(0, 50, (Bn, T_dec)), use_cache=False)
    assert m.with_(B=Bn, T_enc=T_enc, T_dec=T_dec).quantity("flops.forward").value == fc.get_total_flops()


def test_audio_input_refused_in_one_line():
    m = from_config({**SMALL["canary"], "architectures": [CLS["canary"]]}, "asr")
    with pytest.raises(SymgptError, match="audio input is not modelled") as e:
        m.with_(B=1, T_enc=8, T_dec=4, N_aud=1).quantity("params").value
    assert "\n" not in str(e.value)


def test_a_canary_encoder_wider_than_its_decoder_refused():
    cfg = {**SMALL["canary"], "encoder_config": {**ENC, "hidden_size": 24}, "architectures": [CLS["canary"]]}
    with pytest.raises(SymgptError, match="encoder width"):
        from_config(cfg, "asr")

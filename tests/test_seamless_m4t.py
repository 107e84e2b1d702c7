"""SeamlessM4T and SeamlessM4T v2, speech to text (SeamlessM4TForSpeechToText,
SeamlessM4Tv2ForSpeechToText) against transformers: parameters on the meta device for the
configuration classes' defaults and for tiny configurations of other shapes (rotary or relative
positions, no adapter or two adapter layers, other distance tables); on tiny CPU models the text
decoder's forward FLOPs under FlopCounterMode given the encoder's output (transformers'
encoder_outputs); audio input (the held Conformer encoder) refused in one line."""

import json
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers.modeling_outputs import BaseModelOutput

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLS = {"seamless_m4t": "SeamlessM4TForSpeechToText", "seamless_m4t_v2": "SeamlessM4Tv2ForSpeechToText"}
_DIR = Path(__file__).parent / "configs" / "vlm_zoo"
TINY = {"vocab_size": 60, "hidden_size": 32, "decoder_layers": 2, "decoder_attention_heads": 4, "decoder_ffn_dim": 48,
        "speech_encoder_layers": 2, "speech_encoder_attention_heads": 2, "speech_encoder_intermediate_size": 40,
        "feature_projection_input_dim": 12, "conv_depthwise_kernel_size": 5, "adaptor_kernel_size": 4,
        "adaptor_stride": 4, "t2u_vocab_size": 20, "unit_hifi_gan_vocab_size": 20}
SMALL = {"v1_relative": {"model_type": "seamless_m4t", **TINY, "num_adapter_layers": 2},
         "v1_rotary": {"model_type": "seamless_m4t", **TINY, "position_embeddings_type": "rotary",
                       "add_adapter": False, "scale_embedding": False, "activation_function": "gelu"},
         "v2": {"model_type": "seamless_m4t_v2", **TINY, "left_max_position_embeddings": 5,
                "right_max_position_embeddings": 3}}


def _cls(cfg):
    return CLS[cfg["model_type"]]


def _params(model):
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("cfg", [json.loads((_DIR / f"{t}.json").read_text()) for t in CLS] + list(SMALL.values()),
                         ids=[f"{t}_defaults" for t in CLS] + list(SMALL))
def test_params_exact_on_meta(cfg):
    hf = build(cfg, _cls(cfg))
    m = from_config({**cfg, "architectures": [_cls(cfg)]}, "m4t")
    assert m.family.name == cfg["model_type"]
    assert m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


@pytest.mark.parametrize("name", list(SMALL))
def test_decoder_forward_flops_given_the_encoder_output(name):
    cfg = SMALL[name]
    hf = build(cfg, _cls(cfg), device="cpu").eval()
    m = from_config({**cfg, "architectures": [_cls(cfg)]}, "m4t")
    Bn, T_enc, T_dec = 2, 7, 5
    enc = BaseModelOutput(last_hidden_state=torch.rand(Bn, T_enc, 32))
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(encoder_outputs=enc, decoder_input_ids=torch.randint(4, 60, (Bn, T_dec)), use_cache=False)
    assert m.with_(B=Bn, T_enc=T_enc, T_dec=T_dec).quantity("flops.forward").value == fc.get_total_flops()


def test_audio_input_refused_in_one_line():
    m = from_config({**SMALL["v2"], "architectures": [CLS["seamless_m4t_v2"]]}, "m4t")
    with pytest.raises(SymgptError, match="audio input is not modelled") as e:
        m.with_(B=1, T_enc=8, T_dec=4, N_aud=1).quantity("params").value
    assert "\n" not in str(e.value)


def test_untied_tables_refused():
    with pytest.raises(SymgptError, match="untied"):
        from_config({**SMALL["v2"], "tie_word_embeddings": False, "architectures": [CLS["seamless_m4t_v2"]]}, "m4t")

"""Granite Speech (GraniteSpeechForConditionalGeneration, GraniteSpeechPlusForConditionalGeneration)
against transformers: parameters on the meta device for the configuration class's defaults and a
small configuration of other sizes; audio input refused in one line where the Q-Former's
encoder_hidden_size is not the encoder's hidden_dim (the classes' defaults: 1408 against 1024; the
tower is then held). Audio FLOPs: test_granite_speech_audio.py."""

import json
from pathlib import Path

import pytest

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLASSES = {"granite_speech": "GraniteSpeechForConditionalGeneration",
           "granite_speech_plus": "GraniteSpeechPlusForConditionalGeneration"}
SMALL = {"window_size": 8, "downsample_rate": 3, "tie_word_embeddings": False,
         "encoder_config": {"hidden_dim": 24, "num_layers": 2, "num_heads": 2, "dim_head": 8, "input_dim": 20,
                            "feedforward_mult": 3, "max_pos_emb": 16, "context_size": 12, "conv_expansion_factor": 3,
                            "conv_kernel_size": 5, "output_dim": 7},
         "projector_config": {"model_type": "blip_2_qformer", "hidden_size": 32, "intermediate_size": 40,
                              "num_hidden_layers": 5, "num_attention_heads": 4, "cross_attention_frequency": 3,
                              "encoder_hidden_size": 24},
         "text_config": {"model_type": "granite", "vocab_size": 64, "hidden_size": 40, "intermediate_size": 56,
                         "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2}}


def _params(model):
    return sum(p.numel() for p in model.parameters())


def _default(mt):
    return json.loads((Path(__file__).parent / "configs" / "vlm_zoo" / f"{mt}.json").read_text())


@pytest.mark.parametrize("mt", sorted(CLASSES))
@pytest.mark.parametrize("small", [False, True], ids=["defaults", "small"])
def test_params_exact_on_meta(mt, small):
    cfg = {**SMALL, "model_type": mt} if small else _default(mt)
    if small:
        cfg["encoder_config"] = {**SMALL["encoder_config"], "model_type": f"{mt}_encoder"}
    hf = build(cfg, CLASSES[mt])
    m = from_config({**cfg, "architectures": [CLASSES[mt]]}, "g")
    assert m.family.name == mt
    assert m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


def test_audio_input_refused_in_one_line_where_widths_differ():
    m = from_config({**_default("granite_speech"), "architectures": [CLASSES["granite_speech"]]}, "g")
    assert any("differs from the encoder's hidden_dim" in n for n in m.notes), m.notes
    with pytest.raises(SymgptError, match="cannot run this Granite Speech config on audio") as e:
        m.with_(B=1, T=8, N_aud=1).quantity("params").value
    assert "\n" not in str(e.value)

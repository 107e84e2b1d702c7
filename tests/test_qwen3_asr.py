"""Qwen3-ASR (Qwen3ASRForConditionalGeneration) against transformers: parameters on the meta device
for the configuration class's defaults and a small configuration of other sizes; audio input where
the projector's output_dim is not the text width (the class's defaults: 3584 against 2048, which
transformers' masked_scatter cannot merge) refused in one line. Audio FLOPs: test_qwen3_asr_audio.py."""

import json
from pathlib import Path

import pytest

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLS = "Qwen3ASRForConditionalGeneration"
SMALL = {"model_type": "qwen3_asr",
         "audio_config": {"model_type": "qwen3_asr_encoder", "d_model": 32, "encoder_layers": 2,
                          "encoder_attention_heads": 4, "encoder_ffn_dim": 48, "num_mel_bins": 80,
                          "downsample_hidden_size": 12, "output_dim": 40},
         "text_config": {"model_type": "qwen3", "vocab_size": 64, "hidden_size": 40, "intermediate_size": 56,
                         "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                         "head_dim": 16, "tie_word_embeddings": False}}


def _params(model):
    return sum(p.numel() for p in model.parameters())


#: Qwen3ASRConfig's defaults, as config.to_json_string(use_diff=False) writes them
DEFAULTS = json.loads((Path(__file__).parent / "configs" / "vlm_zoo" / "qwen3_asr.json").read_text())


@pytest.mark.parametrize("cfg", [DEFAULTS, SMALL], ids=["defaults", "small"])
def test_params_exact_on_meta(cfg):
    hf = build(cfg, CLS)
    m = from_config({**cfg, "architectures": [CLS]}, "q")
    assert m.family.name == "qwen3_asr"
    assert m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


def test_audio_input_refused_in_one_line_where_widths_differ():
    m = from_config({**DEFAULTS, "architectures": [CLS]}, "q")
    assert any("differs from the text hidden_size" in n for n in m.notes), m.notes
    with pytest.raises(SymgptError, match="output_dim differs from the text hidden_size") as e:
        m.with_(B=1, T=800, N_aud=1).quantity("params").value
    assert "\n" not in str(e.value)

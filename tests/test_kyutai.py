"""Kyutai speech-to-text (KyutaiSpeechToTextForConditionalGeneration) against transformers: parameters on
the meta device for the configuration class's defaults and small configurations of other sizes (other
Mimi codecs: ratios, residual blocks with shortcuts, no quantizer projections, a given frame rate with
no resampling convs); the forward FLOPs over text and codebook tokens under FlopCounterMode on a tiny
CPU model; audio input (the held codec) and a tied head refused in one line."""

import json
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLS = "KyutaiSpeechToTextForConditionalGeneration"
CODEC = {"model_type": "mimi", "hidden_size": 16, "num_filters": 4, "upsampling_ratios": [2, 3], "num_hidden_layers": 2,
         "num_attention_heads": 2, "num_key_value_heads": 2, "intermediate_size": 24, "upsample_groups": 4,
         "vector_quantization_hidden_dimension": 8, "codebook_dim": 8, "num_quantizers": 4, "codebook_size": 16,
         "sampling_rate": 600}
SMALL = {"model_type": "kyutai_speech_to_text", "vocab_size": 50, "hidden_size": 32, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "ffn_dim": 48, "num_codebooks": 3,
         "codebook_vocab_size": 17, "audio_pad_token_id": 50 + 3 * 17, "audio_bos_token_id": 16, "pad_token_id": 3,
         "bos_token_id": 4, "codec_config": CODEC, "sliding_window": 16, "max_position_embeddings": 64}
OTHER = {**SMALL, "codec_config": {**CODEC, "num_residual_layers": 2, "use_conv_shortcut": True, "compress": 4,
                                   "residual_kernel_size": 5, "vector_quantization_hidden_dimension": 16,
                                   "frame_rate": 100.0, "attention_bias": True, "audio_channels": 2}}

#: KyutaiSpeechToTextConfig's defaults, as config.to_json_string(use_diff=False) writes them
DEFAULTS = json.loads((Path(__file__).parent / "configs" / "vlm_zoo" / "kyutai_speech_to_text.json").read_text())


def _params(model):
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("cfg", [DEFAULTS, SMALL, OTHER], ids=["defaults", "small", "other-codec"])
def test_params_exact_on_meta(cfg):
    hf = build(cfg, CLS)
    m = from_config({**cfg, "architectures": [CLS]}, "k")
    assert m.family.name == "kyutai_speech_to_text"
    assert m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


def test_forward_flops_over_text_and_codebook_tokens():
    hf = build(SMALL, CLS, device="cpu").eval()
    m = from_config({**SMALL, "architectures": [CLS]}, "k")
    T = 9
    ids = torch.cat([torch.randint(0, 50, (2, T, 1)), torch.randint(0, 17, (2, T, 3))], dim=-1)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(input_ids=ids, use_cache=False)
    assert m.with_(B=2, T=T).quantity("flops.forward").value == fc.get_total_flops()


def test_audio_input_long_sequences_and_a_tied_head_refused_in_one_line():
    m = from_config({**SMALL, "architectures": [CLS]}, "k")
    with pytest.raises(SymgptError, match="audio input is not modelled") as e:
        m.with_(B=1, T=8, N_aud=1).quantity("params").value
    assert "\n" not in str(e.value)
    with pytest.raises(SymgptError, match="sliding_window") as e:
        m.with_(B=1, T=17).quantity("flops.forward").value
    assert "\n" not in str(e.value)
    with pytest.raises(SymgptError, match="tied lm_head") as e:
        from_config({**SMALL, "tie_word_embeddings": True, "architectures": [CLS]}, "k")
    assert "\n" not in str(e.value)

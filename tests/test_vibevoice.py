"""VibeVoice-ASR and VibeVoice (VibeVoiceAsrForConditionalGeneration, VibeVoiceForConditionalGeneration)
against transformers: parameters on the meta device for the configuration classes' defaults and for
small configurations of other sizes (other tokenizer depths, ratios, widths and kernels; tied and untied
heads; a diffusion FFN with biases); the forward over token ids under FlopCounterMode on tiny CPU models;
audio input (the held towers) refused in one line."""

import json
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

ASR, TTS = "VibeVoiceAsrForConditionalGeneration", "VibeVoiceForConditionalGeneration"
TEXT = {"model_type": "qwen2", "vocab_size": 64, "hidden_size": 40, "intermediate_size": 56, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "tie_word_embeddings": False}


def _tok(hidden, **more):
    return {"model_type": "vibevoice_acoustic_tokenizer_encoder", "channels": 1, "num_filters": 4, "kernel_size": 5,
            "ffn_expansion": 3, "hidden_size": hidden, "depths": [1, 2, 0], "downsampling_ratios": [2, 3], **more}


SMALL_ASR = {"model_type": "vibevoice_asr", "text_config": TEXT, "acoustic_tokenizer_encoder_config": _tok(6),
             "semantic_tokenizer_encoder_config": _tok(10, num_filters=6, kernel_size=3, ffn_expansion=2)}
TIED_ASR = {**SMALL_ASR, "text_config": {**TEXT, "tie_word_embeddings": True}}
SMALL_TTS = {"model_type": "vibevoice", "text_config": TEXT,
             "audio_config": {**_tok(6), "model_type": "vibevoice_acoustic_tokenizer", "depths": [2, 1, 3]},
             "semantic_model_config": _tok(10, num_filters=6, kernel_size=3),
             "diffusion_head_config": {"model_type": "vibevoice_diffusion", "intermediate_size": 24,
                                       "num_hidden_layers": 3, "frequency_embedding_size": 8, "mlp_bias": True}}
TIED_TTS = {**SMALL_TTS, "text_config": {**TEXT, "tie_word_embeddings": True}}

CONFIGS = Path(__file__).parent / "configs" / "vlm_zoo"
#: the configuration classes' defaults, as config.to_json_string(use_diff=False) writes them
DEFAULT_ASR = json.loads((CONFIGS / "vibevoice_asr.json").read_text())
DEFAULT_TTS = json.loads((CONFIGS / "vibevoice.json").read_text())


def _params(model):
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("cfg,cls", [(DEFAULT_ASR, ASR), (SMALL_ASR, ASR), (TIED_ASR, ASR),
                                     (DEFAULT_TTS, TTS), (SMALL_TTS, TTS), (TIED_TTS, TTS)],
                         ids=["asr-defaults", "asr-small", "asr-tied", "tts-defaults", "tts-small", "tts-tied"])
def test_params_exact_on_meta(cfg, cls):
    hf = build(cfg, cls)
    m = from_config({**cfg, "architectures": [cls]}, "v")
    assert m.family.name == cfg["model_type"]
    assert m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


@pytest.mark.parametrize("cfg,cls", [(SMALL_ASR, ASR), (SMALL_TTS, TTS)], ids=["asr", "tts"])
def test_forward_flops_over_token_ids(cfg, cls):
    hf = build(cfg, cls, device="cpu").eval()
    m = from_config({**cfg, "architectures": [cls]}, "v")
    ids = torch.randint(0, 64, (2, 7))
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(input_ids=ids, use_cache=False)
    assert m.with_(B=2, T=7).quantity("flops.forward").value == fc.get_total_flops()


@pytest.mark.parametrize("cfg,cls", [(SMALL_ASR, ASR), (SMALL_TTS, TTS)], ids=["asr", "tts"])
def test_audio_input_refused_in_one_line(cfg, cls):
    m = from_config({**cfg, "architectures": [cls]}, "v")
    with pytest.raises(SymgptError, match="audio input is not modelled") as e:
        m.with_(B=1, T=8, N_aud=1).quantity("params").value
    assert "\n" not in str(e.value)

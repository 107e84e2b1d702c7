"""The Whisper presets (whisper-tiny ... whisper-large-v3-turbo) against their config files and checkpoints.

Oracles: each preset equals what symgpt reads from the checkpoint's config file (family, flags,
sizes; tests/configs/README.md names where each file came from); its parameter count equals
``sum(p.numel() for p in model.parameters())`` of transformers' WhisperForConditionalGeneration
built from that file on the meta device, and the checkpoint's own total on the Hugging Face Hub
(safetensors, as public model inventories print it). The audio length's closed form (100 log-mel
frames a second, halved by conv2's stride) is checked against transformers' feature extractor and
the encoder's two convolutions run on 30 s of frames.
"""

import json
from pathlib import Path

import pytest
import torch

import symgpt
from oracles.hf_encdec import build
from symgpt.model.model import from_config

CONFIGS = Path(__file__).parent / "configs"

#: preset -> (config file, the checkpoint's safetensors total on the Hub)
#: totals as public model inventories print them ("openai/whisper-large-v3-turbo ... 808878080 params",
#: "{"model_config": "openai/whisper-tiny", "params": 37760640}", "large3: ... hub:1543490560")
PRESETS = {
    "whisper-tiny": ("assembled/whisper-tiny.json", 37_760_640),
    "whisper-base": ("assembled/whisper-base.json", 72_593_920),
    "whisper-small": ("speech/whisper-small.json", 241_734_912),
    "whisper-medium": ("assembled/whisper-medium.json", 763_857_920),
    "whisper-large-v3": ("speech/whisper-large-v3.json", 1_543_490_560),
    "whisper-large-v3-turbo": ("published/whisper-large-v3-turbo.json", 808_878_080),
}


def _cfg(preset):
    return json.loads((CONFIGS / PRESETS[preset][0]).read_text())


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_preset_is_its_config_file(preset):
    p, c = symgpt.load(preset), from_config(_cfg(preset), preset)
    assert p.family.name == c.family.name == "whisper"
    assert dict(p.sizes) == dict(c.sizes) and p.flags == c.flags


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_preset_counts_what_transformers_and_the_checkpoint_count(preset):
    n = sum(p.numel() for p in build(_cfg(preset), "WhisperForConditionalGeneration").parameters())
    assert n == PRESETS[preset][1]
    assert symgpt.load(preset).params.value == n
    assert f"{n:,}" in symgpt.families.presets()[preset].note


def test_thirty_seconds_are_3000_frames_and_1500_positions():
    from transformers import WhisperFeatureExtractor

    from symgpt.families.blocks.whisper import FRAMES_PER_SECOND, PADDED_SECONDS, encoder_positions

    fe = WhisperFeatureExtractor()
    feats = fe([0.0] * (16000 * 30), sampling_rate=16000, return_tensors="pt")["input_features"]
    assert feats.shape[-1] == FRAMES_PER_SECOND * PADDED_SECONDS == 3000
    tiny = {"model_type": "whisper", "vocab_size": 97, "d_model": 16, "encoder_layers": 1, "decoder_layers": 1,
            "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_ffn_dim": 32,
            "decoder_ffn_dim": 32, "num_mel_bins": 80, "max_source_positions": 1500, "pad_token_id": 1,
            "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 2}
    enc = build(tiny, "WhisperForConditionalGeneration", device="cpu").model.encoder
    with torch.no_grad():
        out = enc.conv2(enc.conv1(feats))  # kernel 3, strides 1 and 2, padding 1
    assert out.shape[-1] == encoder_positions(30) == 1500
    assert symgpt.load("whisper-small").sizes["T_enc"] == 1500

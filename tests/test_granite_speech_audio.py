"""Granite Speech's Conformer encoder and windowed Q-Former priced per clip, against transformers:
the forward FLOPs of a prompt with one 30-s clip (1500 stacked log-mel rows) under FlopCounterMode
on tiny CPU models of GraniteSpeechForConditionalGeneration (and the Plus class), the text-only
forward alike, and the audio tokens transformers merges (the projector's output rows, and
GraniteSpeechFeatureExtractor's count for 30 s of samples); attention blocks and projector windows
that divide the clip or leave a padded remainder, odd and even encoder depths, cross-attention
every layer or every third."""

import math

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLASSES = {"granite_speech": "GraniteSpeechForConditionalGeneration",
           "granite_speech_plus": "GraniteSpeechPlusForConditionalGeneration"}
ROWS = 1500  # 30 s: 3000 log-mel frames (hop 160) stacked in pairs


def _tiny(mt="granite_speech", layers=3, context=200, window=15, rate=5, q_layers=3, every=2):
    return {"model_type": mt, "audio_token_id": 5, "window_size": window, "downsample_rate": rate,
            "tie_word_embeddings": False, "has_lora_adapter": False,
            "encoder_config": {"model_type": f"{mt}_encoder", "hidden_dim": 16, "num_layers": layers, "num_heads": 2,
                               "dim_head": 4, "input_dim": 6, "feedforward_mult": 2, "max_pos_emb": 200,
                               "context_size": context, "conv_expansion_factor": 2, "conv_kernel_size": 5,
                               "output_dim": 7, "dropout": 0.0},
            "projector_config": {"model_type": "blip_2_qformer", "hidden_size": 12, "intermediate_size": 20,
                                 "num_hidden_layers": q_layers, "num_attention_heads": 2,
                                 "cross_attention_frequency": every, "encoder_hidden_size": 16},
            "text_config": {"model_type": "granite", "vocab_size": 64, "hidden_size": 32, "intermediate_size": 40,
                            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                            "max_position_embeddings": 1024}}


def _flops(hf, ids, **audio):
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(input_ids=ids, use_cache=False, **audio)
    return fc.get_total_flops()


@pytest.mark.parametrize("kw", [{}, {"layers": 4, "context": 150, "every": 1},
                                {"context": 100, "window": 14, "rate": 7, "q_layers": 4, "every": 3},
                                {"mt": "granite_speech_plus", "layers": 2}],
                         ids=["defaults_padded_blocks", "blocks_divide", "windows_padded", "plus"])
def test_one_clip_forward_flops_and_tokens(kw):
    cfg = _tiny(**kw)
    cls = CLASSES[cfg["model_type"]]
    hf = build(cfg, cls, device="cpu").eval()
    m = from_config({**cfg, "architectures": [cls]}, "tiny")
    assert m.params.value == sum(p.numel() for p in hf.parameters())
    feats = torch.rand(1, ROWS, 6)
    with torch.no_grad():
        n = hf.model.get_audio_features(feats).pooler_output.shape[1]  # the rows transformers merges
    window, rate = cfg["window_size"], cfg["downsample_rate"]
    assert n == math.ceil(((480000 // 160 + 1) // 2) / window) * (window // rate)  # the feature extractor's count
    text = 6
    ids = torch.cat([torch.full((1, n), 5), torch.randint(6, 64, (1, text))], dim=1)
    assert m.with_(B=1, T=n + text, N_aud=1).quantity("flops.forward").value == _flops(hf, ids, input_features=feats)
    assert m.with_(B=1, T=n + text).quantity("flops.forward").value == _flops(hf, ids)
    assert any(f"{n:,} audio tokens a clip" in note for note in m.notes), m.notes


def test_the_feature_extractors_count_for_30_seconds():
    from transformers.models.granite_speech.feature_extraction_granite_speech import GraniteSpeechFeatureExtractor

    fe = GraniteSpeechFeatureExtractor.__new__(GraniteSpeechFeatureExtractor)
    fe.melspec_kwargs, fe.projector_window_size, fe.projector_downsample_rate = {"hop_length": 160}, 15, 5
    n = fe._get_num_audio_features([30 * 16000])[0]
    m = from_config({**_tiny(), "architectures": [CLASSES["granite_speech"]]}, "tiny")
    assert any(f"{n:,} audio tokens a clip" in note for note in m.notes), m.notes


def test_two_clips_cost_twice_one_beyond_the_text_and_the_queries():
    m = from_config({**_tiny(), "architectures": [CLASSES["granite_speech"]]}, "tiny")
    f = [m.with_(B=1, T=700, N_aud=n).quantity("flops.forward").value for n in (0, 1, 2)]
    assert f[1] > f[0]
    # the first self-attention of the single set of queries runs once a forward, however many clips
    assert f[2] - f[1] < f[1] - f[0]


def test_too_short_a_sequence_and_uneven_windows_are_refused():
    m = from_config({**_tiny(), "architectures": [CLASSES["granite_speech"]]}, "tiny")
    with pytest.raises(SymgptError, match="audio tokens") as e:
        m.with_(B=1, T=100, N_aud=1).quantity("flops.forward").value
    assert "\n" not in str(e.value)
    m = from_config({**_tiny(window=16, rate=5), "architectures": [CLASSES["granite_speech"]]}, "tiny")
    assert any("not a multiple of downsample_rate" in note for note in m.notes), m.notes
    with pytest.raises(SymgptError, match="cannot run this Granite Speech config on audio") as e:
        m.with_(B=1, T=700, N_aud=1).quantity("flops.forward").value
    assert "\n" not in str(e.value)


def test_text_only_costs_what_the_granite_decoder_alone_costs():
    cfg = _tiny()
    m = from_config({**cfg, "architectures": [CLASSES["granite_speech"]]}, "tiny").with_(B=2, T=64)
    text = from_config({**cfg["text_config"], "architectures": ["GraniteForCausalLM"]}, "text").with_(B=2, T=64)
    for q in ("flops.forward", "flops.train", "memory.activations"):
        assert m.quantity(q).value == text.quantity(q).value, q

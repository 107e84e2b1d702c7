"""Qwen3-ASR's audio encoder priced per clip, against transformers: the forward FLOPs of a prompt
with one 30-s clip under FlopCounterMode on tiny CPU models of Qwen3ASRForConditionalGeneration
(minus nothing: the text-only forward is checked alike), the audio tokens the encoder hands the
decoder (its output rows, and Qwen3ASRProcessor's placeholder count), and windows that divide
the clip, leave a remainder, or exceed it."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLS = "Qwen3ASRForConditionalGeneration"
FRAMES = 3000  # 30 s at 100 log-mel frames a second (Qwen3ASRFeatureExtractor, padding="max_length")


def _tiny(mel=10, n_window=50, infer=800, act="gelu"):
    return {"model_type": "qwen3_asr", "audio_token_id": 5,
            "audio_config": {"model_type": "qwen3_asr_encoder", "d_model": 16, "encoder_layers": 2,
                             "encoder_attention_heads": 2, "encoder_ffn_dim": 24, "num_mel_bins": mel,
                             "downsample_hidden_size": 4, "output_dim": 32, "n_window": n_window,
                             "n_window_infer": infer, "activation_function": act},
            "text_config": {"model_type": "qwen3", "vocab_size": 64, "hidden_size": 32, "intermediate_size": 40,
                            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                            "head_dim": 8, "max_position_embeddings": 1024, "tie_word_embeddings": False}}


def _flops(hf, ids, **audio):
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(input_ids=ids, use_cache=False, **audio)
    return fc.get_total_flops()


@pytest.mark.parametrize("kw", [{}, {"mel": 9, "infer": 1100, "act": "silu"}, {"infer": 4000}, {"infer": 300},
                                {"infer": 750}],
                         ids=["defaults_windows", "odd_mel_rest", "one_window", "windows_divide", "infer_floored"])
def test_one_clip_forward_flops_and_tokens(kw):
    cfg = _tiny(**kw)
    hf = build(cfg, CLS, device="cpu").eval()
    m = from_config({**cfg, "architectures": [CLS]}, "tiny")
    assert m.params.value == sum(p.numel() for p in hf.parameters())
    feats, mask = torch.rand(1, cfg["audio_config"]["num_mel_bins"], FRAMES), torch.ones(1, FRAMES, dtype=torch.long)
    with torch.no_grad():
        n = hf.model.get_audio_features(feats, mask).pooler_output.shape[0]  # the rows transformers merges
    from transformers.models.qwen3_asr.processing_qwen3_asr import Qwen3ASRProcessor

    placeholders = Qwen3ASRProcessor._get_audio_token_length(None, torch.tensor([FRAMES]),
                                                            cfg["audio_config"]["n_window"])
    assert int(placeholders[0]) == n
    text = 6
    ids = torch.cat([torch.full((1, n), 5), torch.randint(6, 64, (1, text))], dim=1)
    with_audio = _flops(hf, ids, input_features=feats, input_features_mask=mask)
    text_only = _flops(hf, ids)
    one = m.with_(B=1, T=n + text, N_aud=1)
    assert one.quantity("flops.forward").value == with_audio
    assert m.with_(B=1, T=n + text).quantity("flops.forward").value == text_only
    assert any(f"{n:,} audio tokens a clip" in note for note in m.notes), m.notes


def test_too_short_a_sequence_for_the_clip_is_refused():
    m = from_config({**_tiny(), "architectures": [CLS]}, "tiny")
    with pytest.raises(SymgptError, match="audio tokens") as e:
        m.with_(B=1, T=100, N_aud=1).quantity("flops.forward").value
    assert "\n" not in str(e.value)


def test_two_clips_cost_twice_one_clip_beyond_the_text():
    m = from_config({**_tiny(), "architectures": [CLS]}, "tiny")
    f = [m.with_(B=1, T=800, N_aud=n).quantity("flops.forward").value for n in (0, 1, 2)]
    assert f[2] - f[0] == 2 * (f[1] - f[0]) and f[1] > f[0]


@pytest.mark.parametrize("kw,match", [({"n_window": 70, "infer": 700}, "a multiple of 2·n_window"),
                                     ({"infer": 60}, "at least 2·n_window"),
                                     ({"n_window": 25, "infer": 300}, "counts 13")])
def test_chunks_and_windows_transformers_cannot_run_are_refused(kw, match):
    with pytest.raises(SymgptError, match=match) as e:
        from_config({**_tiny(**kw), "architectures": [CLS]}, "tiny")
    assert "\n" not in str(e.value)


def test_text_only_costs_what_the_qwen3_decoder_alone_costs():
    cfg = _tiny()
    m = from_config({**cfg, "architectures": [CLS]}, "tiny").with_(B=2, T=64)
    text = from_config({**cfg["text_config"], "architectures": ["Qwen3ForCausalLM"]}, "text").with_(B=2, T=64)
    for q in ("flops.forward", "flops.train", "memory.activations"):
        assert m.quantity(q).value == text.quantity(q).value, q

"""Whisper (WhisperForConditionalGeneration, WhisperModel) against transformers: parameters on
the meta device for the configuration class's defaults and public configs, forward FLOPs under
FlopCounterMode on tiny CPU models (encoder over padded mel frames plus one decoder pass), the
feature extractor's frames per second, and the KV cache against EncoderDecoderCache."""

import json
from pathlib import Path

import pytest
import sympy
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.core.symbols import B, L, L_dec, N_mel, T_dec, T_enc, V, d, d_ff
from symgpt.model.model import from_config

CONFIGS = Path(__file__).parent / "configs" / "speech"
TINY = {"model_type": "whisper", "vocab_size": 97, "d_model": 32, "encoder_layers": 2, "decoder_layers": 3,
        "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 40, "decoder_ffn_dim": 40,
        "num_mel_bins": 12, "max_source_positions": 10, "max_target_positions": 16, "pad_token_id": 1,
        "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 2}


def _params(model):
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("cls", ["WhisperForConditionalGeneration", "WhisperModel"])
def test_default_config_params_exact_on_meta(cls):
    hf = build({"model_type": "whisper"}, cls)
    m = from_config({"model_type": "whisper", "architectures": [cls]}, "whisper")
    assert m.family.name == "whisper"
    assert m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


@pytest.mark.parametrize("name", ["whisper-small", "whisper-large-v3"])
def test_public_configs_params_exact_on_meta(name):
    cfg = json.loads((CONFIGS / f"{name}.json").read_text())
    hf = build(cfg, "WhisperForConditionalGeneration")
    m = from_config(cfg, name)
    assert m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


def test_the_frozen_position_table_is_a_parameter_of_the_checkpoint():
    hf = build(TINY, "WhisperForConditionalGeneration", device="cpu")
    table = hf.model.encoder.embed_positions.weight
    assert not table.requires_grad and table.shape == (10, 32)
    assert "model.encoder.embed_positions.weight" in hf.state_dict()
    m = from_config({**TINY, "architectures": ["WhisperForConditionalGeneration"]}, "tiny")
    assert m.params.value == _params(hf)  # counted, as model.parameters() and the checkpoint hold it
    assert any("frozen parameter" in n for n in m.notes)


@pytest.mark.parametrize("cls,T", [("WhisperForConditionalGeneration", 5), ("WhisperForConditionalGeneration", 9),
                                   ("WhisperModel", 7)])
def test_forward_flops_equal_flop_counter_on_a_tiny_cpu_model(cls, T):
    hf = build(TINY, cls, device="cpu")
    Bn = 2
    feats = torch.rand(Bn, 12, 20)  # padded: 2 · max_source_positions frames
    ids = torch.randint(0, 97, (Bn, T))
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        hf(input_features=feats, decoder_input_ids=ids, use_cache=False)
    m = from_config({**TINY, "architectures": [cls]}, "tiny")
    assert m.sizes["T_enc"] == 10  # padded to max_source_positions
    assert m.with_(B=Bn, T_dec=T).quantity("flops.forward").value == fc.get_total_flops()


def test_forward_flops_closed_form():
    m = from_config({"model_type": "whisper", "architectures": ["WhisperForConditionalGeneration"]}, "default")
    # hand-worked: conv1 2·3·N_mel·d per output frame over 2·T_enc frames, conv2 2·3·d² over T_enc;
    # the encoder layer 8·T_enc·d² (Q, K, V, O) + 4·T_enc²·d (scores, values) + 4·T_enc·d·d_ff;
    # the decoder layer's self-attention 8·T_dec·d² + 4·T_dec²·d, cross-attention 4·T_dec·d² (Q, O) +
    # 4·T_enc·d² (K, V of the encoder's output) + 4·T_dec·T_enc·d, MLP 4·T_dec·d·d_ff; proj_out 2·T_dec·d·V
    want = B * (12 * N_mel * d * T_enc + 6 * T_enc * d ** 2
                + L * (8 * T_enc * d ** 2 + 4 * T_enc ** 2 * d + 4 * T_enc * d * d_ff)
                + L_dec * (12 * T_dec * d ** 2 + 4 * T_dec ** 2 * d + 4 * T_enc * d ** 2 + 4 * T_dec * T_enc * d
                           + 4 * T_dec * d * d_ff)
                + 2 * T_dec * d * V)
    formula = m.quantity("flops.forward").expr
    assert sympy.expand(formula - want) == 0, formula


def test_feature_extractor_frames_per_second_and_padding():
    from transformers import WhisperFeatureExtractor

    from symgpt.families.blocks.whisper import FRAMES_PER_SECOND, encoder_positions

    fe = WhisperFeatureExtractor()
    for seconds in (1, 7):
        audio = [0.0] * (16000 * seconds)
        raw = fe(audio, sampling_rate=16000, padding="do_not_pad", return_tensors="np")["input_features"]
        assert raw.shape[-1] == FRAMES_PER_SECOND * seconds
        assert 2 * encoder_positions(seconds) == raw.shape[-1]
        padded = fe(audio, sampling_rate=16000, return_tensors="np")["input_features"]
        assert padded.shape[-2:] == (80, 3000)  # every input padded to 30 s


def test_kv_cache_equals_encoder_decoder_cache_after_a_short_generation():
    hf = build(TINY, "WhisperForConditionalGeneration", device="cpu").eval()
    Bn, steps = 2, 4
    feats = torch.rand(Bn, 12, 20)
    ids = torch.full((Bn, 1), 2)
    with torch.no_grad():
        out = hf(input_features=feats, decoder_input_ids=ids, use_cache=True)
        cache = out.past_key_values
        for _ in range(steps - 1):
            ids = out.logits[:, -1:].argmax(-1)
            out = hf(encoder_outputs=(out.encoder_last_hidden_state,), decoder_input_ids=ids,
                     past_key_values=cache, use_cache=True)
            cache = out.past_key_values

    def nbytes(c):
        return sum(t.numel() * t.element_size() for layer in c.layers for t in (layer.keys, layer.values))

    total = nbytes(cache.self_attention_cache) + nbytes(cache.cross_attention_cache)
    m = from_config({**TINY, "architectures": ["WhisperForConditionalGeneration"]}, "tiny")
    got = m.with_(B=Bn, T_dec=steps).quantity("memory.kv_cache", precision="fp32").value
    assert got == total
    assert nbytes(cache.cross_attention_cache) == 3 * 2 * Bn * 10 * 32 * 4  # L_dec · (K, V) · B · T_src · d


def test_a_config_naming_no_class_is_still_read_as_the_decoder_alone():
    # as before the encoder--decoder was modelled: WhisperForCausalLM's count
    hf = build({"model_type": "whisper"}, "WhisperForCausalLM")
    m = from_config({"model_type": "whisper"}, "whisper")
    assert m.family.name == "seq2seq_decoder" and m.params.value == _params(hf)

"""The decoder of an encoder--decoder run alone as a causal LM (transformers' ``BartForCausalLM``
and its kin), against transformers itself.

Oracles: the zoo table (``tests/oracles/zoo/transformers-5.24.0.json``: each class built from its
configuration class's defaults, ``sum(p.numel() for p in model.parameters())``), and small
non-default configurations built with transformers on CPU: the parameter count, and
``FlopCounterMode``'s forward and forward + backward FLOPs (token ids alone, as a causal LM runs:
the cross-attention each layer holds never runs), and the key/value tensors of the cache its
forward returns.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import symgpt
from symgpt.model.model import from_config

from oracles.hf_encdec import build, flops, params

ZOO = json.loads((Path(__file__).parent / "oracles" / "zoo" / "transformers-5.24.0.json").read_text())["types"]
TYPES = ("bart", "mbart", "marian", "pegasus", "blenderbot", "blenderbot-small", "plbart", "mvp", "bigbird_pegasus",
         "trocr", "whisper")
TINY = {"d_model": 32, "decoder_layers": 2, "decoder_attention_heads": 4, "decoder_ffn_dim": 48,
        "encoder_layers": 2, "encoder_attention_heads": 2, "encoder_ffn_dim": 24, "max_position_embeddings": 16}
#: model type -> (fields beyond TINY, what they exercise); each built small with transformers
SMALL = {
    "bart": ({"vocab_size": 97, "scale_embedding": True}, "post-LN, embeddings × √d"),
    "mbart": ({"vocab_size": 97}, "pre-LN, layernorm_embedding and a final LayerNorm"),
    "marian": ({"vocab_size": 97, "decoder_vocab_size": 97, "pad_token_id": 1, "decoder_start_token_id": 1,
                "activation_function": "relu"},
               "sinusoids in a parameter table"),
    "pegasus": ({"vocab_size": 97, "tie_word_embeddings": False}, "pre-LN, an untied LM head"),
    "blenderbot": ({"vocab_size": 97}, "pre-LN, positions without offset"),
    "blenderbot-small": ({"vocab_size": 97}, "a LayerNorm of the token embeddings"),
    "plbart": ({"vocab_size": 97, "scale_embedding": False}, "BART's decoder"),
    "mvp": ({"vocab_size": 97}, "BART's decoder"),
    "bigbird_pegasus": ({"vocab_size": 97, "use_bias": True}, "attention biases, an LM head of its own"),
    "trocr": ({"vocab_size": 97, "use_learned_position_embeddings": False, "layernorm_embedding": False},
              "fixed sinusoids (no parameters), no layernorm_embedding"),
    "whisper": ({"vocab_size": 97, "max_target_positions": 12, "activation_function": "gelu_new", "pad_token_id": 1,
                 "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 2},
                "pre-LN, positions without offset, k_proj without a bias"),
}
B = 2


def _class(model_type):
    return ZOO[model_type]["class"]


@pytest.mark.parametrize("model_type", TYPES)
def test_defaults_equal_transformers_default_count(model_type):
    # a config naming the class and nothing else reads the configuration class's defaults
    cfg = {"model_type": model_type, "architectures": [_class(model_type)]}
    m = from_config(cfg, model_type)
    assert m.family.name == "seq2seq_decoder"
    assert m.params.value == ZOO[model_type]["params"]
    assert any(f"{_class(model_type)} holds each decoder layer's cross-attention" in n for n in m.notes)
    assert not [n for n in m.notes if "not understood" in n], m.notes


@pytest.mark.parametrize("model_type", sorted(SMALL))
def test_small_configs_params_and_flops_equal_transformers(model_type):
    cfg = {"model_type": model_type, **TINY, **SMALL[model_type][0]}
    hf = build(cfg, _class(model_type), device="cpu")
    m = from_config({**cfg, "architectures": [_class(model_type)]}, model_type)
    assert m.params.value == params(hf)
    for T in (5, 9):  # T past the default-config oracle's 8
        assert m.with_(B=B, T=T).quantity("flops.forward").value == flops(hf, B, T), T
    assert m.with_(B=B, T=6).quantity("flops.train").value == flops(hf, B, 6, backward=True)


def test_the_held_cross_attention_is_counted_and_never_run():
    cfg = {"model_type": "bart", **TINY, "vocab_size": 97, "architectures": ["BartForCausalLM"]}
    m = from_config(cfg, "bart")
    hf = build(cfg, "BartForCausalLM", device="cpu")
    held = sum(p.numel() for n, p in hf.named_parameters() if ".encoder_attn" in n)
    assert held > 0
    bd = m.params.values()
    assert sum(v for k, v in bd.items() if "/encoder_attn" in k) == held
    fwd = m.with_(B=B, T=4).quantity("flops.forward").values()
    assert all(v == 0 for k, v in fwd.items() if "/encoder_attn" in k)


def test_kv_cache_is_the_self_attention_cache_transformers_returns():
    import torch

    cfg = {"model_type": "mbart", **TINY, "vocab_size": 97}
    hf = build(cfg, "MBartForCausalLM", device="cpu").float()
    T = 7
    with torch.no_grad():
        cache = hf(input_ids=torch.randint(0, 97, (B, T)), use_cache=True).past_key_values
    numbers = sum(layer.keys.numel() + layer.values.numel() for layer in cache.layers)
    m = from_config({**cfg, "architectures": ["MBartForCausalLM"]}, "mbart").with_(B=B, T=T)
    assert m.quantity("memory.kv_cache").value == numbers * 4  # fp32


def test_refusals_are_one_line():
    from symgpt import SymgptError

    for cfg, match in (
        ({"model_type": "marian", "vocab_size": 100, "decoder_vocab_size": 90}, "decoder_vocab_size 90"),
        ({"model_type": "mvp", "use_prompt": True}, "use_prompt"),
        ({"model_type": "trocr", "cross_attention_hidden_size": 768}, "cross_attention_hidden_size 768"),
    ):
        with pytest.raises(SymgptError, match=match) as e:
            from_config({**cfg, "architectures": [_class(cfg["model_type"])]}, "x")
        assert "\n" not in str(e.value)

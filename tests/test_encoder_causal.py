"""More encoders run as causal LMs (RoFormer, RemBERT, RoCBert, X-MOD, BigBird, XLM), against
transformers itself.

Oracles: the zoo table (``tests/oracles/zoo/transformers-5.24.0.json``: each causal-LM class built
from its configuration class's defaults, ``sum(p.numel() for p in model.parameters())``), and
small non-default configurations built with transformers on CPU: the parameter count and
``FlopCounterMode``'s forward and forward + backward FLOPs (the zoo has no FLOPs for five of them:
their forwards call ``.item()``, which the meta device refuses, and X-MOD's default configuration
names no default language).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from symgpt import SymgptError
from symgpt.model.model import from_config

from oracles.hf_encdec import check_causal_encoder

ZOO = json.loads((Path(__file__).parent / "oracles" / "zoo" / "transformers-5.24.0.json").read_text())["types"]
TYPES = ("roformer", "rembert", "roc_bert", "xmod", "big_bird", "xlm")
TINY = {"vocab_size": 97, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
        "intermediate_size": 48, "max_position_embeddings": 24}
#: (model type, fields beyond TINY): what each exercises
SMALL = [
    ("roformer", {}),                                                    # RoPE from the sinusoid table
    ("roformer", {"embedding_size": 16, "is_decoder": True}),            # narrow embeddings projected to d
    ("rembert", {"input_embedding_size": 8, "output_embedding_size": 24}),  # decoupled widths, untied head
    ("rembert", {"input_embedding_size": 32, "output_embedding_size": 32, "tie_word_embeddings": True}),  # never tied
    ("roc_bert", {"shape_vocab_size": 13, "shape_embed_dim": 8, "pronunciation_vocab_size": 11,
                  "pronunciation_embed_dim": 12}),
    ("roc_bert", {"shape_vocab_size": 13, "shape_embed_dim": 8, "pronunciation_vocab_size": 11,
                  "pronunciation_embed_dim": 12, "enable_shape": False}),  # the shape table held, not run
    ("xmod", {"languages": ["en_XX", "de_DE", "fr_XX"], "default_language": "de_DE"}),  # three adapters, one run
    ("xmod", {"languages": ["en_XX", "ro_RO"], "default_language": "en_XX", "adapter_layer_norm": True,
              "adapter_reduction_factor": 4}),                           # an adapter LayerNorm of its own
    ("xmod", {"default_language": "en_XX", "ln_before_adapter": False}),  # the residual before the norm
    ("xmod", {"default_language": "en_XX", "adapter_reuse_layer_norm": False}),  # no norm before the adapter
    ("big_bird", {"block_size": 2, "num_random_blocks": 1}),             # T <= 14: transformers runs full attention
    ("big_bird", {"attention_type": "original_full", "use_bias": False, "rescale_embeddings": True}),
    ("xlm", {"n_langs": 3}),                                             # the language table held, not run
    ("xlm", {"gelu_activation": False, "causal": True, "sinusoidal_embeddings": True}),
]
B = 2


def _class(model_type):
    return ZOO[model_type]["class"]


@pytest.mark.parametrize("model_type", TYPES)
def test_defaults_equal_transformers_default_count(model_type):
    m = from_config({"model_type": model_type, "architectures": [_class(model_type)]}, model_type)
    assert m.params.value == ZOO[model_type]["params"]
    assert any("a KV cache and generation are not modelled" in n for n in m.notes)
    assert not [n for n in m.notes if "not understood" in n], m.notes


@pytest.mark.parametrize("model_type,fields", SMALL)
def test_small_configs_params_and_flops_equal_transformers(model_type, fields):
    check_causal_encoder(model_type, _class(model_type), {"model_type": model_type, **TINY, **fields}, B)


def test_big_bird_past_full_attention_is_refused():
    cfg = {"model_type": "big_bird", **TINY, "block_size": 2, "num_random_blocks": 1,
           "architectures": ["BigBirdForCausalLM"]}
    m = from_config(cfg, "x")
    assert any("block-sparse attention past it is not modelled" in n for n in m.notes)
    m.with_(B=1, T=14).quantity("flops.forward")  # (5 + 2) * 2 = 14: still full attention
    with pytest.raises(SymgptError, match="block-sparse") as e:
        m.with_(B=1, T=15).quantity("flops.forward")
    assert "\n" not in str(e.value)
    full = from_config({**cfg, "attention_type": "original_full"}, "x")
    full.with_(B=1, T=20).quantity("flops.forward")


def test_refusals_are_one_line():
    for cfg, match in (
        ({"model_type": "roformer", "rotary_value": True}, "rotary_value"),
        ({"model_type": "roc_bert", "concat_input": False}, "concat_input"),
        ({"model_type": "xmod", "pre_norm": True}, "pre_norm"),
        ({"model_type": "xmod", "default_language": "xx"}, "default_language"),
        ({"model_type": "big_bird", "attention_type": "sparse"}, "attention_type"),
        ({"model_type": "big_bird", "add_cross_attention": True}, "add_cross_attention"),
        ({"model_type": "xlm", "asm": True}, "asm"),
        ({"model_type": "xlm", "is_encoder": False}, "is_encoder"),
    ):
        with pytest.raises(SymgptError, match=match) as e:
            from_config({**cfg, "architectures": [_class(cfg["model_type"])]}, "x")
        assert "\n" not in str(e.value)

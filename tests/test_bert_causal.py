"""Encoder families run as causal LMs (ELECTRA, Megatron-BERT, XLM-RoBERTa-XL,
RoBERTa-PreLayerNorm, BertGeneration), against transformers itself.

Oracles: the zoo table (``tests/oracles/zoo/transformers-5.24.0.json``: each causal-LM class built
from its configuration class's defaults, ``sum(p.numel() for p in model.parameters())``), and
small non-default configurations built with transformers on CPU: the parameter count and
``FlopCounterMode``'s forward and forward + backward FLOPs (the zoo has no FLOPs for
Megatron-BERT: its forward calls ``.item()``, which the meta device refuses).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from symgpt import SymgptError
from symgpt.model.model import from_config

from oracles.hf_encdec import check_causal_encoder

ZOO = json.loads((Path(__file__).parent / "oracles" / "zoo" / "transformers-5.24.0.json").read_text())["types"]
TYPES = ("electra", "megatron-bert", "xlm-roberta-xl", "roberta-prelayernorm", "bert-generation")
TINY = {"vocab_size": 97, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
        "intermediate_size": 48, "max_position_embeddings": 24}
#: (model type, fields beyond TINY): what each exercises
SMALL = [
    ("electra", {"embedding_size": 16}),                                # narrow embeddings projected to d
    ("electra", {"embedding_size": 32, "hidden_act": "relu"}),          # as wide as d: no projection
    ("megatron-bert", {"type_vocab_size": 3, "is_decoder": True}),      # pre-LN, a causal mask
    ("xlm-roberta-xl", {"pad_token_id": 3}),                            # positions offset by pad + 1
    ("roberta-prelayernorm", {"type_vocab_size": 1}),
    ("bert-generation", {"is_decoder": True}),
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


def test_refusals_are_one_line():
    for cfg, match in (
        ({"model_type": "electra", "add_cross_attention": True}, "add_cross_attention"),
        ({"model_type": "megatron-bert", "tie_word_embeddings": False}, "tie_word_embeddings=false"),
        ({"model_type": "xlm-roberta-xl", "max_position_embeddings": 2}, "pad_token_id"),
    ):
        with pytest.raises(SymgptError, match=match) as e:
            from_config({**cfg, "architectures": [_class(cfg["model_type"])]}, "x")
        assert "\n" not in str(e.value)

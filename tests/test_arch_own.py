"""The decoders with designs of their own (GPT-NeoX-Japanese, ...) beyond their default
configurations (which tests/test_zoo.py checks).

Oracles: ``sum(p.numel())`` of the transformers class built on the meta device from the same
config, and ``FlopCounterMode`` over one eager forward of that class.
"""

import pytest

from symgpt.core.symbols import L

from symgpt.model.model import from_config

from oracles.measure import _hf_model, flop_count, hf_param_count

SMALL = {"hidden_size": 64, "num_attention_heads": 4, "vocab_size": 256, "max_position_embeddings": 64,
         "pad_token_id": 0}

#: configurations away from the defaults: untied heads, partial rotary, one layer, another width
VARIANTS = {
    "gpt_neox_japanese": [
        {**SMALL, "num_hidden_layers": 3, "intermediate_multiple_size": 3, "tie_word_embeddings": False,
         "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5}},
        {**SMALL, "num_hidden_layers": 1},
    ],
}
CASES = [(t, i) for t, cfgs in sorted(VARIANTS.items()) for i in range(len(cfgs))]


@pytest.mark.parametrize(("model_type", "i"), CASES)
def test_params_and_forward_flops_equal_transformers(model_type, i):
    cfg = {"model_type": model_type, **VARIANTS[model_type][i]}
    m = from_config(cfg, model_type)
    assert m.family.name == model_type
    assert m.params == hf_param_count(cfg), model_type
    assert not [n for n in m.notes if "not understood" in n]
    assert m.with_(B=2, T=8).quantity("flops.forward") == flop_count(_hf_model(cfg, "meta", "eager"), 2, 8)


def test_gpt_neox_japanese_last_layer_alone_has_the_output_bias():
    cfg = {"model_type": "gpt_neox_japanese", **SMALL, "num_hidden_layers": 3}
    m = from_config(cfg, "x")
    assert [(g.name, g.repeat) for g in m.arch.stacks()] == [("blocks", L - 1), ("last_blocks", 1)]
    hf = _hf_model(cfg, "meta", "eager")
    biased = [n for n, _ in hf.named_parameters() if n.endswith("dense_bias")]
    assert biased == ["gpt_neox_japanese.layers.2.attention.dense_bias"]

"""Apertus (xIELU), BitNet, AXK1 and Llama 4 text on small non-default configurations, against
transformers.

Oracles: ``sum(p.numel() for p in model.parameters())`` of ``AutoModelForCausalLM.from_config``
built on the meta device, and ``FlopCounterMode`` (eager attention) for one forward of B x T
token ids (tests/oracles/measure.py). The default configurations are in tests/test_zoo.py; these
reach what the defaults hide (biases, grouped heads, other widths, layer mixes). The xIELU op is
checked against transformers' ``XIELUActivation`` in PyTorch.
"""

from __future__ import annotations

import json

import pytest
import sympy
import torch

import symgpt
from oracles.measure import _hf_model, flop_count, param_count, saved_storages
from symgpt import SymgptError, ops
from symgpt.ops.base import Context

B, T = 2, 8

# case -> a small config (only the fields that differ from transformers' defaults)
SMALL = {
    "apertus": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                    intermediate_size=96, vocab_size=320, max_position_embeddings=64),
    "apertus-bias": dict(model_type="apertus", hidden_size=64, num_hidden_layers=3, num_attention_heads=4,
                         intermediate_size=80, vocab_size=320, attention_bias=True, tie_word_embeddings=True),
    "apertus1p5_text": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1,
                            intermediate_size=96, vocab_size=384, output_vocab_size=384),
    "bitnet": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                   intermediate_size=96, vocab_size=320, max_position_embeddings=64),
    "bitnet-bias-mha": dict(model_type="bitnet", hidden_size=64, num_hidden_layers=3, num_attention_heads=8,
                            num_key_value_heads=8, intermediate_size=80, vocab_size=320, attention_bias=True,
                            tie_word_embeddings=True),
}


def _config(case):
    cfg = dict(SMALL[case])
    cfg.setdefault("model_type", case)
    return cfg


def _load(cfg, tmp_path, **bound):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return symgpt.load(path, **bound)


@pytest.mark.parametrize("case", sorted(SMALL))
def test_params_and_forward_flops_equal_transformers(case, tmp_path):
    cfg = _config(case)
    hf = _hf_model(cfg, "meta", "eager")
    m = _load(cfg, tmp_path, B=B, T=T)
    assert m.params == param_count(hf), (case, m.params.value, param_count(hf))
    assert m.quantity("flops.forward") == flop_count(hf, B, T)


def test_xielu_owns_two_one_element_parameters_and_saves_what_pytorch_saves():
    from transformers.activations import ACT2CLS

    act = ACT2CLS["xielu"](dtype=torch.float32)
    shape = (sympy.Integer(3), sympy.Integer(5))
    op = ops.XIELU()
    assert [(p.name, p.shape) for p in op.params((shape,))] == [
        (n, tuple(sympy.Integer(s) for s in p.shape)) for n, p in act.named_parameters()]
    assert op.shape((shape,)) == shape
    x = torch.randn(3, 5, requires_grad=True) * 1  # a non-leaf input, as inside a model
    params = {p.untyped_storage().data_ptr() for p in act.parameters()}
    saved = {ptr: n for ptr, n in saved_storages(act, x).items() if ptr not in params}
    rule = op.saved((shape,), shape, Context(implementation="hf-eager"))
    bytes_of = {"act": 4, "bool": 1}
    assert len(saved) == len(rule)
    assert sum(saved.values()) == sum(int(sympy.Mul(*s.shape)) * bytes_of[s.dtype] for s in rule)
    assert [s.shares for s in op.saved((shape,), shape, Context())] == ["input0"]  # a fused kernel: x alone


def test_bitnet_sub_norms_stand_before_the_output_and_down_projections(tmp_path):
    from symgpt.graph import roles

    arch = _load(_config("bitnet"), tmp_path).arch
    order = list(arch.order)
    for sub, after in ((roles.ATTENTION_SUB_NORM, roles.OUT), (roles.FFN_SUB_NORM, roles.FFN_DOWN)):
        (n,) = arch.find(sub)
        assert order.index(n) + 1 == order.index(arch.first(after))


def test_bitnet_packed_weights_are_refused(tmp_path):
    cfg = dict(_config("bitnet"), quantization_config={"quant_method": "bitnet", "linear_class": "bitlinear",
                                                        "quantization_mode": "offline"})
    with pytest.raises(SymgptError, match="quantization_config"):
        _load(cfg, tmp_path)


def test_apertus1p5_pruned_head_is_refused(tmp_path):
    cfg = dict(_config("apertus1p5_text"), output_vocab_size=256)
    with pytest.raises(SymgptError, match="output_vocab_size"):
        _load(cfg, tmp_path)

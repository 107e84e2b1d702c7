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
from oracles.measure import flop_count, param_count, saved_storages
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
    "axk1": dict(hidden_size=64, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=4,
                 intermediate_size=96, moe_intermediate_size=24, n_routed_experts=8, num_experts_per_tok=2,
                 n_shared_experts=2, n_group=2, topk_group=1, q_lora_rank=24, kv_lora_rank=32,
                 qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12, vocab_size=320,
                 mlp_layer_types=["dense", "dense", "sparse"]),
    "axk1-legacy": dict(model_type="axk1", hidden_size=64, num_hidden_layers=3, num_attention_heads=4,
                        num_key_value_heads=4, intermediate_size=80, moe_intermediate_size=16, n_routed_experts=4,
                        num_experts_per_tok=2, n_shared_experts=0, n_group=1, topk_group=1, q_lora_rank=16,
                        kv_lora_rank=24, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=16, vocab_size=320,
                        attention_bias=True, norm_topk_prob=False, first_k_dense_replace=1,
                        tie_word_embeddings=True),
    # Llama 4: every layer MoE, every 4th NoPE (the default pattern)
    "llama4_text": dict(hidden_size=64, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                        head_dim=16, intermediate_size=32, intermediate_size_mlp=96, num_local_experts=4,
                        num_experts_per_tok=1, vocab_size=320, attention_chunk_size=16),
    # Maverick's pattern: MoE every 2nd layer, NoPE every 4th: three kinds of layers
    "llama4_text-interleaved": dict(model_type="llama4_text", hidden_size=64, num_hidden_layers=8,
                                    num_attention_heads=4, num_key_value_heads=1, head_dim=16, intermediate_size=24,
                                    intermediate_size_mlp=80, num_local_experts=3, num_experts_per_tok=2,
                                    interleave_moe_layer_step=2, vocab_size=320, use_qk_norm=False),
    # MoE every 3rd, NoPE every 2nd: all four kinds (L = 7 is no multiple of either period)
    "llama4_text-four-kinds": dict(model_type="llama4_text", hidden_size=64, num_hidden_layers=7,
                                   num_attention_heads=4, num_key_value_heads=4, head_dim=8, intermediate_size=24,
                                   intermediate_size_mlp=40, num_local_experts=2, num_experts_per_tok=1,
                                   interleave_moe_layer_step=3, no_rope_layer_interval=2, vocab_size=320,
                                   attention_bias=True, tie_word_embeddings=True),
    # no MoE layer at all, no NoPE layer
    "llama4_text-dense": dict(model_type="llama4_text", hidden_size=64, num_hidden_layers=3, num_attention_heads=4,
                              num_key_value_heads=2, head_dim=16, intermediate_size_mlp=96, moe_layers=[],
                              no_rope_layers=[1, 1, 1], attention_chunk_size=None, vocab_size=320),
}


def _config(case):
    cfg = dict(SMALL[case])
    cfg.setdefault("model_type", case)
    return cfg


def _load(cfg, tmp_path, **bound):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return symgpt.load(path, **bound)


def _hf(cfg):
    """The causal LM of *cfg* on the meta device, eager attention; a mixture's experts run as
    ``batched_mm`` (one matmul per token and chosen expert: what FlopCounterMode counts on meta)."""
    import transformers
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    fields = dict(cfg)
    model_type = fields.pop("model_type")
    cls = getattr(transformers, MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[model_type])
    config = AutoConfig.for_model(model_type, **fields)
    kw = {"experts_implementation": "batched_mm"} if cls._can_set_experts_implementation() else {}
    with torch.device("meta"):
        model = cls._from_config(config, attn_implementation="eager", **kw)
    model.tie_weights()
    return model


@pytest.mark.parametrize("case", sorted(SMALL))
def test_params_and_forward_flops_equal_transformers(case, tmp_path):
    cfg = _config(case)
    hf = _hf(cfg)
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


def test_axk1_norms_the_mixture_output_only(tmp_path):
    from symgpt.graph import roles

    arch = _load(_config("axk1"), tmp_path).arch
    post = arch.find(roles.POST_FFN_NORM)
    assert post and all(n.startswith("blocks/") for n in post)  # not in the dense layers
    assert any(n.startswith("dense_blocks/") for n in arch.graph.nodes)


def test_axk1_router_renormalises_unless_told_not_to(tmp_path):
    # AXK1Config's norm_topk_prob: True by default; false or null leave the top-k weights as they are
    for value, expected in (("absent", True), (True, True), (False, False), (None, False)):
        cfg = dict(_config("axk1"))
        if value != "absent":
            cfg["norm_topk_prob"] = value
        assert _load(cfg, tmp_path).arch.flags["topk_norm"] is expected, value


def test_axk1_interleaved_layer_kinds_are_refused(tmp_path):
    cfg = dict(_config("axk1"), mlp_layer_types=["dense", "sparse", "dense"])
    with pytest.raises(SymgptError, match="mlp_layer_types"):
        _load(cfg, tmp_path)


def test_llama4_stacks_hold_each_kind_of_layer(tmp_path):
    # layer i has experts when s | i + 1 and no positions when p | i + 1 (Llama4TextConfig's defaults
    # of moe_layers and no_rope_layers): L = 7, s = 3, p = 2
    arch = _load(_config("llama4_text-four-kinds"), tmp_path).arch
    counts = {g.name: int(sympy.sympify(g.repeat).subs(symgpt.core.symbols.L, 7)) for g in arch.stacks()}
    assert counts == {"blocks": 1, "dense_blocks": 3, "nope_blocks": 1, "nope_dense_blocks": 2}
    nope = [n for n in arch.graph.nodes if n.startswith("nope_") and "rotary" in n]
    assert not nope


def test_llama4_routed_experts_flag_counts_k_experts_per_token(tmp_path):
    # all_experts (the default) counts what Llama4TextMoe runs: E experts per token; off, k of them.
    # The difference is (E - k) gated experts of width d_ff per token and MoE layer: 3 matmuls of
    # d x d_ff, 2 FLOPs per multiply-add
    cfg = _config("llama4_text")
    every = _load(cfg, tmp_path, B=B, T=T).quantity("flops.forward").value
    path = tmp_path / "config.json"
    routed = symgpt.load(path, B=B, T=T, all_experts=False).quantity("flops.forward").value
    E, k, d, ff, layers = 4, 1, 64, 32, 4
    assert every - routed == layers * (E - k) * B * T * 3 * 2 * d * ff


def test_llama4_chunked_layers_past_the_chunk_count_what_eager_attention_computes(tmp_path):
    # eager attention computes every chunked layer's full T x T scores (the chunk mask only hides
    # keys), so past attention_chunk_size (16) symgpt's count of full causal attention stays exact
    cfg = _config("llama4_text")
    assert _load(cfg, tmp_path, B=1, T=24).quantity("flops.forward") == flop_count(_hf(cfg), 1, 24)


def test_llama4_notes_say_what_is_counted_otherwise(tmp_path):
    (notes,) = _load(_config("llama4_text"), tmp_path).notes
    assert "every expert" in notes and "chunked attention" in notes and "temperature" in notes


@pytest.mark.parametrize("changes,match", [({"moe_layers": [0, 2]}, "moe_layers"),
                                           ({"no_rope_layers": [1, 0, 0, 1]}, "no_rope_layers")])
def test_llama4_irregular_layer_patterns_are_refused(changes, match, tmp_path):
    with pytest.raises(SymgptError, match=match):
        _load(dict(_config("llama4_text"), **changes), tmp_path)


def test_apertus1p5_pruned_head_is_refused(tmp_path):
    cfg = dict(_config("apertus1p5_text"), output_vocab_size=256)
    with pytest.raises(SymgptError, match="output_vocab_size"):
        _load(cfg, tmp_path)

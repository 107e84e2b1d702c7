"""Gated DeltaNet (``symgpt.ops.delta``; the qwen3_next and qwen3_5 families: transformers'
Qwen3NextForCausalLM, Qwen3_5ForCausalLM, Qwen3_5MoeForCausalLM) against PyTorch: the op's FLOPs
against ``torch.utils.flop_counter.FlopCounterMode`` on transformers' ``torch_chunk_gated_delta_rule``
(the path it runs without flash-linear-attention) at lengths within one chunk, filling it and past
it; parameters and forward FLOPs of tiny CPU models against the real modules; the inference
answers name the recurrent state."""

import json

import pytest
import sympy
import torch
from torch.utils.flop_counter import FlopCounterMode

import symgpt
from symgpt import ops
from symgpt.core.errors import SymgptError

import transformers


def _flops(fn) -> int:
    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        fn()
    return int(fcm.get_total_flops())


@pytest.mark.parametrize("T,chunk", [(5, 4), (8, 4), (3, 8), (1, 4), (70, 64)])
def test_gated_delta_rule_flops_equal_the_chunked_algorithm(T, chunk):
    from transformers.models.qwen3_next.modeling_qwen3_next import torch_chunk_gated_delta_rule

    Bn, Hk, H, dk, dv = 2, 2, 4, 3, 5
    q, k = torch.randn(Bn, T, Hk, dk), torch.randn(Bn, T, Hk, dk)
    v = torch.randn(Bn, T, H, dv)
    g, beta = -torch.rand(Bn, T, H), torch.rand(Bn, T, H)
    measured = _flops(lambda: torch_chunk_gated_delta_rule(q, k, v, g=g, beta=beta, chunk_size=chunk,
                                                           use_qk_l2norm_in_kernel=True))
    op = ops.GatedDeltaRule(*(sympy.Integer(x) for x in (Hk, H, dk, dv, chunk)))
    shapes = ((Bn, T, Hk * dk), (Bn, T, Hk * dk), (Bn, T, H * dv), (Bn, T, H), (Bn, T, H))
    out = op.shape(shapes)
    assert tuple(out) == (Bn, T, H * dv)
    assert 2 * sum(w.count for w in op.forward(shapes, out) if w.kind == "matmul") == measured
    # the same count symbolic in T, evaluated afterwards
    Ts = sympy.Symbol("T", integer=True, positive=True)
    sym_shapes = tuple((Bn, Ts, s[-1]) for s in shapes)
    sym = 2 * sum(w.count for w in op.forward(sym_shapes, op.shape(sym_shapes)) if w.kind == "matmul")
    assert int(sym.subs(Ts, T)) == measured
    assert [(p.name, tuple(p.shape)) for p in op.params(shapes)] == [("dt_bias", (H,)), ("A_log", (H,))]


# --- whole models ----------------------------------------------------------------------------

QWEN3_NEXT = dict(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=4, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=8, linear_num_key_heads=2, linear_num_value_heads=4,
                  linear_key_head_dim=8, linear_value_head_dim=6, linear_conv_kernel_dim=3, num_experts=4,
                  num_experts_per_tok=2, moe_intermediate_size=16, shared_expert_intermediate_size=12)

QWEN3_5 = {k: v for k, v in QWEN3_NEXT.items() if k not in ("num_experts", "num_experts_per_tok", "intermediate_size",
                                                            "moe_intermediate_size")}

OLMO_HYBRID = dict(vocab_size=64, hidden_size=32, intermediate_size=40, num_hidden_layers=5, num_attention_heads=4,
                   num_key_value_heads=2, linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
                   linear_value_head_dim=6, linear_conv_kernel_dim=3, pad_token_id=0, eos_token_id=1)

LARA_MINI = dict(vocab_size=64, hidden_size=32, num_hidden_layers=5, num_attention_heads=4, num_key_value_heads=2,
                 head_dim=8, linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
                 linear_value_head_dim=6, linear_conv_kernel_dim=3, num_experts=4, num_experts_per_tok=2,
                 moe_intermediate_size=16, shared_expert_intermediate_size=12, sliding_window=4, eos_token_id=1)

CASES = {
    "lara_mini": ("lara_mini", "LaraMiniForCausalLM", LARA_MINI),
    "lara_mini-untied-no-full": ("lara_mini", "LaraMiniForCausalLM",
                                 dict(LARA_MINI, num_hidden_layers=3, tie_word_embeddings=False,
                                      layer_types=["linear_attention", "sliding_attention", "linear_attention"])),
    "olmo_hybrid": ("olmo_hybrid", "OlmoHybridForCausalLM", OLMO_HYBRID),
    "olmo_hybrid-defaults-nope": ("olmo_hybrid", "OlmoHybridForCausalLM",
                                  dict(vocab_size=64, hidden_size=32, intermediate_size=40, num_hidden_layers=3,
                                       num_attention_heads=4, pad_token_id=0, eos_token_id=1,
                                       rope_parameters={"rope_type": "default"})),
    "qwen3_5_text": ("qwen3_5_text", "Qwen3_5ForCausalLM", dict(QWEN3_5, intermediate_size=40)),
    "qwen3_5_moe_text": ("qwen3_5_moe_text", "Qwen3_5MoeForCausalLM",
                         dict(QWEN3_5, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                              full_attention_interval=2)),
    "qwen3_next": ("qwen3_next", "Qwen3NextForCausalLM", QWEN3_NEXT),
    "qwen3_next-pattern": ("qwen3_next", "Qwen3NextForCausalLM",
                           dict(QWEN3_NEXT, num_hidden_layers=5, tie_word_embeddings=True,
                                layer_types=["full_attention", "linear_attention", "linear_attention",
                                             "full_attention", "linear_attention"])),
}


def _model(model_type, cls, overrides):
    config = transformers.AutoConfig.for_model(model_type, **overrides)
    config.architectures = [cls]
    klass = getattr(transformers, cls)
    # experts as batched_mm (one matmul per token and chosen expert), as the zoo table measures
    kw = {"experts_implementation": "batched_mm"} if klass._can_set_experts_implementation() else {}
    torch.manual_seed(0)
    model = klass._from_config(config, attn_implementation="eager", **kw).eval()
    return config, model


def _path(config, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(config.to_json_string(use_diff=False))
    return str(path)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("T", [8, 70])  # within one chunk of 64, and past it
def test_model_params_and_forward_flops(case, T, tmp_path):
    model_type, cls, overrides = CASES[case]
    config, model = _model(model_type, cls, overrides)
    Bn = 1
    ids = torch.randint(0, 64, (Bn, T))
    measured = _flops(lambda: model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False))
    m = symgpt.load(_path(config, tmp_path), B=Bn, T=T)
    assert int(m.params.value) == sum(p.numel() for p in model.parameters())
    band = 0
    if config.model_type == "lara_mini":  # eager attention computes the masked band past the window too
        sliding, W, h, dh = config.layer_types.count("sliding_attention"), config.sliding_window, 4, 8
        band = sliding * 2 * 2 * Bn * h * T * max(T - W, 0) * dh
    assert int(m.quantity("flops.forward").value) == measured - band


@pytest.mark.parametrize("case", sorted(CASES))
def test_inference_answers_name_the_recurrent_state(case, tmp_path):
    """The inference answers are given (their values: tests/test_recurrent_inference.py), each
    saying that the recurrent layers keep a state, not a KV cache."""
    model_type, cls, overrides = CASES[case]
    config, _ = _model(model_type, cls, overrides)
    m = symgpt.load(_path(config, tmp_path))
    for name in ("inference.kv_cache", "inference.state", "inference.decode.flops", "inference.prefill.flops"):
        assert any("recurrent layers keep a state of fixed size" in n for n in m.quantity(name).notes), name
    assert "attention layers only" in m.quantity("memory.kv_cache").notes[0]


def test_the_convention_is_stated_on_the_answer(tmp_path):
    config, _ = _model(*CASES["qwen3_next"])
    notes = symgpt.load(_path(config, tmp_path)).quantity("flops.forward").notes
    assert any("gated delta rule" in n and "chunked algorithm" in n for n in notes)


@pytest.mark.parametrize("field,value,words", [("mlp_only_layers", [0], "mlp_only_layers"),
                                               ("attention_bias", True, "attention_bias")])
def test_reader_refuses_what_it_does_not_model(field, value, words, tmp_path):
    config, _ = _model(*CASES["qwen3_next"])
    cfg = json.loads(config.to_json_string(use_diff=False))
    cfg[field] = value
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    with pytest.raises(SymgptError, match=words) as exc:
        symgpt.load(str(path))
    assert "\n" not in str(exc.value)

"""Decoders with attention of their own (DiffLlama's differential attention, ...) against
transformers 5.24.0: ``sum(p.numel())`` of each type built with small non-default configs, and
``FlopCounterMode``'s forward (and forward + backward) FLOPs of one eager run on CPU; the new
ops' shapes and parameters against the transformers modules they stand for."""

import json

import pytest
import sympy
import torch

import symgpt
from oracles.measure import _hf_model, flop_count, param_count
from symgpt import ops
from symgpt.ops.base import Context

I = sympy.Integer
B, T = 2, 8


def _load(cfg, tmp_path, **sizes):
    path = tmp_path / f"{cfg['model_type']}.json"
    path.write_text(json.dumps(cfg))
    return symgpt.load(path, B=B, T=T, **sizes)


def _cpu_model(cfg):
    torch.manual_seed(0)
    return _hf_model(cfg, "cpu", "eager")


# --- DiffLlama ----------------------------------------------------------------------------------
def _diffllama(**changes):
    return {"model_type": "diffllama", "architectures": ["DiffLlamaForCausalLM"], "hidden_size": 64,
            "intermediate_size": 96, "num_hidden_layers": 3, "num_attention_heads": 8, "num_key_value_heads": 4,
            "head_dim": 16, "vocab_size": 128, "max_position_embeddings": 64, **changes}


@pytest.mark.parametrize("changes", [{}, {"attention_bias": True, "tie_word_embeddings": True},
                                     {"num_key_value_heads": 8, "head_dim": None}])
def test_tiny_diffllama_params_and_flops(changes, tmp_path):
    cfg = {k: v for k, v in _diffllama(**changes).items() if v is not None}
    hf = _cpu_model(cfg)
    m = _load(cfg, tmp_path)
    assert m.family.name == "diffllama"
    assert m.params == param_count(hf)
    assert m.quantity("flops.forward") == flop_count(hf, B, T)
    assert m.quantity("flops.train") == flop_count(hf, B, T, backward=True)


def test_diffllama_lambdas_are_four_vectors_per_layer():
    hf = _hf_model(_diffllama(), "meta", "eager")
    lam = {n.rsplit(".", 1)[1]: p.shape for n, p in hf.named_parameters() if ".lambda_" in n and ".0." in n}
    op = ops.DiffCombine(I(16))
    z = (I(B), I(8), I(T), I(16))
    assert {p.name: tuple(p.shape) for p in op.params((z, z))} == {n: tuple(s) for n, s in lam.items()}
    # the output: (B, h/2, T, 2·d_head), as torch.chunk(cat([Z1, Z2], -1), 2, dim=heads) gives
    z1 = torch.zeros(B, T, 8, 16)
    a, _ = torch.chunk(torch.cat([z1, z1], dim=-1), 2, dim=2)
    assert op.shape((z, z)) == (a.shape[0], a.shape[2], a.shape[1], a.shape[3])
    assert ops.HeadSlice(I(2), I(2)).shape(((I(B), I(4), I(T), I(16)),)) == \
        tuple(torch.chunk(torch.zeros(B, 4, T, 16), 2, dim=1)[1].shape)
    assert [w.kind for w in op.backward((z, z), op.shape((z, z)), Context())] == ["elementwise"] * 3


def test_diffllama_refuses_odd_kv_heads(tmp_path):
    with pytest.raises(symgpt.SymgptError, match="even number"):
        _load(_diffllama(num_key_value_heads=3, num_attention_heads=6), tmp_path)


# --- Doge ---------------------------------------------------------------------------------------
def _doge(**changes):
    return {"model_type": "doge", "architectures": ["DogeForCausalLM"], "hidden_size": 64, "intermediate_size": 96,
            "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 128,
            "max_position_embeddings": 64, **changes}


@pytest.mark.parametrize("changes", [{}, {"attention_bias": True, "mlp_bias": True, "tie_word_embeddings": True},
                                     {"keep_window_size": 4, "num_key_value_heads": 4}])
def test_tiny_doge_params_and_flops(changes, tmp_path):
    """keep_window_size 4 < T: the dynamic mask keeps the top 4 keys of each row (a top-k, no
    matmul); the scores are still computed over every key."""
    cfg = _doge(**changes)
    hf = _cpu_model(cfg)
    m = _load(cfg, tmp_path)
    assert m.family.name == "doge"
    assert m.params == param_count(hf)
    assert m.quantity("flops.forward") == flop_count(hf, B, T)
    assert m.quantity("flops.train") == flop_count(hf, B, T, backward=True)


def test_doge_new_ops_match_the_modules():
    hf = _hf_model(_doge(), "meta", "eager")
    layer = hf.model.layers[0]
    assert tuple(layer.self_attn.A.shape) == (2,)
    assert [tuple(p.shape) for p in (layer.input_residual, layer.post_attention_residual)] == [(64,), (64,)]
    mask = ops.DynamicMask(I(2))
    s, dt = (I(B), I(4), I(T), I(T)), (I(B), I(T), I(2))
    assert mask.shape((s, dt)) == s and [p.shape for p in mask.params((s, dt))] == [(2,)]
    assert [p.shape for p in ops.ChannelScale(I(64)).params(((I(B), I(T), I(64)),))] == [(64,)]
    with pytest.raises(symgpt.SymgptError, match="dynamic mask expects"):
        mask.shape((s, (I(B), I(T), I(3))))


@pytest.mark.parametrize("changes", [dict(num_experts=16, num_experts_per_tok=4),
                                     dict(num_experts=20, num_experts_per_tok=3, mlp_bias=True)])
def test_tiny_doge_mixture_params_and_flops(changes, tmp_path):
    """DogeCDMoE: every token runs k single-neuron experts (two (k, d) matmuls per token) besides
    the gated MLP; the router scores 2·floor(sqrt(E)) product keys."""
    cfg = _doge(is_moe=True, **changes)
    hf = _cpu_model(cfg)
    m = _load(cfg, tmp_path)
    assert m.params == param_count(hf)
    assert m.quantity("flops.forward") == flop_count(hf, B, T)
    assert m.quantity("flops.train") == flop_count(hf, B, T, backward=True)
    E, k = changes["num_experts"], changes["num_experts_per_tok"]
    assert m.quantity("params.active") == param_count(hf) - 3 * 2 * (E - k) * 64  # 3 layers, 2 tables of d


def test_doge_mixture_needs_enough_product_keys(tmp_path):
    with pytest.raises(symgpt.SymgptError, match="product-key"):
        _load(_doge(is_moe=True, num_experts=8, num_experts_per_tok=5), tmp_path)


# --- JetMoE -------------------------------------------------------------------------------------
def _jetmoe(**changes):
    return {"model_type": "jetmoe", "architectures": ["JetMoeForCausalLM"], "hidden_size": 64,
            "intermediate_size": 48, "num_hidden_layers": 3, "num_key_value_heads": 2, "kv_channels": 16,
            "num_local_experts": 4, "num_experts_per_tok": 2, "vocab_size": 128, "max_position_embeddings": 64,
            **changes}


@pytest.mark.parametrize("changes", [{}, {"tie_word_embeddings": False, "num_experts_per_tok": 3,
                                          "num_key_value_heads": 4, "kv_channels": 8}])
def test_tiny_jetmoe_params_and_flops(changes, tmp_path):
    """Every token runs exactly k attention experts and k FFN experts whatever the routers pick;
    the zoo table has no FLOPs for JetMoE (its routing calls .item(), which the meta device
    cannot), so the oracle is a real CPU model."""
    cfg = _jetmoe(**changes)
    hf = _cpu_model(cfg)
    m = _load(cfg, tmp_path)
    assert m.family.name == "jetmoe"
    assert m.params == param_count(hf)
    assert m.quantity("flops.forward") == flop_count(hf, B, T)
    assert m.quantity("flops.train") == flop_count(hf, B, T, backward=True)
    # active: the routers, norms, biases and key/value projections, and k of E experts of each mixture
    E, k = cfg["num_local_experts"], cfg["num_experts_per_tok"]
    per_expert = {n: p.numel() // E for n, p in hf.named_parameters() if n.endswith(("input_linear.weight",
                                                                                   "output_linear.weight"))}
    expected = param_count(hf) - (E - k) * sum(per_expert.values())
    assert m.quantity("params.active") == expected


def test_moe_slots_and_bias_ops():
    x, w = (I(B), I(T), I(32)), (I(B), I(T), I(2))
    assert ops.MoESlots().shape((x, w)) == (B, T, 64)
    hf = _hf_model(_jetmoe(), "meta", "eager")
    layer = hf.model.layers[0]
    assert [tuple(p.shape) for p in (layer.mlp.bias, layer.self_attention.experts.bias)] == [(64,), (64,)]
    assert [p.shape for p in ops.ChannelBias(I(64)).params(((I(B), I(T), I(64)),))] == [(64,)]


# --- CPM-Ant ------------------------------------------------------------------------------------
def _cpmant(**changes):
    return {"model_type": "cpmant", "architectures": ["CpmAntForCausalLM"], "hidden_size": 64, "dim_ff": 96,
            "dim_head": 8, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 128, "prompt_length": 4,
            "prompt_types": 3, "segment_types": 5, "position_bias_num_buckets": 16, "dropout_p": 0.0,
            "tie_word_embeddings": False, **changes}


@pytest.mark.parametrize("changes", [{}, {"prompt_length": 1, "segment_types": 3, "dim_head": 32}])
def test_tiny_cpmant_params_and_flops(changes, tmp_path):
    """The layers run over T + prompt_length positions; the LM head over the T token positions."""
    cfg = _cpmant(**changes)
    hf = _cpu_model(cfg)
    m = _load(cfg, tmp_path)
    assert m.family.name == "cpmant"
    assert m.params == param_count(hf)
    assert m.quantity("flops.forward") == flop_count(hf, B, T)
    assert m.quantity("flops.train") == flop_count(hf, B, T, backward=True)


def test_cpmant_head_is_never_tied(tmp_path):
    """CpmAntForCausalLM ties no weights whatever tie_word_embeddings says (its token table has
    the prompt rows besides V): the count with the field true is the untied model's."""
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = _cpmant(tie_word_embeddings=True)
    c = {k: v for k, v in cfg.items() if k not in ("model_type", "architectures")}
    with torch.device("meta"):
        hf = AutoModelForCausalLM.from_config(AutoConfig.for_model("cpmant", **c))
    hf.tie_weights()
    assert hf.get_output_embeddings().weight is not hf.get_input_embeddings().weight
    assert _load(cfg, tmp_path).params == param_count(hf)


def test_prompt_ops_shapes():
    ids = torch.zeros(B, T, dtype=torch.long)
    cat = torch.cat([torch.zeros(B, 4, dtype=torch.long), ids], dim=1)
    assert ops.PrependTokens(I(4)).shape(((I(B), I(T)),)) == tuple(cat.shape)
    x = torch.zeros(B, T + 4, 16)
    assert ops.DropTokens(I(4)).shape(((I(B), I(T + 4), I(16)),)) == tuple(x[:, 4:, :].shape)

"""Gated attention outputs and sinks (AFMoE, Laguna, Beam, Flint, MiMo-V2-Flash): ``ops.Softplus``,
``ops.ScoreBias`` and ``ops.HeadBias`` against PyTorch, and small non-default configurations against
transformers' own models.

Oracles: the tensors autograd keeps (``saved_tensors_hooks``) for ``torch.nn.functional.softplus``;
``sum(p.numel())`` and ``FlopCounterMode`` of AfmoeForCausalLM, LagunaForCausalLM, BeamForCausalLM,
FlintForCausalLM and MiMoV2FlashForCausalLM built from small configurations on the meta device
(eager attention), with dense first layers that include a full-attention layer, sliding windows
shorter than the sequence, per-element gates, muP scaling, full layers in no period, K/V heads and
sinks per layer kind and narrower value heads, none of which the default configurations show at
T = 8.
"""

import json

import pytest
import sympy
import torch
import torch.nn.functional as F

import symgpt
from oracles.measure import flop_count, param_count
from symgpt import ops
from symgpt.ops.base import Context, numel

I = sympy.Integer
B, T = 1, 8


def test_softplus_keeps_its_input():
    x = torch.rand(3, 5, requires_grad=True)
    seen = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        F.softplus(x)
    assert len(seen) == 1 and seen[0] is x
    s = (I(3), I(5))
    op = ops.Softplus()
    assert op.shape((s,)) == s and op.params((s,)) == ()
    assert [(w.kind, w.count) for w in op.forward((s,), s)] == [("activation", 15)]
    (kept,) = op.saved((s,), s, Context())
    assert kept.shape == s and kept.shares == "input0"


def test_score_bias_owns_one_bias_per_expert_and_keeps_nothing():
    e = 6
    scores = torch.rand(4, e, requires_grad=True)
    bias = torch.zeros(e, requires_grad=False)
    seen = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        torch.topk(scores + bias, 2, dim=-1)
    # the sum keeps nothing (topk keeps its indices, counted by ops.TopK)
    assert all(t.dtype == torch.int64 for t in seen)
    s = (I(1), I(4), I(e))
    op = ops.ScoreBias(I(e))
    assert op.shape((s,)) == s
    assert [(p.name, p.shape) for p in op.params((s,))] == [("bias", (e,))]
    assert op.backward((s,), s, Context()) == () and op.saved((s,), s, Context()) == ()


def _hf_model(cfg):
    """The causal LM on meta, eager attention, experts as batched matmuls (as the zoo table's)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    c = dict(cfg)
    hf_cfg = AutoConfig.for_model(c.pop("model_type"), **c)
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(hf_cfg, attn_implementation="eager",
                                                experts_implementation="batched_mm")


def _check(cfg, tmp_path, window=None, sliding=0, h=None, dh=None):
    """symgpt's parameters and forward FLOPs against the model transformers builds on meta; past the
    window, eager attention computes the full square and masks it: the two differ by that band."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    hf = _hf_model(cfg)
    m = symgpt.load(path, B=B, T=T)
    assert m.params == param_count(hf)
    band = 0
    if window is not None and window < T:
        band = sliding * 2 * 2 * B * h * T * (T - window) * dh  # two matmuls, 2 FLOPs per multiply-add
    assert flop_count(hf, B, T) - m.quantity("flops.forward").value == band
    return m


def _afmoe(**changes):
    return {"model_type": "afmoe", "vocab_size": 256, "hidden_size": 64, "intermediate_size": 96,
            "moe_intermediate_size": 32, "num_hidden_layers": 6, "num_dense_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "num_experts": 8,
            "num_experts_per_tok": 2, "num_shared_experts": 2, "global_attn_every_n_layers": 2,
            "sliding_window": 4, "max_position_embeddings": 64, **changes}


@pytest.mark.parametrize("changes", [{}, {"mup_enabled": True, "attention_bias": True, "num_shared_experts": 0},
                                     {"num_dense_layers": 0, "tie_word_embeddings": True},
                                     {"global_attn_every_n_layers": 3, "num_dense_layers": 1}])
def test_afmoe_small(changes, tmp_path):
    """Dense first layers with a full-attention one among them (layer 1 of every 2nd full), windows
    past T, muP scaling, no shared expert, no dense layer."""
    cfg = _afmoe(**changes)
    L, p = cfg["num_hidden_layers"], cfg["global_attn_every_n_layers"]
    sliding = L - L // p
    m = _check(cfg, tmp_path, window=4, sliding=sliding, h=4, dh=16)
    assert m.family.name == "afmoe"
    n = cfg["num_dense_layers"]
    assert m.flags["dense_full"] == ((sum(1 for i in range(n) if (i + 1) % p == 0) or None) if n else None)


def _laguna(**changes):
    return {"model_type": "laguna", "vocab_size": 256, "hidden_size": 64, "intermediate_size": 96,
            "moe_intermediate_size": 32, "shared_expert_intermediate_size": 48, "num_hidden_layers": 4,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "num_experts": 8,
            "num_experts_per_tok": 2, "sliding_window": 4, "max_position_embeddings": 64, **changes}


@pytest.mark.parametrize("changes, sliding", [
    ({}, 0),
    ({"gating": "per-element"}, 0),
    ({"layer_types": ["full_attention", "sliding_attention"] * 2,
      "mlp_layer_types": ["dense", "dense", "sparse", "sparse"]}, 2),
    ({"shared_expert_intermediate_size": 0, "attention_bias": True}, 0),
])
def test_laguna_small(changes, sliding, tmp_path):
    m = _check(_laguna(**changes), tmp_path, window=4, sliding=sliding, h=4, dh=16)
    assert m.family.name == "laguna"
    gate = 4 * 16 if changes.get("gating") == "per-element" else 4
    assert m.flags["attn_gate"] == "softplus" and m.flags["attn_gate_per_head"] == (gate == 4)


def test_refusals(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(_laguna(num_attention_heads_per_layer=[4, 4, 8, 4])))
    with pytest.raises(symgpt.SymgptError, match="num_attention_heads_per_layer"):
        symgpt.load(path)
    path.write_text(json.dumps(_laguna(mlp_layer_types=["sparse", "dense", "sparse", "sparse"])))
    with pytest.raises(symgpt.SymgptError, match="dense layers are not the first"):
        symgpt.load(path)
    path.write_text(json.dumps(_laguna(gating="per-group")))
    with pytest.raises(symgpt.SymgptError, match="gating"):
        symgpt.load(path)


def _flint(**changes):
    return {"model_type": "flint", "vocab_size": 256, "hidden_size": 64, "intermediate_size": 96,
            "moe_intermediate_size": 32, "shared_expert_intermediate_size": 48, "num_hidden_layers": 7,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "num_experts": 8,
            "num_experts_per_tok": 2, "sliding_window": 4, "max_position_embeddings": 64, **changes}


@pytest.mark.parametrize("changes", [{}, {"mlp_only_layers": [0, 1, 2], "attention_bias": True},
                                     {"shared_expert_intermediate_size": 0, "norm_topk_prob": False}])
def test_flint_small(changes, tmp_path):
    """The default pattern (full: the first two, every 4th from the second, the last) is no period:
    counted as how many layers are full (4 of 7 here), with sinks in every layer."""
    cfg = _flint(**changes)
    L = cfg["num_hidden_layers"]
    full = [i < 2 or i % 4 == 1 or i == L - 1 for i in range(L)]
    m = _check(cfg, tmp_path, window=4, sliding=L - sum(full), h=4, dh=16)
    assert m.family.name == "flint" and m.flags["full_layers"] == sum(full)
    hf = _hf_model(cfg)
    assert sum(p.numel() for n, p in hf.named_parameters() if n.endswith("sinks")) == L * 4


def _mimo(**changes):
    return {"model_type": "mimo_v2_flash", "vocab_size": 256, "hidden_size": 64, "intermediate_size": 96,
            "moe_intermediate_size": 32, "num_hidden_layers": 7, "num_attention_heads": 4,
            "num_key_value_heads": 1, "head_dim": 24, "v_head_dim": 16, "n_routed_experts": 8,
            "num_experts_per_tok": 2, "sliding_window": 4, "max_position_embeddings": 64, **changes}


@pytest.mark.parametrize("changes", [{}, {"mlp_layer_types": ["dense", "dense"] + ["sparse"] * 5,
                                          "attention_bias": True, "n_group": 2, "topk_group": 1}])
def test_mimo_v2_flash_small(changes, tmp_path):
    """Sliding layers with twice the K/V heads and sinks, full layers (the first, every 6th) with
    neither; values of 16 against queries/keys of 24; the first (full) layer dense."""
    cfg = _mimo(**changes)
    L = cfg["num_hidden_layers"]
    full = [i == 0 or not (i + 1) % 6 for i in range(L)]
    sliding = L - sum(full)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    hf = _hf_model(cfg)
    m = symgpt.load(path, B=B, T=T)
    assert m.family.name == "mimo_v2_flash" and m.params == param_count(hf)
    W, h, dq, dv = 4, 4, 24, 16
    band = sliding * 2 * B * h * T * (T - W) * (dq + dv)  # scores (of dq) and values (of dv), masked band
    assert flop_count(hf, B, T) - m.quantity("flops.forward").value == band
    assert sum(p.numel() for n, p in hf.named_parameters() if n.endswith("sinks")) == sliding * h


def test_head_bias_rules():
    """Beam's gate: gate_proj(x).view_as(Z) + gate_bias[None, None, :, None]: the sum keeps nothing."""
    b, t, h, dh = 2, 5, 4, 3
    gate = torch.rand(b, t, h, dh, requires_grad=True)
    bias = torch.zeros(h, requires_grad=True)
    seen = []
    with torch.autograd.graph.saved_tensors_hooks(lambda x: seen.append(x) or x, lambda x: x):
        gate + bias[None, None, :, None]
    assert seen == []
    s = (I(b), I(h), I(t), I(dh))
    op = ops.HeadBias(I(h))
    assert op.shape((s,)) == s and [(p.name, p.shape) for p in op.params((s,))] == [("bias", (h,))]
    assert op.saved((s,), s, Context()) == ()
    with pytest.raises(symgpt.SymgptError, match="bias per head"):
        op.shape(((I(b), I(3), I(t), I(dh)),))


def _beam(**changes):
    return {"model_type": "beam", "vocab_size": 256, "hidden_size": 64, "intermediate_size": 96,
            "moe_intermediate_size": 32, "num_hidden_layers": 7, "num_attention_heads": 4,
            "num_key_value_heads": 2, "head_dim": 16, "num_experts": 8, "num_experts_per_tok": 2, "n_group": 2,
            "topk_group": 1, "sliding_window": 4, "max_position_embeddings": 64, **changes}


@pytest.mark.parametrize("changes", [{}, {"mlp_layer_types": ["dense"] * 6 + ["sparse"], "attention_bias": True,
                                          "final_logit_softcapping": None}])
def test_beam_small(changes, tmp_path):
    """Every 6th layer and the last full (two of seven: no period), dense first layers, the gate's
    bias per head (h per layer)."""
    cfg = _beam(**changes)
    L = cfg["num_hidden_layers"]
    sliding = L - 2
    m = _check(cfg, tmp_path, window=4, sliding=sliding, h=4, dh=16)
    assert m.family.name == "beam" and m.flags["full_layers"] == 2
    hf = _hf_model(cfg)
    assert sum(p.numel() for n, p in hf.named_parameters() if n.endswith("gate_bias")) == L * 4

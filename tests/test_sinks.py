"""Attention sinks (``ops.SinkSoftmax``) and gpt-oss against PyTorch and transformers.

Oracles: the tensors autograd keeps (``saved_tensors_hooks``) when transformers' eager sink
attention (gpt_oss's ``eager_attention_forward``: the sinks concatenated as one more column, the
row maximum subtracted, a softmax over T_k + 1, the column sliced off) runs on real tensors;
``FlopCounterMode`` on that code and on tiny real ``GptOssForCausalLM`` models (eager experts,
CPU), forward and forward + backward; ``sum(p.numel())`` of the published gpt-oss configs built on
the meta device, next to the totals the model card publishes.
"""

import json
from pathlib import Path

import pytest
import sympy
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

import symgpt
from oracles.measure import _hf_model, flop_count, param_count
from symgpt import ops
from symgpt.ops.base import Context, numel

CONFIGS = Path(__file__).parent / "configs"
I = sympy.Integer
B, T = 2, 8


def _sink_attention(q, k, v, sinks):
    """transformers 5.24's gpt_oss eager_attention_forward (no mask, one KV group)."""
    w = torch.matmul(q, k.transpose(2, 3)) * q.shape[-1] ** -0.5
    s = sinks.reshape(1, -1, 1, 1).expand(q.shape[0], -1, q.shape[-2], -1)
    c = torch.cat([w, s], dim=-1)
    c = c - c.max(dim=-1, keepdim=True).values
    p = F.softmax(c, dim=-1, dtype=c.dtype)[..., :-1]
    return torch.matmul(p, v)


def test_sink_softmax_rules():
    op = ops.SinkSoftmax(I(4))
    s = (I(2), I(4), I(5), I(7))
    assert op.shape((s,)) == s
    assert [(p.name, p.shape) for p in op.params((s,))] == [("sinks", (4,))]
    (fw,) = op.forward((s,), s)
    assert fw.kind == "softmax" and fw.count == 2 * 4 * 5 * 8          # T_k + 1 entries per row
    bw = op.backward((s,), s, Context(trainable=True))
    assert [w.grad for w in bw] == ["input", "weight"] and bw[1].count == 2 * 4 * 5
    assert len(op.backward((s,), s, Context(trainable=False))) == 1
    flash = op.saved((s,), s, Context(attention="flash"))
    assert [(x.shape, x.dtype) for x in flash] == [((2, 4, 5), "fp32")]
    with pytest.raises(symgpt.SymgptError, match="attention sinks expect"):
        op.shape(((I(2), I(3), I(5), I(7)),))


def test_sink_softmax_saves_what_eager_pytorch_saves():
    """Eager: the (T_k + 1)-wide probabilities (the values matmul keeps a view of them) and the
    row maxima's indices; besides, the matmuls keep Q, K and V."""
    b, h, t, dh = 2, 4, 5, 3
    q, k, v = (torch.rand(b, h, t, dh, requires_grad=True) for _ in range(3))
    sinks = torch.rand(h, requires_grad=True)
    seen, inputs = {}, {x.untyped_storage().data_ptr() for x in (q, k, v, sinks)}

    def pack(x):
        st = x.untyped_storage()
        if st.data_ptr() not in inputs:   # Q, K and V (or views of them) are kept by the matmuls
            seen[st.data_ptr()] = (st.nbytes(), x.dtype)
        return x

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        _sink_attention(q, k, v, sinks)
    kept = sorted(seen.values(), key=lambda e: (str(e[1]), e[0]))
    shape = (I(b), I(h), I(t), I(t))
    mine = ops.SinkSoftmax(I(h)).saved((shape,), shape, Context(attention="eager"))
    act = sum(numel(x.shape) for x in mine if x.dtype == "act") * 4
    idx = sum(numel(x.shape) for x in mine if x.dtype == "int64") * 8
    assert kept == sorted([(act, torch.float32), (idx, torch.int64)], key=lambda e: (str(e[1]), e[0]))
    assert act == b * h * t * (t + 1) * 4


def test_sinks_add_no_matmul():
    b, h, t, dh = 2, 4, 5, 3
    q, k, v = (torch.rand(b, h, t, dh, requires_grad=True) for _ in range(3))
    sinks = torch.rand(h, requires_grad=True)
    with FlopCounterMode(display=False) as f:
        _sink_attention(q, k, v, sinks).sum().backward()
    scores, values = ops.Matmul("attention_scores", transpose_b=True), ops.Matmul("attention_values")
    qs = (I(b), I(h), I(t), I(dh))
    s = scores.shape((qs, qs))
    works = (scores.forward((qs, qs), s) + values.forward((s, qs), qs)
             + scores.backward((qs, qs), s, Context()) + values.backward((s, qs), qs, Context()))
    assert sum(2 * w.count for w in works if w.kind == "matmul") == f.get_total_flops()


def _tiny(**changes):
    return {"model_type": "gpt_oss", "hidden_size": 64, "intermediate_size": 48, "num_hidden_layers": 4,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 256,
            "num_local_experts": 6, "num_experts_per_tok": 2, "max_position_embeddings": 64,
            "sliding_window": 16, **changes}


def _tiny_hf(cfg):
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    c = dict(cfg)
    hf_cfg = AutoConfig.for_model(c.pop("model_type"), **c)
    return AutoModelForCausalLM.from_config(hf_cfg, attn_implementation="eager", experts_implementation="eager")


@pytest.mark.parametrize("changes", [{}, {"attention_bias": False, "tie_word_embeddings": True}])
def test_tiny_gpt_oss_params_and_flops(changes, tmp_path):
    """Every token runs exactly k experts whatever the router picks: forward and forward +
    backward FLOPs are FlopCounterMode's on a real model."""
    cfg = _tiny(**changes)
    path = tmp_path / "tiny-gpt-oss.json"
    path.write_text(json.dumps(cfg))
    hf = _tiny_hf(cfg)
    m = symgpt.load(path, B=B, T=T)
    assert m.family.name == "gpt_oss"
    assert m.params == param_count(hf)
    assert m.quantity("flops.forward") == flop_count(hf, B, T)
    assert m.quantity("flops.train") == flop_count(hf, B, T, backward=True)
    # the sinks: h per layer
    sinks = sum(p.numel() for n, p in hf.named_parameters() if n.endswith("sinks"))
    assert sinks == 4 * 4


def test_past_the_window_eager_counts_the_full_square(tmp_path):
    """Sliding-window layers (every other one) attend over W = 4 keys: symgpt counts Min(T, W),
    eager attention the full T x T and masks it; they differ by exactly the masked band of the
    sliding layers."""
    cfg = _tiny(sliding_window=4)
    path = tmp_path / "tiny-gpt-oss.json"
    path.write_text(json.dumps(cfg))
    hf = _tiny_hf(cfg)
    m = symgpt.load(path, B=B, T=T)
    W, h, dh, sliding = 4, 4, 16, 2
    band = sliding * 2 * 2 * B * h * T * (T - W) * dh  # 2 matmuls, 2 FLOPs per multiply-add
    assert flop_count(hf, B, T) - m.quantity("flops.forward").value == band
    assert symgpt.load(path, B=B, T=W).quantity("flops.forward") == flop_count(hf, B, W)


def test_layer_types_must_be_one_full_layer_per_period(tmp_path):
    # the full layer may sit anywhere in its period: the same layers, so the same sums
    first, last = tmp_path / "first.json", tmp_path / "last.json"
    first.write_text(json.dumps(_tiny(layer_types=["full_attention", "sliding_attention"] * 2)))
    last.write_text(json.dumps(_tiny(layer_types=["sliding_attention", "full_attention"] * 2)))
    assert symgpt.load(first).params == symgpt.load(last).params == param_count(_hf_model(_tiny(), "meta", "eager"))
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(_tiny(layer_types=["full_attention"] * 2 + ["sliding_attention"] * 2)))
    with pytest.raises(symgpt.SymgptError, match="layer_types"):
        symgpt.load(odd)


PUBLISHED = {"gpt-oss-20b": (20.9e9, 0.05e9), "gpt-oss-120b": (116.8e9, 0.05e9)}  # the model card


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_presets_are_the_published_configs(name):
    cfg = json.loads((CONFIGS / f"{name}.json").read_text())
    n = param_count(_hf_model(cfg, "meta", "eager"))
    p, c = symgpt.load(name), symgpt.load(CONFIGS / f"{name}.json")
    assert p.params == c.params == n
    assert p.family is c.family and dict(p.sizes) == dict(c.sizes) and p.flags == c.flags
    mid, tol = PUBLISHED[name]
    assert abs(n - mid) <= tol
    note = symgpt.families.presets()[name].note
    assert f"{n:,}" in note and "MXFP4" in note
    # the published active count leaves out the embedding table (V·d)
    active = p.quantity("params.active").value - 201088 * 2880
    assert round(active / 1e8) == {"gpt-oss-20b": 36, "gpt-oss-120b": 51}[name]
    assert any("MXFP4" in x for x in c.notes)

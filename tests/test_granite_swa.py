"""Granite-SWA and Granite MoE-SWA: ``ops.SinkScale`` (attention sinks as an output scale) against
PyTorch, and small configurations against transformers' own models.

Oracles: the tensors autograd keeps (``saved_tensors_hooks``) and FlopCounterMode when
transformers 5.24's GraniteSWA eager attention (scores, masked; logsumexp; σ(lse - sink); softmax;
values; the product) runs on real tensors; ``sum(p.numel())`` and ``FlopCounterMode`` of
GraniteSWAForCausalLM / GraniteMoeSWAForCausalLM built from small configurations on the meta device
(eager attention), with windows shorter than the sequence, layer patterns of no period and
layers without positions, which the default configurations do not show at T = 8.
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


def _granite_attention(q, k, v, sinks, mask):
    """transformers 5.24's granite_swa eager_attention_forward (one KV group)."""
    w = torch.matmul(q, k.transpose(2, 3)) * 0.5
    w = w + mask
    lse = torch.logsumexp(w, dim=-1)
    scale = (lse - sinks.view(1, -1, 1)).to(torch.float32).sigmoid()
    p = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
    o = torch.matmul(p, v)
    return o * scale.unsqueeze(-1).to(o.dtype)


def test_sink_scale_rules_and_what_eager_pytorch_saves():
    b, h, t, dh = 2, 4, 5, 3
    q, k, v = (torch.rand(b, h, t, dh, requires_grad=True) for _ in range(3))
    sinks = torch.rand(h, requires_grad=True)
    mask = torch.zeros(t, t)
    seen = {}
    inputs = {x.untyped_storage().data_ptr() for x in (q, k, v, sinks)}

    def pack(x):
        st = x.untyped_storage()
        if st.data_ptr() not in inputs:
            seen[st.data_ptr()] = st.nbytes()
        return x

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        _granite_attention(q, k, v, sinks, mask)
    s, z = (I(b), I(h), I(t), I(t)), (I(b), I(h), I(t), I(dh))
    op = ops.SinkScale(I(h))
    assert op.shape((s, z)) == z
    assert [(p.name, p.shape) for p in op.params((s, z))] == [("sinks", (h,))]
    mine = op.saved((s, z), z, Context(attention="eager"))
    # besides the sink scale's, eager attention keeps the softmax's output (the values matmul's
    # input, the same storage); the scores, lse, σ and Z are the sink scale's
    softmax_out = b * h * t * t * 4
    assert sum(seen.values()) == sum(numel(x.shape) for x in mine) * 4 + softmax_out
    assert len(seen) == len(mine) + 1
    with pytest.raises(symgpt.SymgptError, match="sink scale expects scores"):
        op.shape(((I(b), I(3), I(t), I(t)), z))


def test_sink_scale_adds_no_matmul():
    from torch.utils.flop_counter import FlopCounterMode

    b, h, t, dh = 2, 4, 5, 3
    q, k, v = (torch.rand(b, h, t, dh, requires_grad=True) for _ in range(3))
    with FlopCounterMode(display=False) as f:
        _granite_attention(q, k, v, torch.rand(h), torch.zeros(t, t))
    assert f.get_total_flops() == 2 * 2 * b * h * t * t * dh  # the two attention matmuls
    s, z = (I(b), I(h), I(t), I(t)), (I(b), I(h), I(t), I(dh))
    assert all(w.kind != "matmul" for w in ops.SinkScale(I(h)).forward((s, z), z))


def _hf_model(cfg):
    from transformers import AutoConfig, AutoModelForCausalLM

    c = dict(cfg)
    hf_cfg = AutoConfig.for_model(c.pop("model_type"), **c)
    with torch.device("meta"):
        kw = {"experts_implementation": "batched_mm"} if "moe" in cfg["model_type"] else {}
        return AutoModelForCausalLM.from_config(hf_cfg, attn_implementation="eager", **kw)


def _tiny(model_type, **changes):
    cfg = {"model_type": model_type, "vocab_size": 256, "hidden_size": 64, "intermediate_size": 96,
           "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 2,
           "max_position_embeddings": 64, "sliding_window": 4, **changes}
    if model_type == "granitemoe_swa":
        cfg.update(num_local_experts=6, num_experts_per_tok=2)
    return {**cfg, **changes}


CASES = [
    ("granite_swa", {}),
    ("granite_swa", {"layer_types": ["sliding_attention", "full_attention", "full_attention",
                                     "sliding_attention", "sliding_attention", "full_attention"],
                     "attention_bias": True, "tie_word_embeddings": False}),
    ("granite_swa", {"layer_rope_theta": [0, 10000, 10000, 10000, 0, 10000]}),
    ("granitemoe_swa", {}),
    ("granitemoe_swa", {"shared_intermediate_size": 48, "layer_types": ["full_attention"] * 6}),
]


@pytest.mark.parametrize("model_type, changes", CASES)
def test_small_configs(model_type, changes, tmp_path):
    cfg = _tiny(model_type, **changes)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    hf = _hf_model(cfg)
    m = symgpt.load(path, B=B, T=T)
    assert m.family.name == model_type
    assert m.params == param_count(hf)
    L = cfg["num_hidden_layers"]
    types = cfg.get("layer_types") or ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(L)]
    sliding, W, h, dh = types.count("sliding_attention"), 4, 4, 16
    band = sliding * 2 * 2 * B * h * T * (T - W) * dh  # eager computes the masked band too
    assert flop_count(hf, B, T) - m.quantity("flops.forward").value == band
    assert sum(p.numel() for n, p in hf.named_parameters() if n.endswith("sinks")) == L * h


def test_positions_off_outside_the_full_layers_are_refused(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(_tiny("granite_swa", layer_rope_theta=[10000, 0, 10000, 10000, 10000, 10000])))
    with pytest.raises(symgpt.SymgptError, match="layer_rope_theta"):
        symgpt.load(path)

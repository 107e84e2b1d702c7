"""DeepSeek Sparse Attention (deepseek_v32, glm_moe_dsa, axk2) against transformers, on small
non-default configurations whose T (12) is past ``index_topk`` (5), so the indexer really
selects: parameters (``sum(p.numel())``), forward FLOPs and forward + backward FLOPs
(``FlopCounterMode`` on tiny CPU models, eager attention and experts), and the indexer's own
ops against PyTorch. transformers runs the indexer under ``torch.no_grad``: its FLOPs are in
the forward, none in the backward, and autograd keeps nothing of it.
"""

import json

import pytest
import sympy
import torch

import symgpt
from oracles.measure import flop_count, param_count, saved_storages
from symgpt import ops
from symgpt.ops.base import Context

B, T = 2, 12
TOPK = 5

TINY = {"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 4,
        "vocab_size": 256, "max_position_embeddings": 64, "tie_word_embeddings": False,
        "intermediate_size": 80, "moe_intermediate_size": 24, "n_routed_experts": 8, "num_experts_per_tok": 2,
        "n_shared_experts": 1, "first_k_dense_replace": 1, "q_lora_rank": 24, "kv_lora_rank": 32,
        "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 12, "n_group": 2, "topk_group": 1,
        "index_topk": TOPK, "index_head_dim": 16, "index_n_heads": 3}


def _hf(model_type, **over):
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    kw = {k: v for k, v in {**TINY, **over}.items() if v is not None}
    cfg = AutoConfig.for_model(model_type, **kw)
    return cfg, AutoModelForCausalLM.from_config(cfg, attn_implementation="eager", experts_implementation="eager")


def _load(cfg, tmp_path, **sizes):
    path = tmp_path / f"{cfg.model_type}.json"
    data = json.loads(cfg.to_json_string(use_diff=False))
    data["architectures"] = [{"deepseek_v32": "DeepseekV32ForCausalLM", "glm_moe_dsa": "GlmMoeDsaForCausalLM",
                              "axk2": "AXK2ForCausalLM"}[cfg.model_type]]
    path.write_text(json.dumps(data))
    return symgpt.load(path, **sizes)


#: A.X-K2 (AXK2Config has no first_k_dense_replace field: its layers' kinds are listed)
OVER = {"axk2": dict(first_k_dense_replace=None, mlp_layer_types=["dense", "sparse", "sparse"], gated_norm_rank=6)}


@pytest.mark.parametrize("model_type", ["deepseek_v32", "glm_moe_dsa", "axk2"])
def test_counts_equal_transformers_past_the_top_k(model_type, tmp_path):
    cfg, hf = _hf(model_type, **OVER.get(model_type, {}))
    m = _load(cfg, tmp_path, B=B, T=T)
    assert m.params == param_count(hf)
    assert m.quantity("flops.forward") == flop_count(hf, B, T)
    assert m.quantity("flops.train") == flop_count(hf, B, T, backward=True)


def test_the_indexer_adds_forward_flops_only(tmp_path):
    """The same model with the indexer's FLOPs by hand: per layer, wq_b, wk, weights_proj
    (2 FLOPs per multiply-add, B·T tokens), the H·T×T scores of D and their head-weighted sum."""
    cfg, hf = _hf("deepseek_v32")
    m = _load(cfg, tmp_path, B=B, T=T)
    H, D, r, d, L = 3, 16, 24, 64, 3
    per_layer = 2 * B * T * (r * H * D + d * D + d * H) + 2 * B * H * T * T * D + 2 * B * T * H * T
    # the same layers without an indexer: DeepSeek-V3's attention with the same sizes
    v3 = symgpt.load("deepseek_v3", B=B, T=T, L=L, d=d, h=4, V=256, d_ff=24, E=8, k=2, dense_ff=80, shared_ff=24,
                     dense_layers=1, q_lora_rank=24, kv_lora_rank=32, qk_nope_dim=16, qk_rope_dim=8, v_head_dim=12,
                     n_group=2, topk_group=1)
    def q(model, name, **kw):
        return model.quantity(name, **kw).value

    assert q(m, "flops.forward") - q(v3, "flops.forward") == L * per_layer
    assert q(m, "flops.backward") == q(v3, "flops.backward")
    opts = dict(convention="pytorch-cpu", precision="fp32", causal_mask_saved=False)
    assert q(m, "memory.activations", **opts) == q(v3, "memory.activations", **opts)
    # the cache: the latent and rotary key, and the indexer's key (D per token per layer)
    assert q(m, "memory.kv_cache", precision="fp32") - q(v3, "memory.kv_cache", precision="fp32") == L * B * T * D * 4


def test_the_indexer_runs_without_gradient():
    """transformers' DeepseekV32Indexer keeps nothing for backward (torch.no_grad), even when its
    inputs need gradients, and its parameters get none."""
    cfg, hf = _hf("deepseek_v32")
    attn = hf.model.layers[1].self_attn
    x = torch.randn(B, T, 64, requires_grad=True)
    q = torch.randn(B, T, 24, requires_grad=True)
    pos = hf.model.rotary_emb(x, torch.arange(T)[None])
    mask = torch.zeros(B, T, T)
    assert saved_storages(lambda inp: attn.indexer(inp, q, pos, mask, None), x) == {}
    out = attn.indexer(x, q, pos, mask, None)
    assert out.shape == (B, T, TOPK) and not out.requires_grad


def test_indexer_ops_against_pytorch():
    from torch.utils.flop_counter import FlopCounterMode

    Bs, H, Tq, Tk = 2, 3, 7, 9
    s = torch.randn(Bs, H, Tq, Tk, requires_grad=True)
    w = torch.randn(Bs, Tq, H, requires_grad=True)
    with FlopCounterMode(display=False) as fwd:
        out = torch.matmul(w.unsqueeze(-2), s.transpose(1, 2)).squeeze(-2)  # transformers' [B,S,1,H]@[B,S,H,T]
    with FlopCounterMode(display=False) as bwd:
        out.sum().backward()
    op = ops.HeadWeightedSum()
    shapes = (tuple(sympy.Integer(v) for v in s.shape), tuple(sympy.Integer(v) for v in w.shape))
    assert op.shape(shapes) == tuple(out.shape)
    assert sum(2 * x.count for x in op.forward(shapes, op.shape(shapes))) == fwd.get_total_flops()
    both = op.backward(shapes, op.shape(shapes), Context(needs_grad=(True, True)))
    assert sum(2 * x.count for x in both) == bwd.get_total_flops()
    idx = torch.topk(out.detach(), TOPK, dim=-1).indices
    top = ops.TopKIndices(sympy.Min(TOPK, Tk))
    assert top.shape((op.shape(shapes),)) == tuple(idx.shape)
    mask = ops.IndexMask()
    assert mask.shape((shapes[0], tuple(sympy.Integer(v) for v in idx.shape))) == tuple(s.shape)
    assert top.backward((), (), Context()) == () and mask.saved((), (), Context()) == ()

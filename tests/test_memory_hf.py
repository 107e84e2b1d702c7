"""Activation memory against what transformers' eager modules really save: tiny CPU models of
each family (fp32, eager attention) under ``torch.autograd.graph.saved_tensors_hooks``
(tests/oracles/measure.py), at B = 1 and B = 3.

``pytorch-cpu`` follows the ``hf-eager`` implementation; ``--implementation fused`` is the ideal
of one kernel per op, and the difference between the two is exactly the storage each
implementation cause adds (hand arithmetic below). HF's eager attention adds its causal mask as
a float tensor (nothing saved: ``causal_mask_saved=False``); the loss is left out (HF shifts the
labels first).
"""

import json

import pytest
import torch

import symgpt
from oracles.measure import saved_tensors

T, d, h, L, FF, V = 7, 64, 4, 2, 40, 256
BASE = {"hidden_size": d, "num_hidden_layers": L, "num_attention_heads": h, "vocab_size": V,
        "max_position_embeddings": 64, "tie_word_embeddings": False, "intermediate_size": FF}
FAMILIES = {
    "llama": dict(num_key_value_heads=2),
    "mistral": dict(num_key_value_heads=2, sliding_window=32),
    "qwen2": dict(num_key_value_heads=2),
    "qwen3": dict(num_key_value_heads=2, head_dim=16),
    "gemma2": dict(num_key_value_heads=2, head_dim=16, query_pre_attn_scalar=16, sliding_window=32),
    "gemma3_text": dict(num_key_value_heads=2, head_dim=16, query_pre_attn_scalar=16, sliding_window=32,
                        sliding_window_pattern=2),
    "phi": dict(partial_rotary_factor=0.5),
    "starcoder2": dict(num_key_value_heads=2),
    "olmo2": dict(),
    # families declared before Qwen3, Gemma 2/3, Phi-2, StarCoder2 and OLMo 2
    "gemma": dict(num_key_value_heads=1, head_dim=16),             # one KV head: stride-0 repeat at B = 1
    "gpt_neox": dict(),                                              # fused QKV: V a view of it
    "opt": dict(ffn_dim=FF, dropout=0.0),                            # positions from the mask, per row
    "phi3": dict(num_key_value_heads=4, pad_token_id=0),
    # multi-query: K and V taken as fused_qkv[..., [-2], :], [..., [-1], :] (list indices kept)
    "falcon": dict(multi_query=True, new_decoder_architecture=False, parallel_attn=True, bias=False,
                   alibi=False),
    # gelu_new (a composite tanh-GELU), Conv1D (addmm) projections, learned positions
    # new_decoder_architecture with 2 KV heads: still one-entry indices, [:, :, :, [-2]]
    "falcon-new": dict(model_type="falcon", new_decoder_architecture=True, num_kv_heads=2, parallel_attn=True,
                       bias=False, alibi=False),
    # Falcon-RW: ALiBi, h_kv = h, K and V views fused_qkv[..., 1, :] and [..., 2, :] (at B = 1 the
    # batched matmuls keep the whole fused QKV, at B > 1 copies of K and V)
    "falcon-rw": dict(model_type="falcon", new_decoder_architecture=False, multi_query=False, parallel_attn=False,
                      bias=True, alibi=True),
    "gpt2": dict(n_embd=d, n_layer=L, n_head=h, n_positions=64, n_inner=FF, resid_pdrop=0.0,
                 embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0),
    "mixtral": dict(num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2),
    # mixtures: transformers' eager expert loop
    "qwen2_moe": dict(num_key_value_heads=2, moe_intermediate_size=24, num_experts=6, num_experts_per_tok=2,
                      shared_expert_intermediate_size=40, mlp_only_layers=[1]),
    "qwen3_moe": dict(num_key_value_heads=2, head_dim=16, moe_intermediate_size=24, num_experts=6,
                      num_experts_per_tok=2, norm_topk_prob=True),
    "deepseek_v2": dict(moe_intermediate_size=24, n_routed_experts=6, num_experts_per_tok=2, n_shared_experts=2,
                        first_k_dense_replace=1, q_lora_rank=None, kv_lora_rank=32, qk_nope_head_dim=16,
                        qk_rope_head_dim=8, v_head_dim=12),
    "deepseek_v3": dict(num_key_value_heads=4, moe_intermediate_size=24, n_routed_experts=8,
                        num_experts_per_tok=2, n_shared_experts=1, first_k_dense_replace=1, q_lora_rank=24,
                        kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12, n_group=2,
                        topk_group=1),
}


def _measure(model_type, B, tmp_path, loss=False):
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = {**BASE, **FAMILIES[model_type]}
    model_type = cfg.pop("model_type", model_type)  # a case name of its own ("falcon-new")
    torch.manual_seed(0)
    hf = AutoModelForCausalLM.from_config(AutoConfig.for_model(model_type, **cfg), attn_implementation="eager",
                                          experts_implementation="eager")
    measured = sum(e["nbytes"] for e in saved_tensors(hf.float(), B, T, dtype=torch.float32, with_loss=loss))
    path = tmp_path / f"{model_type}.json"
    path.write_text(json.dumps({"model_type": model_type, **cfg}))
    m = symgpt.load(path, B=B, T=T, loss=loss)
    opts = dict(convention="pytorch-cpu", precision="fp32", causal_mask_saved=False)
    return measured, m.quantity("memory.activations", **opts), m.quantity("memory.activations",
                                                                           implementation="fused", **opts)


#: what hf-eager keeps beyond the fused ideal, by hand: (B) -> bytes (fp32)
EXTRA = {
    # gelu_new written as PyTorch ops keeps tanh(·), x/2 and 1 + tanh(·) besides x, per layer
    "phi": lambda B: L * 3 * B * T * FF * 4,
    "gpt2": lambda B: L * 3 * B * T * FF * 4,
    # each Gemma norm builds 1 + w (4 per layer and the final one, of d), and the embedding
    # normalizer is a saved 0-dim tensor
    "gemma2": lambda B: (4 * L + 1) * d * 4 + 4,
    # Gemma 3 adds its per-head Q/K norms (d_head = 16) to that
    "gemma3_text": lambda B: (4 * L + 1) * d * 4 + 2 * L * 16 * 4 + 4,
    # every (token, expert) pair of the loop keeps its two indices (16 bytes), the gathered token,
    # the expert's output and the weighted output (d each) and its weight, where a fused kernel
    # keeps the k outputs and the k weights; renormalising the top-k keeps k + 1 numbers a token
    "qwen3_moe": lambda B: L * B * T * 2 * (16 + 2 * d * 4) + L * B * T * (2 + 1) * 4,
    # one MoE layer (layer 1 is MLP-only), no renormalisation
    "qwen2_moe": lambda B: 1 * B * T * 2 * (16 + 2 * d * 4),
}


@pytest.mark.parametrize("B", [1, 3])
@pytest.mark.parametrize("model_type", sorted(FAMILIES))
def test_hf_eager_activations_equal_saved_tensors(model_type, B, tmp_path):
    measured, eager, fused = _measure(model_type, B, tmp_path)
    assert eager == measured
    if model_type in EXTRA or model_type in ("llama", "mistral", "qwen2", "qwen3", "starcoder2", "olmo2"):
        assert eager.value - fused.value == EXTRA.get(model_type, lambda B: 0)(B)


@pytest.mark.parametrize("B", [2])
def test_gpt2_hf_eager_at_b2(B, tmp_path):
    measured, eager, _ = _measure("gpt2", B, tmp_path)
    assert eager == measured


def test_falcon_list_indices_kept_under_hf_eager(tmp_path):
    """Falcon's K and V list indices: two int64 tensors of one entry a layer, 2·L·8 bytes
    under hf-eager (by hand), none in the fused ideal or when K and V are plain slices."""
    path = tmp_path / "falcon.json"
    path.write_text(json.dumps({"model_type": "falcon", **BASE, **FAMILIES["falcon"]}))
    opts = dict(convention="pytorch-cpu", precision="fp32", causal_mask_saved=False)
    eager = {i: symgpt.load(path, B=3, T=T, loss=False, kv_index=i).quantity("memory.activations", **opts)
             for i in (True, False)}
    assert eager[True].value - eager[False].value == 2 * L * 8
    fused = {i: symgpt.load(path, B=3, T=T, loss=False, kv_index=i).quantity(
        "memory.activations", implementation="fused", **opts) for i in (True, False)}
    assert fused[True].value == fused[False].value


def test_gemma3_sliding_layers_have_rotary_tables_of_their_own():
    arch = symgpt.load("gemma3_text").arch
    from symgpt.graph import roles

    tables = arch.find(roles.ROTARY_TABLE)
    assert len(tables) == 2
    readers = {t: {arch.stack_of(n) for n in arch.graph.successors(t)} for t in tables}
    assert readers == {"embedding/rotary": {"full_blocks"}, "embedding/rotary_local": {"blocks"}}


@pytest.mark.parametrize("B", [1, 2])
@pytest.mark.parametrize("model_type", ["gpt2", "llama", "opt", "falcon", "gemma", "falcon-rw"])
def test_hf_eager_activations_with_the_loss(model_type, B, tmp_path):
    """With the labels (transformers' ForCausalLMLoss), the loss keeps the fp32 log-probabilities
    (B·T·V), nll_loss's 0-dim total weight (4 bytes) and the shifted labels: ``labels`` padded to
    (B, T + 1) with the ignored index, then ``labels[..., 1:].contiguous()`` -- a view at B = 1
    (the padded storage, 8·(T + 1) bytes), a copy of 8·B·T bytes otherwise. By hand, above the
    same count without the loss."""
    measured, eager, fused = _measure(model_type, B, tmp_path, loss=True)
    assert eager == measured
    _, without, without_fused = _measure(model_type, B, tmp_path)
    labels = 8 * (T + 1) if B == 1 else 8 * B * T
    assert eager.value - without.value == 4 * B * T * V + 4 + labels
    assert fused.value - without_fused.value == 4 * B * T * V + 4 + 8 * B * T  # the fused ideal: B·T labels

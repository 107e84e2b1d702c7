"""Mistral 4 (``read_mistral4`` in ``symgpt/families/deepseek.py``): parameters and forward and
training FLOPs against a tiny CPU ``Mistral4ForCausalLM`` (eager attention and experts;
``FlopCounterMode``): every token runs exactly k routed experts and the shared one, whatever the
softmax router picks."""

from __future__ import annotations

import json

import symgpt
from oracles.measure import flop_count, param_count

import torch
import transformers

B, T = 2, 8


def test_mistral4_params_and_flops_on_a_tiny_real_model(tmp_path):
    cfg = {"model_type": "mistral4", "architectures": ["Mistral4ForCausalLM"], "hidden_size": 64,
           "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 256,
           "max_position_embeddings": 64, "head_dim": 8, "rope_interleave": False,
           "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                               "llama_4_scaling_beta": 0.1, "original_max_position_embeddings": 64}, "tie_word_embeddings": False, "intermediate_size": 80,
           "moe_intermediate_size": 24, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1,
           "first_k_dense_replace": 1, "q_lora_rank": 24, "kv_lora_rank": 32, "qk_nope_head_dim": 16,
           "qk_rope_head_dim": 8, "v_head_dim": 12, "n_group": 2, "topk_group": 1}
    # head_dim = qk_rope_head_dim and the non-interleaved rotary: what the tiny model's rotary tables fit (the
    # rotary is elementwise: the same matmuls either way)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    torch.manual_seed(0)
    c = {k: v for k, v in cfg.items() if k not in ("model_type", "architectures")}
    hf = transformers.Mistral4ForCausalLM._from_config(transformers.Mistral4Config(**c), attn_implementation="eager",
                                                       experts_implementation="eager")
    m = symgpt.load(str(path), B=B, T=T)
    assert m.params == param_count(hf)
    assert m.quantity("flops.forward") == flop_count(hf, B, T)
    assert m.quantity("flops.train") == flop_count(hf, B, T, backward=True)

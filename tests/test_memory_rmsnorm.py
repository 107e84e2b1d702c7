"""RMSNorm's saved tensors under the ``pytorch-cpu`` convention, measured: a tiny transformers
Llama (fp32, CPU, eager attention) under ``saved_tensors_hooks`` (tests/oracles/measure.py).

transformers' ``LlamaRMSNorm`` is unfused: ``x.pow(2)`` keeps x, ``rsqrt`` keeps rstd (B, T, 1),
and ``weight * (x·rstd)`` keeps x·rstd (B, T, d) -- three storages per norm where a fused kernel
keeps two. HF's eager attention adds its causal mask as a float tensor (nothing saved), hence
``causal_mask_saved=False``; the loss is left out (HF shifts the labels first). The rotary
cos/sin tables are made once, outside the layers, and saved by every layer: one storage.
"""

import sys
from pathlib import Path

import pytest
import torch

import symgpt

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oracles.measure import saved_tensors  # noqa: E402

from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

B, T = 3, 7


@pytest.mark.parametrize("h_kv, d_ff, layers", [(4, 40, 1), (2, 24, 1), (4, 40, 2), (2, 24, 3)])
def test_unfused_rmsnorm_saves_x_rstd(h_kv, d_ff, layers):
    cfg = LlamaConfig(vocab_size=97, hidden_size=16, intermediate_size=d_ff, num_hidden_layers=layers,
                      num_attention_heads=4, num_key_value_heads=h_kv, max_position_embeddings=32,
                      attn_implementation="eager", tie_word_embeddings=False)
    torch.manual_seed(0)
    tm = LlamaForCausalLM(cfg).to(torch.float32)
    entries = saved_tensors(tm, B, T, dtype=torch.float32, with_loss=False)
    measured = sum(e["nbytes"] for e in entries)
    m = symgpt.load("llama", L=layers, d=16, h=4, h_kv=h_kv, V=97, d_ff=d_ff, B=B, T=T, loss=False)
    opts = dict(precision="fp32", causal_mask_saved=False)
    cpu = m.quantity("memory.activations", convention="pytorch-cpu", **opts)
    assert cpu == measured
    # 2L + 1 norms (attention and FFN per layer, final), each keeping x·rstd: B·T·d fp32 numbers more than
    # x and rstd alone (the rule with the choice off)
    fused = m.quantity("memory.activations", convention="pytorch-cpu", rms_normed_saved=False, **opts)
    assert cpu.value - fused.value == (2 * layers + 1) * B * T * 16 * 4
    assert sum(1 for e in entries if e["shape"] == (B, T, 1)) == 2 * layers + 1   # one rstd per norm

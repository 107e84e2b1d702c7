"""KV cache of sliding-window models: conventions.md §7's formula with Min(T, W - 1) positions kept.

transformers' ``DynamicSlidingWindowLayer.update`` (cache_utils) concatenates the new keys to the
cached ones and keeps ``full_key_states[:, :, -W + 1:, :]``: the last W - 1 positions between
decode steps, and a step attends to those and its own token (W). The oracle is the cache a real
tiny model returns: the ``nbytes`` of every layer's key and value tensors, below, at, and past the
window, right after the prefill and after one decode step. (The tensor kept is a view: its
storage is the whole concatenation, T positions right after the prefill and W after a step; the
tensor's own bytes are what the cache holds once the next step has run.)
"""

import json

import pytest
import torch

import symgpt

d, h, L, V, W = 64, 4, 2, 256, 4
TINY = {"hidden_size": d, "num_hidden_layers": L, "num_attention_heads": h, "num_key_value_heads": 2,
        "vocab_size": V, "max_position_embeddings": 64, "tie_word_embeddings": False, "intermediate_size": 40}
CASES = {
    "mistral": dict(sliding_window=W),  # every layer windowed
    # Gemma 3: sliding and full layers alternate (sliding_window_pattern = 2)
    "gemma3_text": dict(head_dim=16, query_pre_attn_scalar=16, sliding_window=W, sliding_window_pattern=2),
}


def _cache_nbytes(model, B, T, steps):
    torch.manual_seed(1)
    ids = torch.randint(0, V, (B, T))
    with torch.no_grad():
        cache = model(input_ids=ids, use_cache=True).past_key_values
        for _ in range(steps):
            cache = model(input_ids=ids[:, :1], past_key_values=cache, use_cache=True).past_key_values
    return sum(layer.keys.nbytes + layer.values.nbytes for layer in cache.layers)


@pytest.mark.parametrize("case", sorted(CASES))
def test_sliding_kv_cache_equals_the_cache_transformers_keeps(case, tmp_path):
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    cfg = {**TINY, **CASES[case]}
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(AutoConfig.for_model(case, **cfg), attn_implementation="eager")
    model = model.float().eval()
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": case, **cfg}))
    B = 2
    for T in (W - 2, W - 1, W, W + 1, 2 * W + 1):  # below, at and past the window
        for steps in (0, 1):
            kept = _cache_nbytes(model, B, T, steps)
            m = symgpt.load(path, B=B, T=T + steps)
            assert m.quantity("memory.kv_cache", precision="fp32").value == kept, (T, steps)
            assert m.quantity("inference.kv_cache", kv_bits=32).value == kept, (T, steps)


@pytest.mark.parametrize("T,kept", [(2048, 2048), (4095, 4095), (4096, 4095), (8192, 4095)])
def test_mistral_kv_cache_keeps_the_window(T, kept):
    # Mistral-7B: L = 32, h_kv = 8, d_head = 128, W = 4096; bf16 = 2 bytes; per token 2·L·h_kv·d_head·bytes,
    # Min(T, W - 1) positions (DynamicSlidingWindowLayer)
    expected = 2 * 32 * 8 * 128 * 2 * kept
    q = symgpt.load("mistral-7b", B=1, T=T).quantity("memory.kv_cache", precision="bf16")
    assert q.value == expected


def test_llama_kv_cache_has_no_window():
    # LLaMA-7B (MHA: h_kv = h = 32, d_head = 128), fp16 at T = 4096: 2·32·32·128·2·4096
    q = symgpt.load("llama-7b", B=1, T=4096).quantity("memory.kv_cache", precision="fp16")
    assert q.value == 2 * 32 * 32 * 128 * 2 * 4096

"""KV cache of sliding-window models: conventions.md §7's formula with Min(T, W) positions kept."""

import pytest

import symgpt


@pytest.mark.parametrize("T,kept", [(2048, 2048), (4096, 4096), (8192, 4096)])
def test_mistral_kv_cache_keeps_the_window(T, kept):
    # Mistral-7B: L = 32, h_kv = 8, d_head = 128, W = 4096; bf16 = 2 bytes; per token 2·L·h_kv·d_head·bytes
    expected = 2 * 32 * 8 * 128 * 2 * kept
    q = symgpt.load("mistral-7b", B=1, T=T).quantity("memory.kv_cache", precision="bf16")
    assert q.value == expected


def test_llama_kv_cache_has_no_window():
    # LLaMA-7B (MHA: h_kv = h = 32, d_head = 128), fp16 at T = 4096: 2·32·32·128·2·4096
    q = symgpt.load("llama-7b", B=1, T=4096).quantity("memory.kv_cache", precision="fp16")
    assert q.value == 2 * 32 * 32 * 128 * 2 * 4096

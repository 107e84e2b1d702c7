"""Default-convention FLOPs against FlopCounterMode on the HuggingFace GPT-2 (built from a config)."""

import pytest

import symgpt


@pytest.mark.parametrize("tied", [True, False])
def test_default_convention_equals_flopcountermode_on_hf_gpt2(tied):
    from oracles.measure import hf_flop_count

    config = {"model_type": "gpt2", "n_layer": 2, "n_head": 4, "n_embd": 64, "vocab_size": 1000,
              "n_positions": 64, "tie_word_embeddings": tied}
    m = symgpt.load("gpt2", tied=tied, L=2, h=4, d=64, V=1000, T_max=64, B=2, T=16)
    assert m.quantity("flops.forward") == hf_flop_count(config, 2, 16)
    assert m.quantity("flops.train") == hf_flop_count(config, 2, 16, backward=True)


@pytest.mark.parametrize("family,config", [
    ("llama", {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
               "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 500,
               "max_position_embeddings": 64, "tie_word_embeddings": False}),
    ("qwen2", {"model_type": "qwen2", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
               "num_key_value_heads": 1, "intermediate_size": 96, "vocab_size": 500,
               "max_position_embeddings": 64, "tie_word_embeddings": True}),
])
def test_gqa_families_equal_flopcountermode(family, config):
    # grouped-query attention: K and V have h_kv heads, repeated to h before the attention matmuls
    from oracles.measure import hf_flop_count

    m = symgpt.load(family, tied=config["tie_word_embeddings"], L=2, d=64, h=4, h_kv=config["num_key_value_heads"],
                    d_ff=96, V=500, T_max=64, B=2, T=16)
    assert m.quantity("flops.forward") == hf_flop_count(config, 2, 16)
    assert m.quantity("flops.train") == hf_flop_count(config, 2, 16, backward=True)
    # KV cache: 2 · L · h_kv · d_head · bytes per token
    assert m.quantity("memory.kv_cache", precision="bf16") == 2 * 2 * config["num_key_value_heads"] * 16 * 2 * 2 * 16

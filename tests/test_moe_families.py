"""The mixture-of-experts decoders and the multi-latent-attention models added after DeepSeek
(OLMoE, MiniMax-M2, Mellum, GLM-4.5 and the types transformers builds like it, Kolibri 1,
Phi-3.5-MoE, MiniCPM3, Youtu, the GLM-4 MoE lite model) against transformers 5.24.0.

Oracle: each type's causal-LM class built on the meta device from a small configuration that
shows what the default one hides (dense layers before the experts, sliding-window layers, NoPE
layers, Q/K norms, biases), with the experts run as ``batched_mm`` (every token through its k
experts, as the zoo table measures): ``sum(p.numel() for p in model.parameters())`` and
FlopCounterMode's forward FLOPs. Past a sliding window eager attention computes the whole T x T
square where symgpt counts the Min(T, W) keys a windowed kernel computes: the two differ by
exactly the masked band of the sliding layers, which the test works out by hand.
"""

from __future__ import annotations

import json

import pytest

import symgpt
from oracles.measure import flop_count, meta_causal_lm, param_count
from symgpt.core.errors import SymgptError

B = 1
SMALL = {"hidden_size": 64, "num_attention_heads": 4, "vocab_size": 128, "max_position_embeddings": 64,
         "tie_word_embeddings": False}

#: name -> (model_type, fields, T, sliding layers, window)
CASES = {
    "olmoe": ("olmoe", dict(num_hidden_layers=2, num_key_value_heads=2, intermediate_size=24, num_experts=6,
                            num_experts_per_tok=2, norm_topk_prob=True, attention_bias=True), 8, 0, None),
    "minimax_m2": ("minimax_m2", dict(num_hidden_layers=2, num_key_value_heads=2, head_dim=8, intermediate_size=24,
                                      num_local_experts=6, num_experts_per_tok=2,
                                      rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                       "partial_rotary_factor": 0.5}), 8, 0, None),
    "mellum-dense-first": ("mellum", dict(num_hidden_layers=3, num_key_value_heads=2, head_dim=16,
                                          intermediate_size=40, moe_intermediate_size=24, num_local_experts=6,
                                          num_experts_per_tok=2, layer_types=["full_attention"] * 3,
                                          mlp_layer_types=["dense", "sparse", "sparse"]), 8, 0, None),
    "mellum-windows": ("mellum", dict(num_hidden_layers=4, num_key_value_heads=2, head_dim=16,
                                      intermediate_size=40, moe_intermediate_size=24, num_local_experts=6,
                                      num_experts_per_tok=2, sliding_window=4,
                                      layer_types=["sliding_attention", "full_attention"] * 2,
                                      mlp_layer_types=["sparse"] * 4), 12, 2, 4),
    "glm4_moe": ("glm4_moe", dict(num_hidden_layers=3, num_attention_heads=6, num_key_value_heads=2,
                                  intermediate_size=40, moe_intermediate_size=24, n_routed_experts=8,
                                  num_experts_per_tok=2, n_shared_experts=2, first_k_dense_replace=2,
                                  n_group=2, topk_group=1, attention_bias=True, use_qk_norm=True), 8, 0, None),
    "sarvam_moe": ("sarvam_moe", dict(num_hidden_layers=2, num_key_value_heads=2, head_dim=16,
                                      intermediate_size=40, moe_intermediate_size=24, num_experts=8,
                                      num_experts_per_tok=2, num_shared_experts=1, use_qkv_bias=True), 8, 0, None),
    "solar_open": ("solar_open", dict(num_hidden_layers=2, num_key_value_heads=2, head_dim=16,
                                      moe_intermediate_size=24, n_routed_experts=8, num_experts_per_tok=2,
                                      n_shared_experts=1), 8, 0, None),
    "kolibri1": ("kolibri1", dict(num_hidden_layers=6, num_key_value_heads=2, head_dim=16, sliding_window=4,
                                  layer_types=None, moe_intermediate_size=32, num_local_experts=8,
                                  num_experts_per_tok=2, shared_expert_intermediate_size=24), 16, 5, 4),
    "phimoe": ("phimoe", dict(num_hidden_layers=2, num_key_value_heads=2, intermediate_size=24,
                              num_local_experts=4, attention_bias=True, lm_head_bias=True), 8, 0, None),
    "minicpm3": ("minicpm3", dict(num_hidden_layers=2, num_key_value_heads=4, intermediate_size=48, q_lora_rank=24, kv_lora_rank=16,
                                  qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=12, mlp_bias=True,
                                  attention_bias=True, tie_word_embeddings=True), 8, 0, None),
    "youtu": ("youtu", dict(num_hidden_layers=2, num_key_value_heads=4, intermediate_size=48, q_lora_rank=None,
                            kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=12), 8, 0, None),
    "glm4_moe_lite": ("glm4_moe_lite", dict(num_hidden_layers=3, num_key_value_heads=4, intermediate_size=48,
                                            moe_intermediate_size=24, n_routed_experts=8, num_experts_per_tok=2,
                                            n_shared_experts=1, q_lora_rank=24, kv_lora_rank=16,
                                            qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=12,
                                            mlp_layer_types=["dense", "dense", "sparse"]), 8, 0, None),
}


def _hf(model_type: str, fields: dict):
    return meta_causal_lm(model_type, fields)


def _config(tmp_path, model_type, fields):
    path = tmp_path / f"{model_type}.json"
    path.write_text(json.dumps({"model_type": model_type, **SMALL, **fields}))
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_params_and_forward_flops_match_transformers(name, tmp_path):
    model_type, fields, T, sliding, W = CASES[name]
    fields = {**SMALL, **fields}
    hf = _hf(model_type, fields)
    m = symgpt.load(_config(tmp_path, model_type, fields), B=B, T=T)
    assert m.params == param_count(hf)
    band = 0
    if sliding:  # the masked band eager attention computes in each sliding layer: 2 matmuls, 2 FLOPs each
        h, dh = fields["num_attention_heads"], fields["head_dim"]
        band = sliding * 2 * 2 * B * h * T * (T - W) * dh
    assert flop_count(hf, B, T) - m.quantity("flops.forward").value == band


def test_kolibri_full_layers_have_no_rotary_positions_when_a_window_is_set(tmp_path):
    """Kolibri1Attention rotates Q and K only ``if self.sliding_window is None or self.is_sliding``
    (transformers 5.24.0): with a window, its full-attention layers are NoPE."""
    fields = {**SMALL, **CASES["kolibri1"][1]}
    arch = symgpt.load(_config(tmp_path, "kolibri1", fields)).arch
    rotary = {n for n in arch.graph.nodes if n.endswith("q_rotary")}
    assert rotary and all(n.startswith("blocks/") for n in rotary)
    assert any(n.startswith("full_blocks/") for n in arch.graph.nodes)
    full = {**fields, "layer_types": ["full_attention"] * 6}
    nope = symgpt.load(_config(tmp_path, "kolibri1", full)).arch
    assert not any(n.endswith("q_rotary") for n in nope.graph.nodes)
    rope = symgpt.load(_config(tmp_path, "kolibri1", {**full, "sliding_window": None})).arch
    assert any(n.endswith("q_rotary") for n in rope.graph.nodes)


@pytest.mark.parametrize("model_type, fields, why", [
    ("phimoe", {"num_experts_per_tok": 3}, "num_experts_per_tok other than 2"),
    ("mellum", {"num_hidden_layers": 3, "mlp_layer_types": ["sparse", "dense", "sparse"]}, "mlp_layer_types"),
    ("olmoe", {"head_dim": 32}, "head_dim"),
    ("glm4_moe_lite", {"num_hidden_layers": 3, "num_key_value_heads": 4, "mlp_layer_types": ["dense", "sparse", "dense"]}, "mlp_layer_types"),
])
def test_what_is_not_modelled_is_refused_in_one_line(model_type, fields, why, tmp_path):
    with pytest.raises(SymgptError, match=why) as err:
        symgpt.load(_config(tmp_path, model_type, fields))
    assert "\n" not in str(err.value)


def test_glm_4_5_air_preset_is_its_config_and_transformers_count():
    """zai-org/GLM-4.5-Air: 106B parameters in total (its model card); the preset, the config file
    and transformers' Glm4MoeForCausalLM agree to the parameter."""
    from pathlib import Path
    from oracles.measure import _hf_model

    path = Path(__file__).parent / "configs" / "glm-4.5-air.json"
    n = param_count(_hf_model(json.loads(path.read_text()), "meta", "eager"))
    assert symgpt.load(path).params == n == symgpt.load("glm-4.5-air").params
    assert n // 10**9 == 106

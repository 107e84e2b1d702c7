"""The second group of mixture-of-experts decoders (FlexOlmo, Aria's language model, Cohere2-MoE,
EXAONE-MoE, Hunyuan-V3, ERNIE 4.5 MoE, MiniMax-M3's language model) against transformers 5.24.0.

Oracle: each type's causal-LM class built on the meta device from a small configuration showing
what the default one hides (grouped-query heads, dense first layers, sliding-window layers past
their window, shared experts, biases), experts run as ``batched_mm`` as the zoo table measures:
``sum(p.numel() for p in model.parameters())`` and FlopCounterMode's forward FLOPs. Past a sliding
window eager attention computes the whole T x T square where symgpt counts the Min(T, W) keys: the
two differ by exactly the masked band of the sliding layers, worked out by hand below.
"""

from __future__ import annotations

import json

import pytest

import symgpt
from oracles.measure import flop_count, meta_causal_lm, param_count
from symgpt.core.errors import SymgptError

B = 1
SMALL = {"hidden_size": 64, "num_attention_heads": 4, "vocab_size": 128, "max_position_embeddings": 64,
         "tie_word_embeddings": False, "pad_token_id": 0}

#: name -> (model_type, fields, T, sliding layers, window)
CASES = {
    "flex_olmo-gqa": ("flex_olmo", dict(num_hidden_layers=2, num_key_value_heads=2, intermediate_size=24,
                                        num_experts=6, num_experts_per_tok=2, norm_topk_prob=True,
                                        attention_bias=True), 8, 0, None),
    "aria_text": ("aria_text", dict(num_hidden_layers=2, num_key_value_heads=2, head_dim=16, intermediate_size=24,
                                    moe_num_experts=6, moe_topk=2, moe_num_shared_experts=3,
                                    attention_bias=True), 8, 0, None),
    "cohere2_moe-windows": ("cohere2_moe", dict(num_hidden_layers=4, num_key_value_heads=2, head_dim=16,
                                                intermediate_size=24, num_experts=6, num_experts_per_tok=2,
                                                sliding_window=4, sliding_window_pattern=2, layer_types=None,
                                                mlp_layer_types=None, num_shared_experts=2,
                                                shared_expert_combination_strategy="sum"), 12, 2, 4),
    "cohere2_moe-rmsnorm": ("cohere2_moe", dict(num_hidden_layers=2, num_key_value_heads=4, head_dim=16,
                                                intermediate_size=24, num_experts=4, layer_types=None,
                                                mlp_layer_types=None, sliding_window_pattern=2,
                                                rms_norm_eps=1e-6, tie_word_embeddings=True), 8, 0, None),
    "exaone_moe-dense-windows": ("exaone_moe", dict(num_hidden_layers=8, num_key_value_heads=2, head_dim=16,
                                                    intermediate_size=40, moe_intermediate_size=24, num_experts=8,
                                                    num_experts_per_tok=2, num_shared_experts=2,
                                                    first_k_dense_replace=5, sliding_window=4,
                                                    sliding_window_pattern=4, n_group=2, topk_group=1),
                                 12, 6, 4),
    "hy_v3-dense": ("hy_v3", dict(num_hidden_layers=3, num_key_value_heads=2, head_dim=16, intermediate_size=40,
                                  moe_intermediate_size=24, num_experts=8, num_experts_per_tok=2,
                                  num_shared_experts=2, mlp_layer_types=["dense", "dense", "sparse"],
                                  attention_bias=True), 8, 0, None),
    "ernie4_5_moe-dense": ("ernie4_5_moe", dict(num_hidden_layers=4, num_key_value_heads=2, intermediate_size=40,
                                                moe_intermediate_size=24, moe_num_experts=8, moe_k=2,
                                                moe_num_shared_experts=1, moe_layer_start_index=2,
                                                moe_layer_end_index=-1), 8, 0, None),
    "minimax_m3_vl_text-dense": ("minimax_m3_vl_text", dict(num_hidden_layers=3, num_key_value_heads=2, head_dim=16,
                                                            intermediate_size=24, dense_intermediate_size=40,
                                                            shared_intermediate_size=32, num_local_experts=8,
                                                            num_experts_per_tok=2,
                                                            mlp_layer_types=["dense", "sparse", "sparse"]),
                                 8, 0, None),
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
    m = symgpt.load(_config(tmp_path, model_type, {k: v for k, v in fields.items() if v is not None}), B=B, T=T)
    assert m.params == param_count(hf)
    band = 0
    if sliding:  # the masked band eager attention computes in each sliding layer: 2 matmuls, 2 FLOPs each
        h, dh = fields["num_attention_heads"], fields["head_dim"]
        band = sliding * 2 * 2 * B * h * T * (T - W) * dh
    assert flop_count(hf, B, T) - m.quantity("flops.forward").value == band


def test_ernie_score_bias_is_a_parameter_of_e_per_moe_layer(tmp_path):
    """Ernie4_5_MoeStatics holds e_score_correction_bias, (1, E) per MoE layer, as an nn.Parameter."""
    fields = {**SMALL, **CASES["ernie4_5_moe-dense"][1]}
    hf = _hf("ernie4_5_moe", fields)
    bias = sum(p.numel() for n, p in hf.named_parameters() if n.endswith("e_score_correction_bias"))
    assert bias == 8 * 2  # E = 8, layers 2 and 3 have experts
    m = symgpt.load(_config(tmp_path, "ernie4_5_moe", fields))
    assert any("moe_statics" in n for n in m.notes)


@pytest.mark.parametrize("model_type, fields, why", [
    ("aria_text", {"mlp_bias": True}, "mlp_bias"),
    ("aria_text", {"hidden_act": "gelu"}, "hidden_act"),
    ("cohere2_moe", {"num_shared_experts": 1}, "average"),
    ("cohere2_moe", {"expert_selection_fn": "sigmoid"}, "expert_selection_fn"),
    ("cohere2_moe", {"num_hidden_layers": 4, "mlp_layer_types": ["dense", "sparse", "sparse", "sparse"]},
     "mlp_layer_types"),
    ("exaone_moe", {"num_hidden_layers": 3, "mlp_layer_types": ["sparse", "dense", "sparse"]}, "mlp_layer_types"),
    ("hy_v3", {"mlp_bias": True}, "mlp_bias"),
    ("ernie4_5_moe", {"num_hidden_layers": 4, "moe_layer_end_index": 2}, "dense layers after"),
    ("ernie4_5_moe", {"use_bias": True}, "use_bias"),
    ("minimax_m3_vl_text", {"num_hidden_layers": 2, "layer_types": ["minimax_m3_sparse", "full_attention"]},
     "minimax_m3_sparse"),
])
def test_what_is_not_modelled_is_refused_in_one_line(model_type, fields, why, tmp_path):
    with pytest.raises(SymgptError, match=why) as err:
        symgpt.load(_config(tmp_path, model_type, fields))
    assert "\n" not in str(err.value)

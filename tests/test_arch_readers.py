"""The model types read onto an existing builder (EXAONE, InternLM3, IQuest-Coder, CWM, ERNIE 4.5,
Granite, Helium, Ministral 3, SmolLM3, VaultGemma, GLM, Seed-OSS, OLMo 3, HyperCLOVA X, Granite
MoE, Sarvam MLA, the RoBERTa and BERT look-alikes, DeepSeek-V2's null k) beyond their default
configurations (which tests/test_zoo.py and tests/test_hfconfig.py check).

Oracles: ``sum(p.numel())`` of the transformers class built on the meta device from the same
config, ``FlopCounterMode`` on tiny CPU models for the mixtures (a router cannot route on meta),
and the refusals transformers' own configuration classes raise or the fields whose change
symgpt does not model.
"""

import json

import pytest
import sympy

import symgpt
from symgpt import SymgptError
from symgpt.core.symbols import L
from symgpt.model.model import from_config

from oracles.measure import _hf_model, flop_count, hf_param_count, param_count

SMALL = {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4, "vocab_size": 256,
         "max_position_embeddings": 64, "pad_token_id": 0}

#: configurations away from the defaults: GQA, biases, windows, aliases, heads that differ
VARIANTS = {
    "exaone": {**SMALL, "num_layers": 3, "num_key_value_heads": 2, "activation_function": "silu",
               "attention_bias": True},
    "internlm3": {**SMALL, "num_hidden_layers": 2, "num_key_value_heads": 2, "head_dim": 32, "qkv_bias": True,
                  "bias": True},
    "iquestcoder": {**SMALL, "num_hidden_layers": 2, "num_key_value_heads": 1, "head_dim": 8},
    "cwm": {**SMALL, "num_hidden_layers": 8, "num_key_value_heads": 2, "head_dim": 16, "sliding_window": 4},
    "ernie4_5": {**SMALL, "num_hidden_layers": 2, "num_key_value_heads": 2, "head_dim": 16, "use_bias": True,
                 "tie_word_embeddings": False},
    "granite": {**SMALL, "num_hidden_layers": 2, "num_key_value_heads": 2, "embedding_multiplier": 12.0,
                "residual_multiplier": 0.22, "logits_scaling": 8.0, "attention_multiplier": 0.125,
                "attention_bias": True, "mlp_bias": True, "tie_word_embeddings": True},
    "helium": {**SMALL, "num_hidden_layers": 2, "num_key_value_heads": 2, "head_dim": 16, "attention_bias": True},
    "ministral3": {**SMALL, "num_hidden_layers": 2, "num_key_value_heads": 2, "head_dim": 16, "sliding_window": 16},
    "smollm3": {**SMALL, "num_hidden_layers": 8, "num_key_value_heads": 2, "attention_bias": True,
                "tie_word_embeddings": False},
    "vaultgemma": {**SMALL, "num_hidden_layers": 4, "num_key_value_heads": 2, "head_dim": 16,
                   "query_pre_attn_scalar": 16, "sliding_window": 4},
    "glm": {**SMALL, "num_hidden_layers": 2, "num_key_value_heads": 2, "head_dim": 16, "partial_rotary_factor": 0.5},
    "seed_oss": {**SMALL, "num_hidden_layers": 2, "num_key_value_heads": 2, "head_dim": 16,
                 "attention_out_bias": True, "mlp_bias": True},
    "olmo3": {**SMALL, "num_hidden_layers": 8, "num_key_value_heads": 2, "sliding_window": 4},
    # with GQA the count tells Peri-LN (four norms of d) from OLMo 2's Q/K norms (h·d_head, h_kv·d_head)
    "hyperclovax": {**SMALL, "num_hidden_layers": 2, "num_key_value_heads": 2},
    "granitemoe": {**SMALL, "num_hidden_layers": 2, "num_key_value_heads": 2, "num_local_experts": 4,
                   "num_experts_per_tok": 2, "attention_bias": True},
    "granitemoeshared": {**SMALL, "num_hidden_layers": 2, "num_local_experts": 4, "num_experts_per_tok": 2,
                         "shared_intermediate_size": 40},
    "sarvam_mla": {**SMALL, "num_hidden_layers": 3, "num_experts": 6, "num_experts_per_tok": 2,
                   "moe_intermediate_size": 24, "kv_lora_rank": 32, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8,
                   "v_head_dim": 12, "num_shared_experts": 2},
    "deepseek_v2": {**SMALL, "num_hidden_layers": 3, "n_routed_experts": 6, "num_experts_per_tok": None,
                    "moe_intermediate_size": 24, "first_k_dense_replace": 1, "q_lora_rank": None,
                    "kv_lora_rank": 32, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 12},
}


@pytest.mark.parametrize("model_type", sorted(VARIANTS))
def test_params_equal_transformers_away_from_the_defaults(model_type):
    cfg = {"model_type": model_type, **VARIANTS[model_type]}
    m = from_config(cfg, model_type)
    assert m.family.name == model_type
    assert m.params == hf_param_count(cfg), model_type
    assert not [n for n in m.notes if "not understood" in n]


def test_hyperclovax_is_peri_ln_not_olmo2():
    cfg = {"model_type": "hyperclovax", **VARIANTS["hyperclovax"]}
    as_olmo2 = from_config({**cfg, "model_type": "olmo2"}, "x")
    assert from_config(cfg, "x").params != as_olmo2.params          # the default config hid it
    plain = {**cfg, "use_post_norm": False}
    assert from_config(plain, "x").params == hf_param_count(plain)   # the Identity post norms


def test_granitemoeshared_counts_the_shared_expert_only_when_it_has_a_width():
    cfg = {"model_type": "granitemoeshared", **VARIANTS["granitemoeshared"]}
    with_shared, without = from_config(cfg, "x"), from_config({**cfg, "shared_intermediate_size": 0}, "x")
    assert with_shared.params.value - without.params.value == 2 * 3 * 64 * 40  # a SwiGLU of width 40 per layer
    assert without.params.value == from_config({**cfg, "model_type": "granitemoe"}, "x").params.value


def _tiny_hf(cfg):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    c = dict(cfg)
    hf_cfg = AutoConfig.for_model(c.pop("model_type"), **c)
    return AutoModelForCausalLM.from_config(hf_cfg, attn_implementation="eager", experts_implementation="eager")


@pytest.mark.parametrize("model_type", ["granitemoe", "granitemoeshared", "sarvam_mla"])
def test_moe_flops_on_tiny_real_models(model_type, tmp_path):
    cfg = {"model_type": model_type, **VARIANTS[model_type], "tie_word_embeddings": False}
    path = tmp_path / f"{model_type}.json"
    path.write_text(json.dumps(cfg))
    hf = _tiny_hf(cfg)
    m = symgpt.load(path, B=2, T=8)
    assert m.params == param_count(hf)
    assert m.quantity("flops.forward") == flop_count(hf, 2, 8)


@pytest.mark.parametrize("model_type", ["cwm", "vaultgemma", "olmo3", "glm", "helium", "granite", "hyperclovax"])
def test_dense_forward_flops_equal_flopcountermode(model_type):
    # eager attention multiplies all T x T scores whatever the window: a window of T keeps the
    # two conventions together (windowed layers are costed over Min(T, W) keys)
    cfg = {"model_type": model_type, **VARIANTS[model_type]}
    if "sliding_window" in cfg:
        cfg["sliding_window"] = 8
    m = from_config(cfg, model_type).with_(B=2, T=8)
    assert m.quantity("flops.forward") == flop_count(_hf_model(cfg, "meta", "eager"), 2, 8)


# --- layer patterns ----------------------------------------------------------------------------
def test_cwm_full_layer_first_in_each_period_is_one_stack_of_floor_l_over_4():
    m = from_config({"model_type": "cwm", **VARIANTS["cwm"]}, "x")
    assert m.flags["window"] and m.flags["full_every"] == 4 and m.sizes["W"] == 4
    stacks = [(g.name, g.repeat) for g in m.arch.stacks()]
    assert stacks == [("blocks", L - sympy.floor(L / 4)), ("full_blocks", sympy.floor(L / 4))]
    # layers 0 and 4 of 8 attend to every key: 2 = floor(8/4); of 10 layers three would (0, 4, 8)
    with pytest.raises(SymgptError, match="floor"):
        from_config({"model_type": "cwm", **VARIANTS["cwm"], "num_hidden_layers": 10}, "x")
    # a null window: every layer attends to every key (CwmConfig turns it into None)
    full = from_config({"model_type": "cwm", **VARIANTS["cwm"], "sliding_window": None}, "x")
    assert not full.flags["window"] and full.flags["full_every"] is None


def test_kv_cache_of_the_sliding_layers_holds_the_window():
    m = symgpt.load("olmo3", L=8, d=64, h=4, V=256, d_ff=96, W=4, B=1, T=16)
    # 6 sliding layers keep W - 1 = 3 positions (DynamicSlidingWindowLayer, tests/test_kv_window.py),
    # 2 full ones all 16: K and V of 4 heads of 16
    assert m.quantity("memory.kv_cache", precision="fp32") == 2 * 4 * 16 * 4 * (6 * 3 + 2 * 16)


def test_smollm3_sliding_nope_layers_are_refused():
    # use_sliding_window makes the NoPE layers (one in four) slide: three full layers to one
    # sliding one, which the decoder's two stacks do not declare
    cfg = {"model_type": "smollm3", **VARIANTS["smollm3"], "use_sliding_window": True, "sliding_window": 4}
    with pytest.raises(SymgptError, match="layer_types"):
        from_config(cfg, "x")
    quiet = from_config({**cfg, "sliding_window": None}, "x")            # no length: no window
    assert not quiet.flags["window"]


def test_smollm3_notes_its_nope_layers():
    m = from_config({"model_type": "smollm3", **VARIANTS["smollm3"], "no_rope_layers": [1] * 8}, "x")
    assert m.notes == ()
    m = from_config({"model_type": "smollm3", **VARIANTS["smollm3"]}, "x")
    assert m.notes and "2 of the 8 layers apply no rotary" in m.notes[0]


# --- fields that must refuse --------------------------------------------------------------------
REFUSED = [
    ({"model_type": "internlm3", "qkv_bias": True, "bias": False}, "must be equal"),
    ({"model_type": "iquestcoder", "use_sliding_window": True}, "use_sliding_window"),
    ({"model_type": "iquestcoder", "clip_qkv": 8.0}, "clip_qkv"),
    ({"model_type": "helium", "head_dim": 64}, "hidden_size"),
    ({"model_type": "ernie", "use_task_id": True}, "use_task_id"),
    ({"model_type": "camembert", "tie_word_embeddings": False}, "tie_word_embeddings"),
    ({"model_type": "granite", "embedding_multiplier": "12"}, "embedding_multiplier"),
]


@pytest.mark.parametrize("cfg,message", REFUSED)
def test_fields_that_change_shapes_symgpt_does_not_model_refuse(cfg, message):
    with pytest.raises(SymgptError, match=message) as e:
        from_config(cfg, "x")
    assert "\n" not in str(e.value)


def test_an_untied_mlm_decoder_is_another_count():
    # why tie_word_embeddings=false is refused: transformers gives the decoder a matrix of its own
    cfg = {"model_type": "camembert", "num_hidden_layers": 1, "architectures": ["CamembertForCausalLM"]}
    from oracles.hf_encdec import build, params

    tied = params(build({**cfg, "tie_word_embeddings": True}, "CamembertForCausalLM"))
    untied = params(build({**cfg, "tie_word_embeddings": False}, "CamembertForCausalLM"))
    assert untied - tied >= 30522 * 768                              # the decoder's own V x d matrix
    assert from_config({**cfg, "tie_word_embeddings": True}, "x").params == tied


# --- the RoBERTa and BERT look-alikes: every class they declare ------------------------------
LOOKALIKES = {"camembert": "Camembert", "xlm-roberta": "XLMRoberta", "data2vec-text": "Data2VecText",
              "ernie": "Ernie"}


@pytest.mark.parametrize("model_type", sorted(LOOKALIKES))
@pytest.mark.parametrize("head", ["ForMaskedLM", "Model", "ForCausalLM"])
def test_lookalike_heads_equal_transformers(model_type, head):
    from oracles.hf_encdec import build, params

    cls = LOOKALIKES[model_type] + head
    cfg = {"model_type": model_type, "num_hidden_layers": 2, "architectures": [cls]}
    m = from_config(cfg, model_type)
    assert m.family.name == model_type
    assert m.params == params(build(cfg, cls))
    assert (head == "ForCausalLM") == any("causal mask" in n for n in m.notes)


def test_a_lookalike_is_reported_under_its_own_name_with_its_model_s_graph():
    m = symgpt.load("tests/configs/zoo/xlm-roberta.json")
    r = symgpt.load("tests/configs/zoo/roberta.json")
    assert m.family.name == "xlm-roberta" and m.arch.name == "roberta"
    assert [n for n, _ in m.arch.ops()] == [n for n, _ in r.arch.ops()]


# --- DeepSeek-V2's null k and the attribute maps -------------------------------------------------
def test_deepseek_v2_null_k_leaves_k_a_symbol_and_says_so():
    cfg = {"model_type": "deepseek_v2", **VARIANTS["deepseek_v2"]}
    m = from_config(cfg, "x")
    assert "k" not in m.sizes
    assert any("num_experts_per_tok is null" in n for n in m.notes)
    assert from_config({**cfg, "num_experts_per_tok": 2}, "x").params.value == m.params.value


def test_attribute_map_aliases_are_read_as_their_fields():
    # ExaoneConfig: num_layers -> num_hidden_layers; SarvamMLAConfig: num_experts -> n_routed_experts
    assert from_config({"model_type": "exaone", "num_layers": 3, "num_hidden_layers": 5}, "x").sizes["L"] == 3
    m = from_config({"model_type": "sarvam_mla", **VARIANTS["sarvam_mla"]}, "x")
    assert m.sizes["E"] == 6 and m.flags["shared_ff"] == 2 * 24

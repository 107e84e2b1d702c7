"""Decoders against transformers: Qwen3, Qwen2-MoE, Qwen3-MoE, Gemma 2, Gemma 3,
Phi-2, StarCoder2, OLMo 2, DeepSeek-V2 (Lite), DeepSeek-V3.

Oracles: ``sum(p.numel() for p in model.parameters())`` of ``AutoModelForCausalLM.from_config``
on the meta device for each public config.json (tests/configs/, see its README), next to the
count the model's publisher quotes; ``FlopCounterMode`` (eager attention) for forward and
forward + backward FLOPs -- on meta for the dense families, on tiny CPU models with eager experts
for the mixtures (a router cannot route on meta); the cache transformers fills in a forward with
``use_cache=True`` for the KV cache (MLA: the latent and the shared rotary key).
"""

import json
from pathlib import Path

import pytest
import sympy
import torch

import symgpt
from oracles.measure import _hf_model, flop_count, param_count
from symgpt.graph import roles
from symgpt.core.symbols import L

CONFIGS = Path(__file__).parent / "configs"
B, T = 2, 8

# config file -> (family, published count and its source, or None)
EXPECTED = {
    "qwen3-8b.json": ("qwen3", None),
    "qwen1.5-moe-a2.7b.json": ("qwen2_moe", None),
    "qwen3-30b-a3b.json": ("qwen3_moe", None),
    "gemma-2-9b.json": ("gemma2", None),
    "gemma-3-1b.json": ("gemma3_text", 999_885_952),     # KerasHub's gemma3_1b preset metadata
    "phi-2.json": ("phi", None),
    "starcoder2-3b.json": ("starcoder2", None),
    "olmo2-7b.json": ("olmo2", None),
    "deepseek-v2-lite.json": ("deepseek_v2", None),
    "deepseek-v3.json": ("deepseek_v3", None),
    "smollm3-3b.json": ("smollm3", None),
    "granite-3.3-8b-instruct.json": ("granite", None),
}
#: the publishers' rounded totals: the exact count must round to them
ROUNDED = {
    "qwen3-8b.json": (8.2e9, 0.05e9),            # Qwen3 model card: 8.2B
    "qwen1.5-moe-a2.7b.json": (14.3e9, 0.05e9),  # model card: 14.3B in total
    "qwen3-30b-a3b.json": (30.5e9, 0.05e9),      # model card: 30.5B in total
    "gemma-2-9b.json": (9.24e9, 0.005e9),        # Gemma 2 report, Table 1 (9B: 8,324M + 917,504K emb.)
    "phi-2.json": (2.7e9, 0.1e9),                # Phi-2: 2.7 billion
    "starcoder2-3b.json": (3.0e9, 0.05e9),       # StarCoder2-3B
    "olmo2-7b.json": (7.3e9, 0.05e9),            # OLMo 2 7B (7.30B)
    "deepseek-v2-lite.json": (15.7e9, 0.05e9),   # DeepSeek-V2-Lite: 15.7B
    "deepseek-v3.json": (671e9, 0.5e9),          # DeepSeek-V3 README: 671B main model (MTP excluded)
    "smollm3-3b.json": (3.0e9, 0.1e9),           # SmolLM3 model card: 3B
    "granite-3.3-8b-instruct.json": (8.0e9, 0.2e9),  # Granite 3.3 model card: 8B
}
MOE = {"qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "gpt_oss", "glm4_moe"}


def _cfg(name):
    return json.loads((CONFIGS / name).read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_params_match_transformers_and_the_published_count(name):
    family, published = EXPECTED[name]
    m = symgpt.load(CONFIGS / name)
    assert m.family.name == family
    n = param_count(_hf_model(_cfg(name), "meta", "eager"))
    assert m.params == n, (name, m.params.value, n)
    if published is not None:
        assert n == published
    mid, tol = ROUNDED[name] if name in ROUNDED else (n, 0)
    assert abs(n - mid) <= tol


# dense families: FLOPs on meta; the train check on the config cut to a few layers (the layer
# pattern needs one full-attention layer: Gemma 3 has one in six)
SHORT = {"gemma-3-1b.json": 6, "gemma-2-9b.json": 2}


@pytest.mark.parametrize("name", sorted(n for n, (f, _) in EXPECTED.items() if f not in MOE))
def test_dense_flops_match_flopcountermode(name):
    cfg = _cfg(name)
    m = symgpt.load(CONFIGS / name, B=B, T=T)
    assert m.quantity("flops.forward") == flop_count(_hf_model(cfg, "meta", "eager"), B, T)
    layers = SHORT.get(name, 2)
    cut = {k: cfg[k][:layers] for k in ("layer_types",) if k in cfg}  # one entry a layer (SmolLM3)
    short = _hf_model({**cfg, "num_hidden_layers": layers, **cut}, "meta", "eager")
    assert m.with_(L=layers).quantity("flops.train") == flop_count(short, B, T, backward=True)


def _tiny(model_type):
    base = {"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "vocab_size": 256,
            "max_position_embeddings": 64, "tie_word_embeddings": False}
    return {"model_type": model_type, **base, **{
        "qwen2_moe": dict(num_key_value_heads=2, intermediate_size=80, moe_intermediate_size=24, num_experts=6,
                          num_experts_per_tok=2, shared_expert_intermediate_size=40, mlp_only_layers=[1]),
        "qwen3_moe": dict(num_key_value_heads=2, head_dim=16, intermediate_size=80, moe_intermediate_size=24,
                          num_experts=6, num_experts_per_tok=2, decoder_sparse_step=1),
        "deepseek_v2": dict(intermediate_size=80, moe_intermediate_size=24, n_routed_experts=6,
                            num_experts_per_tok=2, n_shared_experts=2, first_k_dense_replace=1,
                            q_lora_rank=None, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8,
                            v_head_dim=12, n_group=1, topk_group=1),
        "deepseek_v3": dict(num_key_value_heads=4, intermediate_size=80, moe_intermediate_size=24, n_routed_experts=8,
                            num_experts_per_tok=2, n_shared_experts=1, first_k_dense_replace=1,
                            q_lora_rank=24, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8,
                            v_head_dim=12, n_group=2, topk_group=1),
        "gpt_oss": dict(num_key_value_heads=2, head_dim=16, intermediate_size=48, num_local_experts=6,
                        num_experts_per_tok=2, sliding_window=16, num_hidden_layers=4),
        "glm4_moe": dict(num_key_value_heads=2, head_dim=16, intermediate_size=80, moe_intermediate_size=24,
                         n_routed_experts=6, num_experts_per_tok=2, n_shared_experts=1, first_k_dense_replace=1,
                         n_group=1, topk_group=1),
    }[model_type]}


def _tiny_hf(cfg):
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    c = dict(cfg)
    hf_cfg = AutoConfig.for_model(c.pop("model_type"), **c)
    return AutoModelForCausalLM.from_config(hf_cfg, attn_implementation="eager", experts_implementation="eager")


@pytest.mark.parametrize("model_type", sorted(MOE))
def test_moe_flops_on_tiny_real_models(model_type, tmp_path):
    """Every token runs exactly k routed experts (and the shared one), whatever the router picks."""
    cfg = _tiny(model_type)
    path = tmp_path / f"tiny-{model_type}.json"
    path.write_text(json.dumps(cfg))
    hf = _tiny_hf(cfg)
    m = symgpt.load(path, B=B, T=T)
    assert m.params == param_count(hf)
    assert m.quantity("flops.forward") == flop_count(hf, B, T)
    assert m.quantity("flops.train") == flop_count(hf, B, T, backward=True)


def test_layers_that_differ_are_stacks_costed_by_their_counts():
    v3 = symgpt.load(CONFIGS / "deepseek-v3.json").arch
    assert [(g.name, g.repeat) for g in v3.stacks()] == [("dense_blocks", 3), ("blocks", L - 3)]
    g2 = symgpt.load("gemma2").arch
    full = sympy.floor(L / 2)
    assert [(g.name, g.repeat) for g in g2.stacks()] == [("blocks", L - full), ("full_blocks", full)]
    g3 = symgpt.load("gemma3_text", L=26).arch
    assert [g.repeat.subs(L, 26) for g in g3.stacks()] == [22, 4]   # layers 5, 11, 17, 23 are full
    # in closed form: the dense stack's parameters enter × 3, the MoE stack's × (L - 3)
    sym = symgpt.load("deepseek_v3").params
    per_dense = sym.part("dense_blocks").expr / 3
    per_moe = sym.part("blocks").expr / (L - 3)
    assert sympy.expand(sym.expr - (3 * per_dense + (L - 3) * per_moe
                                    + sym.part("embedding").expr + sym.part("final_norm").expr
                                    + sym.part("lm_head").expr)) == 0


def test_mla_cache_holds_the_latent_and_the_shared_rotary_key():
    """transformers' DeepSeek cache after a forward: kv_lora_rank + qk_rope_head_dim numbers per
    token per layer (not 2·h·d_head), which symgpt reads from the roles the graph declares."""
    from transformers import DynamicCache

    cfg = _tiny("deepseek_v3")
    hf = _tiny_hf(cfg).eval()
    cache = DynamicCache(config=hf.config)
    with torch.no_grad():
        hf(input_ids=torch.randint(0, 256, (B, T)), cache=cache, use_cache=True)
    held = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    m = symgpt.load("deepseek_v3", L=3, d=64, h=4, V=256, d_ff=24, E=8, k=2, dense_ff=80, shared_ff=24,
                    q_lora_rank=24, kv_lora_rank=32, qk_nope_dim=16, qk_rope_dim=8, v_head_dim=12,
                    dense_layers=1, B=B, T=T)
    assert m.quantity("memory.kv_cache", precision="fp32") == held == 3 * (32 + 8) * B * T * 4
    arch = m.arch
    assert [m.value(arch.shape(n)[-1]) for n in arch.find(roles.KV_LATENT)] == [32, 32]   # one per stack (r_kv)
    assert not arch.find(roles.KEY_HEADS) and not arch.find(roles.VALUE_HEADS)


def test_mixed_window_cache_keeps_the_window_in_sliding_layers_only():
    m = symgpt.load(CONFIGS / "gemma-2-9b.json", B=1, T=8192)
    # 21 sliding layers keep W - 1 = 4095 positions (transformers' DynamicSlidingWindowLayer,
    # tests/test_kv_window.py), 21 full layers all 8192; K and V, 8 heads of 256
    per_position = 2 * 8 * 256 * 2
    assert m.quantity("memory.kv_cache", precision="bf16") == per_position * (21 * 4095 + 21 * 8192)


PRESETS = {"deepseek-v3": "deepseek-v3.json", "deepseek-v2-lite": "deepseek-v2-lite.json",
           "qwen3-8b": "qwen3-8b.json", "qwen3-30b-a3b": "qwen3-30b-a3b.json",
           "qwen1.5-moe-a2.7b": "qwen1.5-moe-a2.7b.json", "gemma-2-9b": "gemma-2-9b.json",
           "gemma-3-1b": "gemma-3-1b.json", "phi-2": "phi-2.json", "starcoder2-3b": "starcoder2-3b.json",
           "olmo2-7b": "olmo2-7b.json", "smollm3-3b": "smollm3-3b.json",
           "granite-3.3-8b": "granite-3.3-8b-instruct.json"}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_presets_are_their_config_files(preset):
    p, c = symgpt.load(preset), symgpt.load(CONFIGS / PRESETS[preset])
    assert p.family is c.family and dict(p.sizes) == dict(c.sizes) and p.flags == c.flags
    # the note sets the exact count beside the published one
    assert f"{int(p.params.value):,}" in symgpt.families.presets()[preset].note


def test_mtp_module_is_one_more_moe_layer_with_its_projection():
    """DeepSeek-V3's multi-token-prediction module (an option: transformers builds none): one MoE
    layer, RMSNorms of h and of the embedding, a 2d -> d projection, the output head's own norm;
    embedding and head shared. DeepSeek's weight notes give 11.5B for the module besides the
    shared embedding and head: its Transformer layer."""
    base, mtp = symgpt.load("deepseek-v3"), symgpt.load("deepseek-v3", mtp_layers=1)
    layer = base.params.part("blocks").value / 58
    d = 7168
    assert mtp.params.value - base.params.value == layer + 2 * d * d + 3 * d
    assert round(layer / 1e8) == 115                                    # 11.5B
    assert [g.name for g in mtp.arch.stacks()] == ["dense_blocks", "blocks", "mtp"]
    # the head is the main one's matrix (tied), the embedding is read, not owned again
    tied = [(u, v) for u, v, a in mtp.graph.edges(data=True) if a.get("tied")]
    assert tied == [("lm_head.weight", "mtp/shared_head/head")]


@pytest.mark.parametrize("flag", ["parallel", "post_norm", "branch_norms", "qkv_bias", "proj_bias", "dropout"])
def test_mla_blocks_refuse_the_decoder_flags_they_do_not_model(flag):
    """transformers' DeepseekV3DecoderLayer is pre-norm with no Q/K/V-bias or dropout choices:
    the generic decoder's flags that would change its graph refuse in one line, never ignored."""
    with pytest.raises(symgpt.SymgptError, match=f"flag {flag} is not modelled"):
        symgpt.load("deepseek_v3", **{flag: True}).params

"""Inference costs against transformers: a decode step with a KV cache, the cache's bytes, and
the prefill's FLOPs, for every public config in tests/configs/ (built on the meta device).

Oracles (tests/oracles/inference.py): FlopCounterMode over one decode step of the HF model (a
prefill with use_cache=True, then one token with the returned cache, attending to T + 1
positions), and ``sum(t.nbytes)`` of the cache's tensors after a prefill.
"""

import json
from pathlib import Path

import pytest
import torch

import symgpt
from oracles.inference import cache_nbytes, decode_flops, prefill
from oracles.measure import _hf_model
from test_arch_decoders import MOE as MOE_TINY, _tiny, _tiny_hf

CONFIGS = Path(__file__).parent / "configs"
B, T = 2, 8
#: mixtures of experts: a router cannot route on the meta device (and transformers' grouped_mm
#: experts take bf16 only), so these run as tiny real models on the CPU below
MOE = {"mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "gpt_oss", "glm4_moe"}
DENSE = sorted(p.name for p in CONFIGS.glob("*.json")
               if json.loads(p.read_text())["model_type"] not in MOE)
MIXTURES = sorted(p.name for p in CONFIGS.glob("*.json")
                  if json.loads(p.read_text())["model_type"] in MOE - {"mixtral"})
#: the fewest layers that still hold every kind of layer (Gemma 3: one full-attention layer in
#: six; DeepSeek-V3: three dense layers before the first with experts)
SHORT = {"gemma-3-1b.json": 6, "deepseek-v3.json": 4}


def _short(name):
    """The config cut to a few layers (and symgpt's model likewise): the step's per-layer
    work is what is checked; llama-2-70b is also checked whole below."""
    layers = SHORT.get(name, 2)
    cfg = json.loads((CONFIGS / name).read_text())
    key = "n_layer" if cfg["model_type"] == "gpt2" else "num_hidden_layers"
    if "layer_types" in cfg:  # gpt-oss: the first layers' kinds
        cfg["layer_types"] = cfg["layer_types"][:layers]
    return {**cfg, key: layers}, symgpt.load(CONFIGS / name, B=B, T=T, L=layers)


@pytest.mark.parametrize("name", DENSE)
def test_decode_step_and_prefill_flops_equal_flopcountermode(name):
    cfg, m = _short(name)
    hf = _hf_model(cfg, "meta", "eager")
    assert m.quantity("inference.decode.flops") == decode_flops(hf, B, T)
    pre, _ = prefill(hf, B, T)
    assert m.quantity("inference.prefill.flops") == pre
    assert m.quantity("inference.prefill.flops") == m.quantity("flops.forward")


def test_the_largest_config_whole_on_meta():
    cfg = json.loads((CONFIGS / "llama-2-70b.json").read_text())
    m = symgpt.load(CONFIGS / "llama-2-70b.json", B=1, T=16)
    hf = _hf_model(cfg, "meta", "eager")
    assert m.quantity("inference.decode.flops") == decode_flops(hf, 1, 16)
    # grouped-query attention: 8 KV heads of 128 in each of 80 layers, bf16
    nbytes, bits = cache_nbytes(hf.to(torch.bfloat16), 1, 16)
    assert bits == 16
    assert m.quantity("inference.kv_cache") == nbytes == 2 * 80 * 8 * 128 * 16 * 2


#: transformers' Falcon with new_decoder_architecture (falcon-40b) repeats K and V to all h
#: heads *before* it updates the cache (modeling_falcon.py: num_kv_heads = num_heads), so its
#: cache holds h/h_kv = 16 times what the architecture needs; symgpt counts the h_kv heads the
#: attention reads (what a serving engine such as vLLM stores)
HF_CACHES_REPEATED = {"falcon-40b.json": 128 // 8}


@pytest.mark.parametrize("name", DENSE)
def test_kv_cache_bytes_equal_the_cache_tensors(name):
    cfg, m = _short(name)
    hf = _hf_model(cfg, "meta", "eager")
    factor = HF_CACHES_REPEATED.get(name, 1)
    seen = set()
    for dtype in (torch.float32, torch.bfloat16):
        nbytes, bits = cache_nbytes(hf.to(dtype), B, T)
        seen.add(bits)
        assert m.quantity("inference.kv_cache", act_bits=bits).value * factor == nbytes
    assert seen == {32, 16}


def test_kv_cache_of_a_tiny_real_model_on_cpu(tmp_path):
    cfg = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
           "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 500,
           "max_position_embeddings": 64, "tie_word_embeddings": False}
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(cfg))
    torch.manual_seed(0)
    hf = _hf_model(cfg, "cpu", "eager")
    m = symgpt.load(path, B=3, T=5)
    # hand arithmetic: K and V, 2 layers, 2 KV heads of 16, 3 sequences of 5 tokens, 4 bytes
    assert cache_nbytes(hf, 3, 5) == (2 * 2 * 2 * 16 * 3 * 5 * 4, 32)
    assert m.quantity("inference.kv_cache", act_bits=32) == 2 * 2 * 2 * 16 * 3 * 5 * 4
    assert m.quantity("memory.kv_cache", precision="fp32") == 2 * 2 * 2 * 16 * 3 * 5 * 4  # one cache (derive.kvcache)
    assert m.quantity("inference.kv_cache", act_bits=32, kv_bits=8) == 2 * 2 * 2 * 16 * 3 * 5
    assert m.quantity("inference.decode.flops") == decode_flops(hf, 3, 5)


def test_moe_decode_step_on_a_tiny_real_mixtral(tmp_path):
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = {"model_type": "mixtral", "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
           "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 512,
           "num_local_experts": 4, "num_experts_per_tok": 2, "max_position_embeddings": 64}
    path = tmp_path / "tiny-mixtral.json"
    path.write_text(json.dumps(cfg))
    torch.manual_seed(0)
    hf = AutoModelForCausalLM.from_config(AutoConfig.for_model(**cfg), attn_implementation="eager",
                                          experts_implementation="eager")
    m = symgpt.load(path, B=B, T=T)
    assert m.quantity("inference.decode.flops") == decode_flops(hf, B, T)
    nbytes, bits = cache_nbytes(hf, B, T)
    assert m.quantity("inference.kv_cache", act_bits=bits) == nbytes


@pytest.mark.parametrize("model_type", sorted(MOE_TINY))
def test_moe_decode_step_and_cache_on_tiny_real_models(model_type, tmp_path):
    """Qwen2-MoE, Qwen3-MoE (per-head Q/K norms before RoPE: the cache keeps the keys normed and
    rotated), DeepSeek-V2/V3 (MLA: the cache keeps the latent and the shared rotary key, and
    each step re-expands every cached position through kv_b_proj) -- as transformers runs them."""
    cfg = _tiny(model_type)
    path = tmp_path / f"tiny-{model_type}.json"
    path.write_text(json.dumps(cfg))
    hf = _tiny_hf(cfg).eval()
    m = symgpt.load(path, B=B, T=T)
    assert m.quantity("inference.decode.flops") == decode_flops(hf, B, T)
    pre, _ = prefill(hf, B, T)
    assert m.quantity("inference.prefill.flops") == pre
    nbytes, bits = cache_nbytes(hf, B, T)
    assert m.quantity("inference.kv_cache", act_bits=bits) == nbytes


@pytest.mark.parametrize("name", MIXTURES)
def test_kv_cache_bytes_of_the_mixture_configs_on_meta(name):
    """The cache does not depend on the routing: the public configs, in bf16 (the dtype
    transformers' grouped_mm experts take), on meta -- MLA's latent and rotary key included."""
    cfg, m = _short(name)
    hf = _hf_model(cfg, "meta", "eager").to(torch.bfloat16)
    nbytes, bits = cache_nbytes(hf, B, T)
    assert bits == 16
    assert m.quantity("inference.kv_cache", act_bits=bits) == nbytes

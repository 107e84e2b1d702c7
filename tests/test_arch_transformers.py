"""Every decoder family against transformers: parameter counts and forward FLOPs.

For a real public config.json of each family (tests/configs/, see its README), symgpt's count
equals ``sum(p.numel() for p in model.parameters())`` of ``AutoModelForCausalLM.from_config``
built on the meta device, and the default-convention forward FLOPs equal ``FlopCounterMode``
on that model (eager attention) at a small B and T, forward and forward + backward. MoE FLOPs are checked on a tiny real
Mixtral on CPU with eager experts (on meta the router cannot route, and the fused grouped
matmul is not counted).
"""

import json
from pathlib import Path

import pytest
import torch

import symgpt
from oracles.measure import _hf_model, flop_count, param_count

CONFIGS = Path(__file__).parent / "configs"
B, T = 2, 8

# (config file, family symgpt picks, published parameter count where one is well known)
EXPECTED = {
    "llama-2-7b.json": ("llama", 6_738_415_616),       # lecture note 7.3: LLaMA-7B
    "llama-2-70b.json": ("llama", 68_976_648_192),     # Llama 2 70B (GQA, 8 KV heads)
    "llama-3-8b.json": ("llama", 8_030_261_248),
    "mistral-7b-v0.1.json": ("mistral", 7_241_732_096),
    "mixtral-8x7b-v0.1.json": ("mixtral", 46_702_792_704),
    "qwen2-0.5b.json": ("qwen2", 494_032_768),
    "gemma-2b.json": ("gemma", 2_506_172_416),
    "phi-3-mini-4k.json": ("phi3", 3_821_079_552),
    "falcon-7b.json": ("falcon", 6_921_720_704),
    "falcon-40b.json": ("falcon", None),
    "pythia-160m.json": ("gpt_neox", 162_322_944),
    "opt-125m.json": ("opt", 125_239_296),
    "opt-350m.json": ("opt", 331_196_416),
    "gpt2.json": ("gpt2", 124_439_808),
}
FILES = sorted(p.name for p in CONFIGS.glob("*.json") if p.name in EXPECTED)


def test_every_config_file_is_in_the_table():
    from test_arch_decoders import EXPECTED as DECODERS  # Qwen3, Gemma 2/3, ... decoders, tested there
    from test_sinks import PUBLISHED as SINKS            # gpt-oss, tested there
    # GLM-4.5-Air: tests/test_moe_families.py::test_glm_4_5_air_preset_is_its_config_and_transformers_count
    MOE = {"glm-4.5-air.json": None}

    assert sorted(p.name for p in CONFIGS.glob("*.json")) == sorted(
        {**EXPECTED, **DECODERS, **{f"{n}.json": None for n in SINKS}, **MOE})
    assert FILES == sorted(EXPECTED)
    families = {fam for fam, _ in EXPECTED.values()}
    assert families == {"llama", "mistral", "mixtral", "qwen2", "gemma", "phi3", "falcon",
                        "gpt_neox", "opt", "gpt2"}


@pytest.mark.parametrize("name", FILES)
def test_params_and_forward_flops_match_transformers(name):
    cfg = json.loads((CONFIGS / name).read_text())
    family, published = EXPECTED[name]
    m = symgpt.load(CONFIGS / name, B=B, T=T)
    assert m.family.name == family
    hf = _hf_model(cfg, "meta", "eager")
    n = param_count(hf)
    assert m.params == n, (name, m.params.value, n)
    if published is not None:
        assert n == published
    if family == "mixtral":
        return  # FLOPs of routed experts: test_moe_flops_on_a_tiny_real_mixtral
    assert m.quantity("flops.forward") == flop_count(hf, B, T)
    # forward + backward of logits.sum() (every grad-input and grad-weight matmul), on the same
    # config cut to 2 layers: tracing backward through 32-80 layers is slow even on meta
    layer_key = "n_layer" if family == "gpt2" else "num_hidden_layers"
    short = _hf_model({**cfg, layer_key: 2}, "meta", "eager")
    assert m.with_(L=2).quantity("flops.train") == flop_count(short, B, T, backward=True)


def _tiny_mixtral():
    return {"model_type": "mixtral", "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 512,
            "num_local_experts": 4, "num_experts_per_tok": 2, "max_position_embeddings": 64}


def test_moe_flops_on_a_tiny_real_mixtral(tmp_path):
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = _tiny_mixtral()
    path = tmp_path / "tiny-mixtral.json"
    path.write_text(json.dumps(cfg))
    torch.manual_seed(0)
    hf_cfg = AutoConfig.for_model(**cfg)
    hf = AutoModelForCausalLM.from_config(hf_cfg, attn_implementation="eager",
                                          experts_implementation="eager")
    m = symgpt.load(path, B=B, T=T)
    assert m.params == param_count(hf)
    # every token runs exactly k experts, whatever the router picks
    assert m.quantity("flops.forward") == flop_count(hf, B, T)
    dense = m.with_(k=1).quantity("flops.forward").value
    assert m.quantity("flops.forward").value - dense == 2 * 2 * 3 * B * T * 64 * 96  # L·2·(3 d d_ff)·BT


def test_sliding_window_counts_the_window_and_eager_counts_the_full_square(tmp_path):
    """Eager attention computes all T x T scores and masks them; symgpt counts the Min(T, W)
    keys a windowed kernel computes. Below the window both agree; above it they differ by
    exactly the masked band."""
    cfg = {"model_type": "mistral", "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
           "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 512, "sliding_window": 4}
    path = tmp_path / "tiny-mistral.json"
    path.write_text(json.dumps(cfg))
    hf = _hf_model(cfg, "meta", "eager")
    below = symgpt.load(path, B=B, T=4)
    assert below.quantity("flops.forward") == flop_count(hf, B, 4)
    above = symgpt.load(path, B=B, T=T)
    W, h, dh, L = 4, 4, 16, 2
    band = L * 2 * 2 * B * h * T * (T - W) * dh  # 2 matmuls, 2 FLOPs per multiply-add
    assert flop_count(hf, B, T) - above.quantity("flops.forward").value == band

"""``symgpt serve`` for models with recurrent layers (symgpt.derive.serving_state): vLLM's state
slots beside the paged KV blocks.

Oracles: hand-worked examples (Jamba-1.5-Mini, Mamba 2.8B); an independent transcription, in
plain integers, of vLLM's own functions (HybridAttentionMambaModelConfig.verify_and_update_config,
_get_kv_cache_groups_uniform_page_size, get_num_blocks, get_max_concurrency_for_kv_cache_config,
MambaStateShapeCalculator) applied to the fields of each checkpoint's config.json, not to
symgpt's reading of it; and the 672-token attention block vLLM's issue #24280 reports for
NVIDIA-Nemotron-Nano-9B-v2.
"""

import json
import math
from pathlib import Path

import pytest

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.derive import serving_state as st

CONFIGS = Path(__file__).parent / "configs"
H200 = {"hardware": "h200"}
CAP = {"utilization": st.sympy.Rational(9, 10), "workspace_tokens": 2048, "block": 16}


def _cdiv(a, b):
    return -(-a // b)


def vllm_concurrency(attn_layers, state_layers, attn_token_bytes, state_page, block, T, available):
    """vLLM's capacity, transcribed: the attention block raised to 16·cdiv(state page, 16·attention
    bytes per token), the state page padded to the attention page, groups of g layers
    (layers[i::num_groups]), num_blocks = available // page // g, and num_blocks / blocks per
    request (cdiv of usage over memory per block)."""
    if attn_layers == 0:
        groups = [("state", list(range(state_layers)))]
        page = state_page
    else:
        attn_block = 16 * _cdiv(state_page, 16 * attn_token_bytes)
        block = max(block, attn_block)
        page = block * attn_token_bytes
        assert page >= state_page
        kinds = {"attn": list(range(attn_layers)), "state": list(range(state_layers))}
        lo, hi = min(map(len, kinds.values())), max(map(len, kinds.values()))
        g = hi if hi < lo * 1.5 else lo
        groups = []
        for kind, layers in kinds.items():
            n = _cdiv(len(layers), g)
            groups += [(kind, layers[i::n]) for i in range(n)]
    g = max(len(layers) for _, layers in groups)
    num_blocks = int(available // page // g)
    usage = sum(_cdiv(T, block) * page if kind == "attn" else page for kind, _ in groups)
    per_request = _cdiv(g * usage, page * g)
    return num_blocks // per_request, block, page


def _published(name):
    return json.loads((CONFIGS / name).read_text())


def _vllm_state(cfg):
    """(attention layers, state layers, state page in bytes, attention bytes per token) from a
    config.json, by vLLM's MambaStateShapeCalculator, bfloat16 (2 bytes)."""
    t = cfg["model_type"]
    if t == "jamba":
        n = cfg["num_hidden_layers"]
        attn = len(range(cfg["attn_layer_offset"], n, cfg["attn_layer_period"]))
        di = cfg["mamba_expand"] * cfg["hidden_size"]
        elements = (cfg["mamba_d_conv"] - 1) * di + di * cfg["mamba_d_state"]
        return attn, n - attn, 2 * elements, 2 * 2 * cfg["num_key_value_heads"] * (cfg["hidden_size"] // cfg["num_attention_heads"])
    if t == "mamba":
        di = cfg["intermediate_size"]
        return 0, cfg["num_hidden_layers"], 2 * ((cfg["conv_kernel"] - 1) * di + di * cfg["state_size"]), None
    if t == "nemotron_h":
        p = cfg["hybrid_override_pattern"]
        di = cfg["mamba_num_heads"] * cfg["mamba_head_dim"]
        elements = ((cfg["conv_kernel"] - 1) * (di + 2 * cfg["n_groups"] * cfg["ssm_state_size"])
                    + cfg["mamba_num_heads"] * cfg["mamba_head_dim"] * cfg["ssm_state_size"])
        return p.count("*"), p.count("M"), 2 * elements, 2 * 2 * cfg["num_key_value_heads"] * cfg["attention_head_dim"]
    if t == "qwen3_next":
        n, every = cfg["num_hidden_layers"], cfg["full_attention_interval"]
        kd, vd, kh, vh = (cfg[k] for k in ("linear_key_head_dim", "linear_value_head_dim", "linear_num_key_heads",
                                          "linear_num_value_heads"))
        elements = (cfg["linear_conv_kernel_dim"] - 1) * (2 * kh * kd + vh * vd) + vh * vd * kd
        return n // every, n - n // every, 2 * elements, 2 * 2 * cfg["num_key_value_heads"] * cfg["head_dim"]
    raise AssertionError(t)


def test_jamba_by_hand():
    """Jamba-1.5-Mini: Mamba-1 state (4 - 1)·8,192 + 8,192·16 = 155,648 elements, 311,296 bytes a
    layer; attention 2·8·128·2 = 4,096 bytes a token a layer; block 16·ceil(311,296/65,536) = 80,
    page 327,680; 4 attention and 28 Mamba layers: g = 4, one attention group and 7 state groups.
    At T = 4,096: (ceil(4,096/80) + 7)·327,680·4 = 59·1,310,720 = 77,332,480 bytes."""
    m = symgpt.load("jamba-1.5-mini", T=4096)
    p = st.plan(m, 16)
    assert (p.state_page, p.block, p.page, p.group, p.attn_groups, p.state_groups) == (311_296, 80, 327_680, 4, 1, 7)
    assert st.kv_per_sequence(m, 16).value == 77_332_480
    assert st.state_per_sequence(m, 16).value == 28 * 311_296


def test_pure_mamba_by_hand_is_constant_in_T():
    """Mamba 2.8B: (4 - 1)·5,120 + 5,120·16 = 97,280 elements, 194,560 bytes a layer, 64 layers
    one group: 12,451,840 bytes a sequence whatever its length."""
    for T in (1024, 65536):
        m = symgpt.load("mamba-2.8b", T=T)
        assert st.kv_per_sequence(m, 16).value == 12_451_840
    q = st.max_sequences(symgpt.load("mamba-2.8b", T=1024), **CAP, **H200)
    budget = st.kv_budget(symgpt.load("mamba-2.8b", T=1024), **CAP, **H200).value
    assert q.value == math.floor(budget / 12_451_840)


@pytest.mark.parametrize("preset,file", [("jamba-1.5-mini", "published/jamba-1.5-mini.json"),
                                         ("mamba-2.8b", "published/mamba-2.8b.json"),
                                         ("nemotron-h-8b", "published/nemotron-h-8b.json"),
                                         ("qwen3-next-80b-a3b", "published/qwen3-next-80b-a3b.json")])
@pytest.mark.parametrize("T", [1, 4096, 100_000])
def test_capacity_is_vllms(preset, file, T):
    m = symgpt.load(preset, T=T)
    opts = dict(H200, weight_bits=8)
    budget = st.kv_budget(m, **CAP, **opts).value
    attn, state, page, per_token = _vllm_state(_published(file))
    n, block, padded = vllm_concurrency(attn, state, per_token, page, 16, T, math.floor(budget))
    p = st.plan(m, 16, **opts)
    assert (p.block, p.page, p.state_page) == (block, padded, page)
    assert st.max_sequences(m, **CAP, **opts).value == n


def test_nemotron_nano_block_is_the_672_tokens_vllm_reports(tmp_path):
    """vLLM issue #24280: "672 tokens for nvidia/NVIDIA-Nemotron-Nano-9B-v2" -- its Mamba-2 mixers
    (128 heads of 80, 8 groups, state 128, kernel 4) and attention (8 KV heads of 128)."""
    cfg = dict(_published("published/nemotron-h-8b.json"), hidden_size=4480, mamba_head_dim=80, num_attention_heads=40,
               intermediate_size=15680, num_hidden_layers=56,
               hybrid_override_pattern="M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-")
    cfg.pop("auto_map", None)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    assert st.plan(symgpt.load(path), 16).block == 672


def test_the_new_hybrid_presets_are_sized():
    """Bamba-9B and Granite-4.0-H-Tiny: Mamba-2 slots of (4 - 1)·(8,192 + 256) + 8,192·128 and
    (4 - 1)·(3,072 + 256) + 3,072·128 elements."""
    assert st.plan(symgpt.load("bamba-9b"), 16).state_page == 2 * (3 * 8448 + 8192 * 128)
    assert st.plan(symgpt.load("granite-4.0-h-tiny"), 16).state_page == 2 * (3 * 3328 + 3072 * 128)


@pytest.mark.parametrize("preset,opts,match", [
    ("mamba-2.8b", {"chips": 2}, "tensor-parallel"),
    ("xlstm-7b", {}, "not for these recurrent layers"),
    ("recurrentgemma-2b", {}, "not for these recurrent layers"),
])
def test_what_is_not_modelled_is_refused_in_one_line(preset, opts, match):
    with pytest.raises(SymgptError, match=match) as e:
        st.plan(symgpt.load(preset), 16, **opts)
    assert "\n" not in str(e.value)


def test_cli(capsys):
    from symgpt.cli import main

    assert main(["serve", "mamba-2.8b", "--hardware", "h200", "--set", "T=2048", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["serving.max_sequences"]["convention"] == "vllm-hybrid"
    assert out["serving.state_per_sequence"]["value"] == out["serving.kv_per_sequence"]["value"] == 12_451_840
    assert main(["serve", "jamba-1.5-mini", "--hardware", "h200", "--prefix", "16"]) == 2
    err = capsys.readouterr().err
    assert "--prefix" in err and "not modelled for recurrent layers" in err and err.count("\n") == 1

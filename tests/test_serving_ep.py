"""symgpt serve --ep / --dp-attention (symgpt.derive.serving_ep) and --draft mtp's capacity, against
hand-worked arithmetic from DeepSeek-V3's config.json (tests/configs/deepseek-v3.json) and the
deployments of the DeepSeek-V3 Technical Report, Sec. 3.4: prefill on 32 GPUs (attention TP4 with
SP and DP8, MoE EP32, 32 redundant experts: 8 + 1 per GPU), decode on 320 GPUs (attention TP4 +
DP80, MoE EP320: one expert per GPU, 64 GPUs for the redundant and shared experts). Dispatch in
FP8 with a float32 scale per 128 elements, combine in BF16 (Sec. 3.3)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
import torch
import transformers

import symgpt
from oracles.measure import param_count
from tests.clirun import run

CONFIG = json.loads((Path(__file__).parent / "configs" / "deepseek-v3.json").read_text())
H200 = 141 * 10**9              # NVIDIA H200 datasheet: 141 GB
NIC = 400 * 10**9 // 8          # one 400 Gb/s network card per GPU, one direction
NVLINK = 900 * 10**9 // 2       # NVLink 900 GB/s both directions


def _c(key):
    return CONFIG[key]


def _weights_per_device(tp, slots, bytes_per=2):
    """Bytes one device holds: MLA down-projections and latent norms whole, its up-projections and
    output projection split by TP; token table and head split by TP; dense MLPs, shared experts and
    routers whole; *slots* routed experts of each MoE layer."""
    d, h, V, L = _c("hidden_size"), _c("num_attention_heads"), _c("vocab_size"), _c("num_hidden_layers")
    rq, rkv = _c("q_lora_rank"), _c("kv_lora_rank")
    nope, rope, v = _c("qk_nope_head_dim"), _c("qk_rope_head_dim"), _c("v_head_dim")
    dense, moe = _c("first_k_dense_replace"), L - _c("first_k_dense_replace")
    whole_attention = d * rq + rq + d * (rkv + rope) + rkv
    split_attention = Fraction(rq * h * (nope + rope) + rkv * h * (nope + v) + h * v * d, tp)
    per_layer = whole_attention + split_attention + 2 * d          # + the two RMSNorms
    expert = 3 * d * _c("moe_intermediate_size")
    ffn = dense * 3 * d * _c("intermediate_size") + moe * (_c("n_routed_experts") * d
                                                           + _c("n_shared_experts") * expert + slots * expert)
    total = L * per_layer + d + Fraction(2 * V * d, tp) + ffn
    return bytes_per * total, bytes_per * moe * slots * expert


def _serve(*argv):
    r = run(["serve", "deepseek-v3", "--hardware", "h200", "--json", *argv])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _exact(entry):
    return Fraction(entry.get("exact_value", entry["value"]))


def _value(out, name):
    return _exact(out[name])


# (TP, DP, EP, redundant experts): the report's prefill and decode units
DEPLOYMENTS = {"prefill": (4, 8, 32, 32), "decode": (4, 80, 320, 64)}


@pytest.mark.parametrize("stage", sorted(DEPLOYMENTS))
def test_weights_and_capacity_per_device_are_the_reports_split(stage):
    tp, dp, ep, red = DEPLOYMENTS[stage]
    slots = (_c("n_routed_experts") + red) // ep           # prefill: 9 (8 + 1 redundant); decode: 1
    assert slots == {"prefill": 9, "decode": 1}[stage]
    T = 4096
    out = _serve("--set", f"T={T}", "--chips", str(tp), "--ep", str(ep), "--dp-attention", str(dp),
                 "--redundant-experts", str(red))
    weights, experts = _weights_per_device(tp, slots)
    assert _value(out, "serving.ep.weights") == weights
    assert _exact(out["serving.ep.weights"]["breakdown"]["routed experts"]) == experts
    # the workspace: the logits of 2,048 tokens over the vocabulary split 4 ways, at 2 bytes
    budget = Fraction(H200) * Fraction(9, 10) - weights - 2 * 2048 * _c("vocab_size") // tp
    assert _value(out, "serving.ep.kv_budget") == budget
    # MLA: the latent and the rotary key, whole on every TP device, 61 layers, blocks of 16
    per_sequence = _c("num_hidden_layers") * (_c("kv_lora_rank") + _c("qk_rope_head_dim")) * 2 * 16 * -(-T // 16)
    assert _value(out, "serving.kv_per_sequence") == per_sequence
    rank = int(budget // per_sequence)
    assert _value(out, "serving.ep.max_sequences_per_rank") == rank
    assert _value(out, "serving.ep.max_sequences") == dp * rank


@pytest.mark.parametrize("b", [6])
def test_all_to_all_bytes_are_fp8_dispatch_and_bf16_combine(b):
    """Per MoE layer a device dispatches its ceil(b/4) tokens to 8 experts each, 7,168 FP8 bytes
    and 56 float32 scales a copy, and returns 8·b/4 expert outputs of 7,168 BF16 elements."""
    out = _serve("--set", "T=1024", "--set", f"B={b}", "--chips", "4", "--ep", "320", "--redundant-experts", "64")
    d, k = _c("hidden_size"), _c("num_experts_per_tok")
    layers = _c("num_hidden_layers") - _c("first_k_dense_replace")
    own = -(-b // 4)
    parts = out["serving.ep.all_to_all_bytes"]["breakdown"]
    assert _exact(parts["dispatch"]) == layers * own * k * d
    assert _exact(parts["dispatch scales"]) == layers * own * k * (d // 128) * 4
    assert _exact(parts["combine"]) == layers * Fraction(k * b, 4) * d * 2
    total = layers * own * k * (d + d // 128 * 4) + layers * Fraction(k * b, 4) * d * 2
    step = out["serving.ep.decode_step"]["breakdown"]
    # 320 devices span nodes of 8: the all-to-all crosses the network card
    assert _exact(step["all-to-all"]) == total / NIC
    assert _value(out, "serving.ep.decode_step") == sum(_exact(p) for p in step.values())
    bf16 = _serve("--set", "T=1024", "--set", f"B={b}", "--chips", "4", "--ep", "320", "--redundant-experts", "64",
                  "--dispatch-bits", "16")
    assert _value(bf16, "serving.ep.all_to_all_bytes") == layers * own * k * d * 2 + layers * Fraction(k * b, 4) * d * 2


def test_an_imbalanced_busiest_device_returns_more_copies():
    """--imbalance 2: the busiest device's experts receive twice the balanced share, so it returns
    twice the combine copies; its own tokens' dispatch is unchanged; its experts' time grows."""
    argv = ["--set", "T=1024", "--set", "B=6", "--chips", "4", "--ep", "320", "--redundant-experts", "64"]
    even, busy = _serve(*argv), _serve(*argv, "--imbalance", "2")
    layers, d, k = 58, _c("hidden_size"), _c("num_experts_per_tok")
    parts = busy["serving.ep.all_to_all_bytes"]["breakdown"]
    assert _exact(parts["combine"]) == layers * 2 * Fraction(k * 6, 4) * d * 2
    assert _exact(parts["dispatch"]) == _exact(even["serving.ep.all_to_all_bytes"]["breakdown"]["dispatch"])
    step = lambda out: out["serving.ep.decode_step"]["breakdown"]  # noqa: E731
    assert _exact(step(busy)["routed experts"]) > _exact(step(even)["routed experts"])
    assert _exact(step(busy)["attention side (TP)"]) == _exact(step(even)["attention side (TP)"])


def test_an_instance_within_a_node_uses_the_nvlink():
    out = _serve("--set", "T=1024", "--set", "B=8", "--fp8", "--chips", "2", "--ep", "8")
    d, k, layers = _c("hidden_size"), _c("num_experts_per_tok"), 58
    total = layers * 4 * k * (d + d // 128 * 4) + layers * 4 * k * d * 2
    assert _exact(out["serving.ep.decode_step"]["breakdown"]["all-to-all"]) == Fraction(total, NVLINK)
    assert out["options"]["dp_attention"] == 4


@pytest.mark.parametrize("argv, message", [
    (["deepseek-v3", "--ep", "7", "--dp-attention", "7"], "does not divide the 256 routed experts"),
    (["deepseek-v3", "--ep", "320", "--chips", "4"], "does not divide the 256 routed experts"),
    (["deepseek-v3", "--ep", "32", "--chips", "4", "--dp-attention", "4"], "4 x 4 = 16"),
    (["deepseek-v3", "--dp-attention", "8"], "--dp-attention goes with --ep"),
    (["deepseek-v3", "--imbalance", "2"], "--imbalance goes with --ep"),
    (["deepseek-v3", "--ep", "8", "--imbalance", "9"], "in [1, 8]"),
    (["deepseek-v3", "--ep", "8", "--prefix", "64"], "--prefix is not priced"),
    (["llama-7b", "--ep", "2"], "no routed experts"),
])
def test_impossible_splits_are_one_line_exit_2(argv, message):
    r = run(["serve", *argv, "--hardware", "h200"])
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert message in r.stderr


def test_help_names_the_expert_parallel_options():
    r = run(["serve", "--help"], columns=200)
    for opt in ("--ep", "--dp-attention", "--redundant-experts", "--dispatch-bits", "--imbalance", "--ep-bandwidth"):
        assert opt in r.stdout


# --- --draft mtp: the module's weights and KV cache in the capacity -----------------------------
def _mtp_layer_params():
    """DeepSeek-V3's checkpoint holds one multi-token-prediction layer (model.layers.61): a MoE
    decoder layer (transformers' DeepseekV3DecoderLayer, built on the meta device), eh_proj
    (2d -> d), enorm, hnorm and shared_head.norm, and copies of the embedding and head, which the
    report shares with the main model (Sec. 2.2) and which are left out here."""
    cfg = transformers.DeepseekV3Config(**{k: v for k, v in CONFIG.items() if k not in ("architectures",
                                                                                       "quantization_config")})
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3DecoderLayer

    with torch.device("meta"):
        layer = DeepseekV3DecoderLayer(cfg, layer_idx=cfg.num_hidden_layers)
    d = cfg.hidden_size
    return param_count(layer) + 2 * d * d + 3 * d


def test_mtp_draft_counts_its_layer_in_the_capacity():
    T = 4096
    common = ["--set", f"T={T}", "--set", "B=1", "--chips", "8", "--fp8"]
    plain = _serve(*common)
    mtp = _serve(*common, "--draft", "mtp", "--gamma", "1", "--acceptance", "0.8", "--gamma-max", "1")
    extra = _mtp_layer_params()
    assert symgpt.load("deepseek-v3").with_(mtp_layers=1).params.value - symgpt.load("deepseek-v3").params.value \
        == extra                                           # the engine's module is the checkpoint's layer
    # fp8: one byte a weight and norm; TP8 splits the MTP layer's Q/KV up-projections, output
    # projection and experts (the rules of --chips); its down-projections, latent norms, router,
    # eh_proj and the three norms stay whole; the budget falls by what one device holds of it
    d, h, E = _c("hidden_size"), _c("num_attention_heads"), _c("n_routed_experts")
    rq, rkv, nope, rope, v = (_c(k) for k in ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                               "v_head_dim"))
    whole = d * rq + rq + d * (rkv + rope) + rkv + 2 * d + E * d + 2 * d * d + 3 * d
    split = rq * h * (nope + rope) + rkv * h * (nope + v) + h * v * d + (E + 1) * 3 * d * \
        _c("moe_intermediate_size")
    assert whole + split == extra
    assert _value(plain, "serving.kv_budget") - _value(mtp, "serving.kv_budget") == whole + Fraction(split, 8)
    # one more MLA layer in every sequence: the latent and rotary key at one byte, blocks of 16
    per_layer = (rkv + rope) * 1 * 16 * (T // 16)
    assert _value(mtp, "serving.kv_per_sequence") - _value(plain, "serving.kv_per_sequence") == per_layer
    assert any("multi-token-prediction module" in n and "KV" in n for n in mtp["notes"])

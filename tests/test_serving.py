"""symgpt serve and symgpt.derive.serving*: paged-KV capacity, prefix caching, speculative
decoding, cost, energy and disaggregation, each against an independent oracle: vLLM's formulas
for the page size and the number of blocks (vllm/v1/kv_cache_interface.py,
vllm/v1/core/kv_cache_utils.py get_num_blocks) redone by hand, hand-worked examples, the
Leviathan et al. 2023 expectation summed over accepted prefixes, a float brute force for the
best gamma, and a transformers DynamicCache's bytes after a prefill."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.derive import serving, serving_cost
from symgpt.derive import serving_spec as sp
from tests.clirun import run

CONFIGS = Path(__file__).parent / "configs"
H100 = 80 * 10**9   # NVIDIA's datasheet: 80 GB


def _cdiv(a, b):
    return -(-a // b)


# --- paged capacity ----------------------------------------------------------------------------
def test_llama_7b_block_is_8_mib_and_a_token_half_a_mib():
    """Hand-worked: K and V, 32 layers of 4,096 at 2 bytes: 2·32·4096·2 = 524,288 bytes a token;
    a block of 16 tokens 8 MiB."""
    m = symgpt.load("llama-7b", T=4096)
    assert serving.block_bytes(m).value == 2 * 32 * 4096 * 2 * 16 == 8 * 2**20
    assert serving.kv_per_sequence(m).value == 256 * 8 * 2**20            # 4096 / 16 blocks


def _vllm_max_sequences(total, util, weights, workspace, page, layers, tokens, block):
    """vLLM: available = gpu_memory_utilization · memory - non-KV memory; num_blocks = available
    // page_size // num_layers (get_num_blocks); a sequence of T tokens takes cdiv(T, block)."""
    available = Fraction(total) * Fraction(util) - weights - workspace
    num_blocks = int(available // page // layers)
    return num_blocks // _cdiv(tokens, block)


@pytest.mark.parametrize("T", [1, 16, 17, 1000, 4096])
def test_max_sequences_is_vllms_num_gpu_blocks_over_the_blocks_of_a_sequence(T):
    m = symgpt.load("llama-7b", T=T)
    weights = 2 * 6_738_415_616                 # every parameter at bf16 (the model card's count)
    workspace = 2 * 2048 * 32_000               # flash attention: the logits of 2,048 tokens are the largest
    page = 2 * 16 * 32 * 128 * 2                # AttentionSpec.page_size_bytes: 2·block·kv heads·head size·dtype
    want = _vllm_max_sequences(H100, "0.9", weights, workspace, page, 32, T, 16)
    got = serving.max_sequences(m, hardware="h100-sxm", attention="flash").value
    assert got == want


def test_gqa_and_sliding_window_cap_the_blocks_of_a_windowed_layer():
    """Mistral 7B: 8 KV heads of 128, window 4096; at T = 8192 each layer holds cdiv(W, 16) + 1
    blocks, SlidingWindowSpec.max_memory_usage_bytes for one decode token (W - 1 + 1 tokens)."""
    m = symgpt.load("mistral-7b", T=8192)
    page = 2 * 16 * 8 * 128 * 2
    assert serving.block_bytes(m).value == 32 * page
    assert serving.kv_per_sequence(m).value == 32 * page * (_cdiv(4096 - 1 + 1, 16) + 1)
    short = symgpt.load("mistral-7b", T=100)
    assert serving.kv_per_sequence(short).value == 32 * page * _cdiv(100, 16)


def test_mixed_windows_count_each_kind_of_layer():
    m = symgpt.load(CONFIGS / "gemma-2-9b.json", T=8192)   # 21 sliding (W = 4096), 21 full layers
    page = 2 * 16 * 8 * 256 * 2
    assert serving.kv_per_sequence(m).value == page * (21 * (256 + 1) + 21 * 512)


def test_mla_page_is_the_latent_and_the_rotary_key():
    """MLAAttentionSpec.real_page_size_bytes: block · (kv_lora_rank + qk_rope_head_dim) · dtype."""
    m = symgpt.load(CONFIGS / "deepseek-v2-lite.json", T=1000)
    assert serving.block_bytes(m).value == 27 * 16 * (512 + 64) * 2


def test_tensor_parallel_splits_heads_but_not_the_latent():
    m = symgpt.load("llama-7b", T=4096)
    assert serving.block_bytes(m, chips=4).value * 4 == serving.block_bytes(m).value
    mla = symgpt.load(CONFIGS / "deepseek-v2-lite.json", T=1000)
    assert serving.block_bytes(mla, chips=4).value == serving.block_bytes(mla).value


def test_bytes_per_token_match_a_transformers_dynamic_cache(tmp_path):
    import torch
    from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(hidden_size=64, intermediate_size=96, num_hidden_layers=3, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=256, max_position_embeddings=128)
    (tmp_path / "config.json").write_text(cfg.to_json_string())
    hf = LlamaForCausalLM(cfg).to(torch.bfloat16).eval()
    n = 7
    cache = DynamicCache(config=hf.config)
    with torch.no_grad():
        hf(input_ids=torch.randint(0, 256, (1, n)), cache=cache, use_cache=True)
    held = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    m = symgpt.load(tmp_path / "config.json", T=n)
    per_token = serving.block_bytes(m, block=1).value
    assert held == per_token * n == 2 * 3 * 2 * 16 * 2 * n
    assert serving.kv_per_sequence(m, block=4).value == per_token * 4 * _cdiv(n, 4)   # the last block partly filled


def test_prefix_caching_holds_the_full_blocks_once():
    """Hand-worked, llama-7b at T = 4096 with a 1,000-token prefix: 62 full blocks shared (the
    62·16 = 992 tokens; the last 8 in a partial block each sequence keeps)."""
    m = symgpt.load("llama-7b", T=4096)
    block = 8 * 2**20
    assert serving.prefix_saved(m, 1000).value == 62 * block
    budget = serving.kv_budget(m, hardware="h100-sxm", attention="flash").value
    want = (budget - 62 * block) // ((256 - 62) * block)
    assert serving.prefix_max_sequences(m, 1000, hardware="h100-sxm", attention="flash").value == want
    assert serving.prefix_max_sequences(m, 0, hardware="h100-sxm", attention="flash").value == \
        serving.max_sequences(m, hardware="h100-sxm", attention="flash").value


def test_recurrent_models_are_refused_in_one_line():
    with pytest.raises(symgpt.SymgptError, match="recurrent"):
        serving.block_bytes(symgpt.load("mamba", T=16))


# --- step times --------------------------------------------------------------------------------
@pytest.mark.parametrize("name, chips", [("llama-7b", 1), ("mistral-7b", 1), ("llama-3.1-8b", 4)])
def test_the_timer_is_infers_decode_and_prefill(name, chips):
    m = symgpt.load(name, B=3, T=700)
    o = {"hardware": "h100-sxm", "attention": "flash", "chips": chips}
    t = sp.StepTimer(m, **o)
    assert t.seconds(3, 1, 700) == m.quantity("inference.decode.time", **o).value
    assert t.seconds(3, 700, 0) == m.quantity("inference.prefill.time", **o).value


def test_a_verification_step_prices_k_tokens_against_the_cache():
    """Hand-worked FLOPs of k new tokens after T cached (llama): the matmuls of k tokens,
    k·(8·L·d² + 6·L·d·d_ff + 2·V·d) per sequence, and the attention 4·L·k·(T + k)·d."""
    from symgpt.derive.inference import op_flops
    from symgpt.derive.inference_setup import setup
    from symgpt.core.symbols import B as Bs, T as Ts
    from symgpt.derive.step import extend_step

    m = symgpt.load("llama-7b")
    s = setup(m)
    L, d, ff, V, T, B = 32, 4096, 11008, 32000, 1000, 2
    for k in (1, 2, 5):
        st = extend_step(m.arch, k)
        f = sympy.Add(*[op_flops(s, m.arch, st, o) for o in st.ops]).xreplace({**m.bindings, Bs: B, Ts: T})
        assert f == B * (k * (8 * L * d * d + 6 * L * d * ff + 2 * V * d) + 4 * L * k * (T + k) * d)


# --- speculative decoding ----------------------------------------------------------------------
def _expected_tokens(alpha: Fraction, gamma: int) -> Fraction:
    """Leviathan et al. 2023: the first n drafts accepted and the next rejected (probability
    α^n (1 - α)) yields n + 1 tokens; all γ accepted (α^γ) yields γ + 1."""
    total = Fraction(0)
    for n in range(gamma):
        total += alpha ** n * (1 - alpha) * (n + 1)
    return total + alpha ** gamma * (gamma + 1)


@pytest.mark.parametrize("alpha", ["0", "1/2", "0.7", "0.95"])
@pytest.mark.parametrize("gamma", [1, 3, 8])
def test_tokens_per_step_is_leviathans_expectation(alpha, gamma):
    a = Fraction(alpha)
    assert sp.tokens_per_step(sp.acceptance(alpha), gamma) == sympy.Rational(_expected_tokens(a, gamma))


def test_best_gamma_matches_a_float_brute_force():
    target = sp.StepTimer(symgpt.load("gpt2-xl", T=512), hardware="a100-80gb", attention="flash")
    draft = sp.StepTimer(symgpt.load("gpt2-small", T=512), hardware="a100-80gb", attention="flash")
    for alpha, batch in ((Fraction(8, 10), 1), (Fraction(6, 10), 16)):
        spec = sp.Speculation(target, draft, alpha)
        plain = float(target.seconds(batch, 1, 512))

        def speed(g):
            steps = sum(float(draft.seconds(batch, 1, 512 + i)) for i in range(g))
            steps += float(target.seconds(batch, g + 1, 512))
            a = float(alpha)
            return (1 - a ** (g + 1)) / (1 - a) * plain / steps

        floats = [speed(g) for g in range(1, 17)]
        g, v = spec.best_gamma(batch, 512)
        assert g == 1 + floats.index(max(floats))
        assert abs(float(v) - max(floats)) < 1e-12


def test_the_crossover_batch_is_where_the_speedup_falls_to_one():
    target = sp.StepTimer(symgpt.load("llama-3.1-8b", T=256), hardware="h100-sxm", attention="flash")
    draft = sp.StepTimer(symgpt.load("llama-3.2-1b-instruct", T=256), hardware="h100-sxm", attention="flash")
    spec = sp.Speculation(target, draft, Fraction(1, 2))
    b = spec.crossover(4, 256)
    assert b is not None and b > 1
    assert spec.speedup(4, b, 256) <= 1 < spec.speedup(4, b - 1, 256)


def test_acceptance_outside_the_range_is_refused():
    for bad in ("1", "-0.1", "1.5", "x", "1/0"):
        with pytest.raises(symgpt.SymgptError):
            sp.acceptance(bad)


# --- cost, energy, disaggregation ---------------------------------------------------------------
def test_cost_and_energy_from_infers_step_times():
    m = symgpt.load("llama-7b", B=8, T=2048)
    o = {"hardware": "h100-sxm", "attention": "flash"}
    t = sp.StepTimer(m, **o)
    dec = m.quantity("inference.decode.time", **o).value
    pre = m.quantity("inference.prefill.time", **o).value
    inp, out = serving_cost.cost(t, 8, 2048, sympy.Rational(5, 2))
    assert out.value == sympy.Rational(5, 2) / 3600 * dec / 8 * 10**6
    assert inp.value == sympy.Rational(5, 2) / 3600 * pre / (8 * 2048) * 10**6
    e_in, e_out = serving_cost.energy(t, 8, 2048)
    assert e_out.value == 700 * dec / 8                  # the H100 SXM datasheet's 700 W
    assert e_in.value == 700 * pre / (8 * 2048)


def test_disaggregation_moves_the_prompts_blocks():
    m = symgpt.load("llama-7b", B=8, T=2048)
    t = sp.StepTimer(m, hardware="h100-sxm", attention="flash")
    kv, transfer, ratio = serving_cost.disaggregation(t, serving.paged(m, hardware="h100-sxm"), 8, 1000, 200)
    assert kv.value == 63 * 8 * 2**20                     # cdiv(1000, 16) blocks of 8 MiB
    assert transfer.value == sympy.Rational(kv.value, 50 * 10**9)   # one 400 Gb/s NIC per GPU
    dec = sum(t.seconds(8, 1, 1000 + i) for i in range(199)) / 8
    assert ratio.value == t.seconds(1, 1000, 0) / dec


def test_prefill_rate_at_a_ttft_target_is_the_m_d_1_queues():
    """The rate's mean TTFT is the target exactly (Pollaczek-Khinchine, deterministic service), and
    a first-come-first-served queue fed by Poisson arrivals at that rate (Lindley's recursion,
    200,000 prompts) waits that long on average, within 2 %."""
    import random

    m = symgpt.load("llama-7b", B=8, T=2048)
    t = sp.StepTimer(m, hardware="h100-sxm", attention="flash")
    rate, batch, serve, ratio = serving_cost.disaggregation_targets(t, 64, 1000, 20, sympy.Rational(1, 20),
                                                                    sympy.Rational(1, 50))
    D = t.seconds(1, 1000, 0)
    assert serving_cost.mdl_mean_ttft(D, rate.value) == sympy.Rational(1, 20)
    lam, d = float(rate.value), float(D)
    rng, clock, free, total, n = random.Random(7), 0.0, 0.0, 0.0, 200_000
    for _ in range(n):
        clock += rng.expovariate(lam)
        start = max(clock, free)
        free = start + d
        total += free - clock
    assert abs(total / n - 0.05) < 0.02 * 0.05
    # the decode batch: the largest whose mean step over the 19 decode contexts meets the TPOT
    def mean(b):
        return sum(t.seconds(b, 1, 1000 + i) for i in range(19)) / 19
    b = int(batch.value)
    assert mean(b) <= sympy.Rational(1, 50) and (b == 64 or mean(b + 1) > sympy.Rational(1, 50))
    assert serve.value == b / (19 * mean(b)) and ratio.value == serve.value / rate.value


def test_targets_below_one_step_are_refused():
    m = symgpt.load("llama-7b", B=8, T=2048)
    t = sp.StepTimer(m, hardware="h100-sxm", attention="flash")
    with pytest.raises(SymgptError, match="below one prefill"):
        serving_cost.disaggregation_targets(t, 8, 1000, 20, sympy.Rational(1, 1000), 1)
    with pytest.raises(SymgptError, match="below one decode step"):
        serving_cost.disaggregation_targets(t, 8, 1000, 20, 1, sympy.Rational(1, 10**6))


# --- the command line --------------------------------------------------------------------------
def test_cli_json_and_text():
    r = run(["serve", "llama-7b", "--hardware", "h100-sxm", "--set", "T=4096", "--prefix", "1000", "--json"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    budget = serving.kv_budget(symgpt.load("llama-7b", T=4096), hardware="h100-sxm", attention="flash").value
    assert out["serving.max_sequences"]["value"] == str(budget // (256 * 8 * 2**20)) or \
        out["serving.max_sequences"]["value"] == int(budget // (256 * 8 * 2**20))
    text = run(["serve", "llama-7b", "--hardware", "h100-sxm", "--set", "T=4096"]).stdout
    assert "serving.max_sequences" in text and "ceiling(T/16)" in text


@pytest.mark.parametrize("argv, message", [
    (["--acceptance", "1", "--draft", "gpt2-small", "--gamma", "2"], "[0, 1)"),
    (["--block-size", "0"], "--block-size"),
    (["--prefix", "-3"], "--prefix"),
    (["--prefix", "5000"], "longer than the context"),
    (["--memory-utilization", "1.5"], "--memory-utilization"),
    (["--gamma", "2"], "--draft"),
    (["--draft", "mtp", "--gamma", "2", "--acceptance", "0.5"], "multi-token-prediction"),
    (["--ttft", "1"], "--ttft and --tpot"),
    (["--disaggregate", "--prompt", "100", "--generate", "10", "--ttft", "1"], "--ttft and --tpot"),
    (["--disaggregate", "--prompt", "100", "--generate", "10", "--ttft", "-1", "--tpot", "1"], "--ttft"),
])
def test_bad_input_is_one_line_exit_2(argv, message):
    r = run(["serve", "gpt2-small", "--hardware", "h100-sxm", "--set", "T=1024", *argv])
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_help_documents_every_option():
    r = run(["serve", "--help"], columns=200)
    for opt in ("--hardware", "--chips", "--block-size", "--memory-utilization", "--workspace-tokens", "--prefix",
                "--draft", "--gamma", "--acceptance", "--gamma-max", "--price-per-hour", "--power-fraction",
                "--disaggregate", "--prompt", "--generate", "--ttft", "--tpot", "--json"):
        assert opt in r.stdout


def test_the_mtp_draft_step_is_one_moe_layer_a_projection_and_the_head():
    """DeepSeek-V3 Sec. 2.2: one MTP module = eh_proj (2d -> d), one MoE layer and the shared
    head; its decode-step FLOPs are one MoE layer's (the main model with one more layer, less
    without) plus 2·2d·d and 2·d·V per token."""
    from symgpt.core.symbols import B as Bs, T as Ts
    from symgpt.derive.step import module_step

    sizes = dict(d=64, h=4, V=256, d_ff=24, E=8, k=2, dense_ff=80, shared_ff=24, q_lora_rank=24, kv_lora_rank=32,
                 qk_nope_dim=16, qk_rope_dim=8, v_head_dim=12, dense_layers=1)
    o = {"peak": 10**15, "bandwidth": 10**12}

    def flops(m, st):
        from symgpt.derive.inference import op_flops
        from symgpt.derive.inference_setup import setup

        f = sympy.Add(*[op_flops(setup(m, **o), m.arch, st, x) for x in st.ops])
        return f.xreplace({**m.bindings, Bs: 1, Ts: 40})

    m3 = symgpt.load("deepseek_v3", L=3, mtp_layers=1, **sizes)
    m2, m4 = symgpt.load("deepseek_v3", L=2, **sizes), symgpt.load("deepseek_v3", L=3, **sizes)
    from symgpt.derive.step import step

    one_layer = flops(m4, step(m4.arch, "decode")) - flops(m2, step(m2.arch, "decode"))
    assert flops(m3, module_step(m3.arch, "mtp")) == one_layer + 2 * 128 * 64 + 2 * 64 * 256
    assert sp.mtp_model(m3) is m3
    assert sp.has_mtp(symgpt.load("deepseek-v3")) and not sp.has_mtp(symgpt.load("deepseek-v2-lite"))


# --- the request-mix simulation behind `serve` ----------------------------------------------
def test_serve_simulates_a_trace_with_vllms_block_capacity(tmp_path):
    """`symgpt serve --trace` replays the trace with the KV capacity of the closed form in blocks:
    vLLM's num_gpu_blocks (available // page // layers, per layer: the same blocks in every
    layer), worked as above for Llama-7B on an 80 GB H100. The three requests arrive together
    and are served whole (hand count: 3 + 2 + 1 prompt tokens, 2 + 2 + 2 output tokens)."""
    trace = tmp_path / "trace.csv"
    trace.write_text("arrival_time_s,prompt_tokens,output_tokens\n0,3,2\n0,2,2\n0,1,2\n", encoding="utf-8")
    r = run(["serve", "llama-7b", "--hardware", "h100-sxm", "--trace", str(trace), "--json"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    weights = 2 * 6_738_415_616
    workspace = 2 * 2048 * 32_000
    page = 2 * 16 * 32 * 128 * 2
    available = Fraction(H100) * Fraction("0.9") - weights - workspace
    assert out["simulation"]["config"]["capacity_blocks"] == int(available // page // 32)
    sim = out["simulation"]["simulation"]
    # prefill-first: one step prefills all three prompts (each request's first token), one step
    # decodes all three (their second and last token)
    assert (sim["steps"], sim["prompt_tokens"], sim["output_tokens"], sim["peak_batch"]) == (2, 6, 6, 3)
    ttft, e2e, tpot = sim["ttft_s"], sim["e2e_s"], sim["tpot_s"]
    assert ttft["p50"] == ttft["max"] and e2e["p50"] == e2e["max"]
    assert e2e["max"] == pytest.approx(ttft["max"] + tpot["max"], rel=1e-12)
    assert out["simulation"]["config"]["scheduler"] == "prefill-first"


def test_serve_refuses_a_bad_trace_in_one_line(tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text("arrival_time_s,prompt_tokens,output_tokens\n1,3,2\n0,2,2\n", encoding="utf-8")
    r = run(["serve", "llama-7b", "--hardware", "h100-sxm", "--trace", str(trace)])
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, r.stderr

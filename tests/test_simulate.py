"""The request-mix simulation (symgpt.simulate): schedules worked out by hand with a constant
step cost, the step time against symgpt infer's own step quantities, the saturated steady state
against a long simulation, traces and distributions checked, and the command-line edge."""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys

import pytest
import sympy

from symgpt.core.errors import SymgptError
from symgpt.simulate import command
from symgpt.simulate.engine import Config, simulate
from symgpt.simulate.results import summary
from symgpt.simulate.trace import Trace, draw_trace, parse_dist, read_trace

ONE = lambda chunks, contexts: 1.0  # noqa: E731  (every step takes 1 s)
THREE = Trace([0.0, 0.0, 2.5], [4, 6, 3], [3, 1, 2], "three requests")


def test_prefill_first_by_hand():
    """max batch 2, 1 s a step. Requests: r0 (t=0, P=4, G=3), r1 (t=0, P=6, G=1), r2 (t=2.5, P=3, G=2).
    step 1 [0,1]: prefill r0 and r1 -> first tokens at 1; r1 (one token) done at 1.
    steps 2, 3 [1,3]: decode r0 (tokens 2 and 3) -> r0 done at 3. r2 arrives at 2.5, during step 3.
    step 4 [3,4]: prefill r2 -> first token at 4; step 5 [4,5]: decode r2 -> done at 5.
    TTFT: 1, 1, 1.5. E2E: 3, 1, 2.5. TPOT: r0 (3 - 1) / 2 = 1, r2 (5 - 4) / 1 = 1."""
    o = simulate(THREE, ONE, Config("prefill-first", max_batch=2))
    assert o.first_token == [1.0, 1.0, 4.0]
    assert o.finish == [3.0, 1.0, 5.0]
    assert o.steps == 5
    s = summary(o)
    assert s["ttft_s"]["mean"] == pytest.approx(3.5 / 3)
    assert s["tpot_s"]["p50"] == 1.0 and s["e2e_s"]["max"] == 3.0
    # output tokens 6 over the makespan 0..5 s
    assert s["throughput"]["output_tokens_per_s"] == pytest.approx(6 / 5)


def test_chunked_by_hand():
    """Token budget 4, max batch 2, 1 s a step; same requests.
    step 1 [0,1]: nothing runs, budget 4: r0's whole prompt (4) -> r0's first token at 1.
    step 2 [1,2]: decode r0 (1 token) + r1's first chunk of 3 (budget 4 - 1).
    step 3 [2,3]: decode r0 -> its third token, done at 3; r1's last 3 -> first (and only) token at 3.
    step 4 [3,4]: r2 (arrived 2.5) whole prompt of 3 -> first token at 4; step 5: decode -> done at 5.
    TTFT: 1, 3, 1.5; E2E: 3, 3, 2.5."""
    o = simulate(THREE, ONE, Config("chunked", max_batch=2, token_budget=4))
    assert o.first_token == [1.0, 3.0, 4.0]
    assert o.finish == [3.0, 3.0, 5.0]
    s = summary(o)
    # TTFT sorted 1, 1.5, 3: p50 = 1.5; p90 at rank 0.9 * 2 = 1.8: 1.5 + 0.8 * (3 - 1.5) = 2.7
    assert s["ttft_s"]["p50"] == 1.5 and s["ttft_s"]["p90"] == pytest.approx(2.7)
    assert s["ttft_s"]["p99"] == pytest.approx(1.5 + 0.98 * 1.5)


def test_the_step_sees_the_chunks_and_the_caches():
    """One request, P = 4, G = 3, budget 3 (chunked): step 1 prefills 3 tokens (0 cached), step 2
    the last 1 (3 cached) -> first token; step 3 decodes with the cache holding 4 tokens, step 4
    with 5. Step times 1 + tokens/10: 1.3, 1.1, 1.1, 1.1."""
    seen = []

    def cost(chunks, contexts):
        seen.append((list(chunks), list(contexts)))
        return 1 + (sum(k for _, k in chunks) + len(contexts)) / 10

    o = simulate(Trace([0.0], [4], [3], "one"), cost, Config("chunked", max_batch=1, token_budget=3))
    assert seen == [([(0, 3)], []), ([(3, 1)], []), ([], [4]), ([], [5])]
    assert o.first_token == [pytest.approx(2.4)] and o.finish == [pytest.approx(4.6)]


def test_kv_capacity_holds_back_a_request():
    """Blocks of 4 tokens, capacity 3 blocks. r0 (P=5, G=4) holds ceil(8 / 4) = 2 blocks, r1 (P=3,
    G=2) ceil(4 / 4) = 1, r2 (P=6, G=2) ceil(7 / 4) = 2: r0 and r1 start at 0 (3 blocks); r2 waits.
    1 s a step, prefill-first: step 1 prefills r0, r1 (first tokens at 1); step 2 decodes both: r1
    done at 2, its block freed (r0 still holds 2: one free, r2 needs 2); step 3 decodes r0 (token
    3); step 4 decodes r0 -> done at 4; step 5 prefills r2 (first token at 5); step 6 -> done at 6."""
    t = Trace([0.0, 0.0, 0.0], [5, 3, 6], [4, 2, 2], "capacity")
    o = simulate(t, ONE, Config("prefill-first", max_batch=8, capacity_blocks=3, block_size=4))
    assert o.first_token == [1.0, 1.0, 5.0] and o.finish == [4.0, 2.0, 6.0]
    assert o.peak_batch == 2
    with pytest.raises(SymgptError, match="needs 2 KV blocks"):
        simulate(t, ONE, Config("prefill-first", capacity_blocks=1, block_size=4))


def test_refusals_of_a_configuration():
    with pytest.raises(SymgptError, match="at least --max-batch"):
        simulate(THREE, ONE, Config("chunked", max_batch=8, token_budget=4))
    with pytest.raises(SymgptError, match="exceeds the token budget"):
        simulate(THREE, ONE, Config("prefill-first", token_budget=5))


@pytest.fixture(scope="module")
def gpt2():
    from symgpt.model.model import load

    return load("gpt2-small")


def test_the_step_time_is_infer_s_decode_and_prefill(gpt2):
    from symgpt.simulate.stepcost import step_cost

    cost = step_cost(gpt2, hardware="h100-sxm")
    for b, t in ((1, 100), (8, 512), (64, 1000)):
        m = gpt2.with_(B=b, T=t)
        decode = m.quantity("inference.decode.time", hardware="h100-sxm").value
        prefill = m.quantity("inference.prefill.time", hardware="h100-sxm").value
        assert cost([], [t] * b) == pytest.approx(float(decode), rel=1e-12)
        assert cost([(0, t)] * b, []) == pytest.approx(float(prefill), rel=1e-12)
    # a chunk of the whole prompt after nothing is the prefill of one prompt
    assert cost([(0, 300)], []) == pytest.approx(float(gpt2.with_(B=1, T=300).quantity(
        "inference.prefill.time", hardware="h100-sxm").value), rel=1e-12)
    with pytest.raises(SymgptError, match="needs a device"):
        step_cost(gpt2)


def test_the_saturated_simulation_is_the_closed_form(gpt2):
    """A burst of 5·B identical requests, prefill-first with max batch B: five cycles of one
    prefill of B prompts and G - 1 decode steps, each yielding B·G tokens -- the closed form
    inference.tokens_per_s at B, which steady.saturating_throughput answers exactly."""
    from symgpt.simulate.steady import saturating_batch, saturating_throughput
    from symgpt.simulate.stepcost import step_cost

    b, p, g = 16, 200, 40
    exact = saturating_throughput(gpt2, b, p, g, hardware="h100-sxm")
    assert isinstance(exact, sympy.Rational)
    t = Trace([0.0] * (5 * b), [p] * (5 * b), [g] * (5 * b), "burst")
    o = simulate(t, step_cost(gpt2, hardware="h100-sxm"), Config("prefill-first", max_batch=b))
    assert summary(o)["throughput"]["output_tokens_per_s"] == pytest.approx(float(exact), rel=1e-9)
    # the saturating batch: blocks of 16, ceil((200 + 40 - 1) / 16) = 15 blocks a request
    assert saturating_batch(256, p, g, capacity_blocks=100) == 6
    assert saturating_batch(4, p, g, capacity_blocks=100) == 4


def test_decode_throughput_vs_batch_is_exact(gpt2):
    from symgpt.core.symbols import B
    from symgpt.simulate.steady import decode_throughput

    rate = decode_throughput(gpt2, 512, hardware="h100-sxm")
    step = gpt2.with_(B=8, T=512).quantity("inference.decode.time", hardware="h100-sxm").value
    assert rate.subs(B, 8) == 8 / step


def _write(tmp_path, text):
    f = tmp_path / "trace.csv"
    f.write_text(text)
    return f


@pytest.mark.parametrize("text, message", [
    ("arrival_time_s,prompt_tokens,output_tokens\n0,10,5\n1,-3,5\n", "negative length"),
    ("arrival_time_s,prompt_tokens,output_tokens\n1,10,5\n0.5,10,5\n", "not sorted"),
    ("arrival_time_s,prompt_tokens,output_tokens\n0,ten,5\n", "not a number"),
    ("arrival_time_s,prompt_tokens,output_tokens\nnan,10,5\n", "not a finite number"),
    ("arrival_time_s,prompt_tokens,output_tokens\n0,10.5,5\n", "not a whole number"),
    ("arrival_time_s,prompt_tokens,output_tokens\n0,10,0\n", "zero length"),
    ("arrival_time_s,prompt_tokens,output_tokens\n-1,10,5\n", "negative arrival"),
    ("time,prompt,output\n0,10,5\n", "header lacks"),
    ("", "empty"),
    ("arrival_time_s,prompt_tokens,output_tokens\n", "no requests"),
])
def test_bad_traces_are_refused_in_one_line(tmp_path, text, message):
    with pytest.raises(SymgptError, match=message) as e:
        read_trace(_write(tmp_path, text))
    assert "\n" not in str(e.value)


def test_a_trace_is_read_in_any_column_order(tmp_path):
    t = read_trace(_write(tmp_path, "output_tokens,arrival_time_s,prompt_tokens,note\n5,0,10,a\n7,0.5,3,b\n"))
    assert (t.arrival, t.prompt, t.output) == ([0.0, 0.5], [10, 3], [5, 7])


def test_distributions_are_deterministic_and_checked():
    a = draw_trace(500, 4, "uniform:100:200", "exp:50", stream=3)
    assert a == draw_trace(500, 4, "uniform:100:200", "exp:50", stream=3)
    assert a.prompt != draw_trace(500, 4, "uniform:100:200", "exp:50", stream=4).prompt
    assert min(a.prompt) >= 100 and max(a.prompt) <= 200 and min(a.output) >= 1
    assert a.arrival == sorted(a.arrival) and a.arrival[0] > 0
    # Poisson at 4/s: 500 arrivals take about 125 s (the mean gap 1/4 s; 5 sigma is 28 s)
    assert abs(a.arrival[-1] - 125) < 28
    burst = draw_trace(3, "inf", "const:7", "lognormal:20:0", stream=0)
    assert burst.arrival == [0.0] * 3 and burst.prompt == [7] * 3 and burst.output == [20] * 3
    for bad in ("poisson:3", "uniform:5", "uniform:9:3", "const:-2", "exp:0", "const:x"):
        with pytest.raises(SymgptError):
            parse_dist(bad, "--prompt-dist")
    with pytest.raises(SymgptError, match="--rate"):
        draw_trace(3, "0", "const:1", "const:1")


def _args(line):
    p = argparse.ArgumentParser()
    command.add_arguments(p)
    return p.parse_args(line.split())


def test_the_command_edge(gpt2, tmp_path):
    f = _write(tmp_path, "arrival_time_s,prompt_tokens,output_tokens\n0,100,20\n0.01,50,10\n0.5,80,1\n")
    r = command.run(gpt2, _args(f"--trace {f} --scheduler chunked --token-budget 64 --max-batch 4"),
                    "h100-sxm", capacity_blocks=100)
    json.dumps(r)                                               # JSON-ready
    assert r["config"] == {"scheduler": "chunked", "max_batch": 4, "token_budget": 64,
                           "capacity_blocks": 100, "block_size": 16}
    assert r["simulation"]["requests"] == 3 and r["simulation"]["output_tokens"] == 31
    assert r["simulation"]["tpot_s"] is not None
    assert sympy.Rational(r["steady"]["saturating_tokens_per_s"]["value"]) > 0
    text = command.render(r)
    assert "TTFT" in text and "p99" in text and "float seconds" in text and "Hyndman" in text
    for line, message in (("--requests 5", "--rate"), (f"--trace {f} --requests 5", "not both"),
                          ("--requests 5 --rate 1 --prompt-dist const:5 --output-dist const:5 --max-batch 0",
                           "--max-batch"), ("", "--trace"),
                          # gpt2-small's context is 1,024 tokens: 1,000 + 30 - 1 = 1,029 is refused
                          ("--requests 2 --rate 1 --prompt-dist const:1000 --output-dist const:30", "T_max = 1024")):
        with pytest.raises(SymgptError, match=message):
            command.run(gpt2, _args(line), "h100-sxm")


def test_the_edge_is_light_and_cold_start_imports_no_simpy():
    code = ("import sys, json, argparse\nfrom symgpt.simulate import command\n"
            "command.add_arguments(argparse.ArgumentParser())\n"
            "from symgpt.cli import main\ntry:\n    main(['params', 'gpt2-small'])\nexcept SystemExit:\n    pass\n"
            "print(json.dumps('simpy' in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) is False
    code = ("import sys, json, argparse\nfrom symgpt.simulate import command\n"
            "command.add_arguments(argparse.ArgumentParser())\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'sympy', 'numpy', 'simpy', 'networkx'})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_a_mixed_step_reads_the_weights_once(gpt2):
    """A step of 8 decodes and a 300-token chunk costs less than the decode step and the prefill
    taken apart (their weights read twice) and more than either alone."""
    from symgpt.simulate.stepcost import step_cost

    cost = step_cost(gpt2, hardware="h100-sxm")
    decode, prefill, both = cost([], [500] * 8), cost([(0, 300)], []), cost([(0, 300)], [500] * 8)
    assert max(decode, prefill) < both < decode + prefill


def test_the_progress_bar_says_requests():
    import io

    from symgpt.sweep.run import Progress

    stream = io.StringIO()
    simulate(THREE, ONE, Config("prefill-first", max_batch=2),
             Progress(3, stream, after=0, label="simulation", unit="requests"))
    assert "simulation [" in stream.getvalue() and "3/3 requests" in stream.getvalue()


def test_a_chunk_after_a_cached_prefix(gpt2):
    """A chunk of 200 tokens after 1,000 cached does the work of 200 tokens, its attention over
    200 · 1,200 query-key pairs: more than a prefill of 200 tokens alone (200 · 200 pairs), less
    than a prefill of all 1,200 (1,200 · 1,200 pairs and six times the matmul tokens)."""
    from symgpt.simulate.stepcost import step_cost

    for causal in (False, True):
        cost = step_cost(gpt2, hardware="h100-sxm", causal=causal)
        assert cost([(0, 200)], []) < cost([(1000, 200)], []) < cost([(0, 1200)], [])


@pytest.mark.parametrize("name, message", [
    ("bert-base", "bidirectional encoder"),
    ("t5-small", "decoder-only"),
    ("mixtral-8x7b", "Min"),          # the experts read: Min(E, k·B)
    ("mistral-7b", "Min"),            # the sliding window: Min(W, T + 1)
])
def test_models_not_simulated_are_refused(name, message):
    from symgpt.model.model import load
    from symgpt.simulate.stepcost import step_cost

    with pytest.raises(SymgptError, match=message) as e:
        step_cost(load(name), hardware="h100-sxm")
    assert "\n" not in str(e.value)

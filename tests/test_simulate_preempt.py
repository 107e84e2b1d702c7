"""Preemption by recomputation in the request-mix simulation (symgpt.simulate.preempt), on a
hand-worked trace, and the same timeline as the reserving scheduler when blocks never run out."""

from __future__ import annotations

import json

from symgpt.simulate import engine, preempt
from symgpt.simulate.trace import Trace
from tests.clirun import run


def test_a_hand_worked_preemption():
    """Blocks of 2 tokens, 3 blocks; A and B arrive at 0 with 2-token prompts and 3 output tokens;
    every step takes 1 s.
    t=0..1  prefill A and B (1 block each; 1 free): first tokens at 1 s;
    t=1..2  decode: A's cache grows to 3 tokens, takes the free block; B needs one, none is free:
            B (the last admitted) is preempted, its block freed;
    t=2..3  B's recompute of 2 + 1 tokens needs 2 blocks, 1 free: A decodes alone and finishes (3 s);
    t=3..4  B prefills its 3 tokens (its second token);
    t=4..5  B decodes its third token: done at 5 s.
    Reserving the longest cache (2 blocks each), B waits for A: first token at 4 s, done at 6 s."""
    trace = Trace([0.0, 0.0], [2, 2], [3, 3], "hand")
    cfg = engine.Config("prefill-first", 256, None, 3, 2)
    steps = []

    def step_time(chunks, contexts):
        steps.append((chunks, contexts))
        return 1.0

    o = preempt.simulate(trace, step_time, cfg)
    assert (o.first_token, o.finish, o.steps, o.preemptions) == ([1.0, 1.0], [3.0, 5.0], 5, 1)
    assert steps == [([(0, 2), (0, 2)], []), ([], [2]), ([], [3]), ([(0, 3)], []), ([], [3])]
    r = engine.simulate(trace, lambda chunks, contexts: 1.0, cfg)
    assert (r.first_token, r.finish, r.steps) == ([1.0, 4.0], [3.0, 6.0], 6)


def test_without_pressure_it_is_the_reserving_timeline(tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text("arrival_time_s,prompt_tokens,output_tokens\n0,3,2\n0,2,2\n0.001,1,4\n", encoding="utf-8")
    argv = ["serve", "llama-7b", "--hardware", "h100-sxm", "--trace", str(trace), "--json"]
    a, b = run(argv), run(argv + ["--preempt"])
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    sa, sb = json.loads(a.stdout)["simulation"]["simulation"], json.loads(b.stdout)["simulation"]["simulation"]
    assert sb.pop("preemptions") == 0
    assert sa == sb


def test_preemption_with_chunked_prefill_is_refused(tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text("arrival_time_s,prompt_tokens,output_tokens\n0,3,2\n", encoding="utf-8")
    r = run(["serve", "llama-7b", "--hardware", "h100-sxm", "--trace", str(trace), "--preempt", "--scheduler",
             "chunked"])
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "prefill-first" in r.stderr

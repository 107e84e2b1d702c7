"""Sweeps: vectorised values equal symgpt's exact values and independent closed forms typed here.

Oracles: lecture note 7.3's parameter count 12Ld² + 13Ld + Vd + T_max·d + 2d (GPT-2, tied, with
biases), and the seeds' default FLOP convention (matmuls only, 2 per multiply-add, full T×T,
LM head in): forward 24BTLd² + 4BT²Ld + 2BTVd, training 3× forward.
"""

from __future__ import annotations

import csv
import io
import random

import pytest

import symgpt
from symgpt.cli import main
from symgpt.core.errors import SymgptError
from symgpt.sweep import Grid, sweep


def seed_params(L, d, V, T_max):
    return 12 * L * d * d + 13 * L * d + V * d + T_max * d + 2 * d


def seed_train(B, T, L, d, V):
    return 3 * (24 * B * T * L * d * d + 4 * B * T * T * L * d + 2 * B * T * V * d)


GPT = dict(V=50257, T_max=1024)


def test_every_point_equals_the_seed_closed_form():
    m = symgpt.load("gpt2", **GPT)
    r = sweep(m, ["L=1:48", "d=64:2048:64"], columns=["params"])
    assert r.points == len(r.rows) == 48 * 32
    for L, d, p in r.rows:
        assert p == seed_params(L, d, **GPT)
    assert [row[:2] for row in r.rows[:3]] == [[1, 64], [1, 128], [1, 192]]  # first axis slowest


def test_sampled_points_equal_exact_symgpt_values():
    m = symgpt.load("gpt2-small", B=8, T=1024)
    r = sweep(m, ["L=1:96:5", "d=640:12800:640", "h=12,16,24"], columns=["params", "flops.train"])
    assert r.skipped  # 640k is divisible by 12 and 24 only when 3 | k
    rng = random.Random(0)
    for L, d, h, p, f in rng.sample(r.rows, 12):
        exact = symgpt.load("gpt2-small", L=L, d=d, h=h, B=8, T=1024)
        assert p == exact.params.value == seed_params(L, d, 50257, 1024)
        assert f == exact.quantity("flops.train").value == seed_train(8, 1024, L, d, 50257)


@pytest.mark.parametrize("text, keep", [
    ("params < 1e9", lambda p, L, d: p < 10**9),
    ("params >= 350_000_000", lambda p, L, d: p >= 350_000_000),
    ("L * d <= 20000", lambda p, L, d: L * d <= 20000),
    ("params / L > 1.5e7", lambda p, L, d: p * 2 > 3 * 10**7 * L),
])
def test_where_keeps_exactly_the_points_that_satisfy_it(text, keep):
    m = symgpt.load("gpt2", **GPT)
    r = sweep(m, ["L=1:48", "d=256:2048:128"], columns=["params"], where=[text])
    expected = [[L, d, seed_params(L, d, **GPT)] for L in range(1, 49) for d in range(256, 2049, 128)
                if keep(seed_params(L, d, **GPT), L, d)]
    assert r.rows == expected and r.matched == len(expected)


@pytest.mark.parametrize("k, smallest", [(1, False), (5, False), (3, True)])
def test_top_by_is_the_sorted_head(k, smallest):
    m = symgpt.load("gpt2", **GPT)
    r = sweep(m, ["L=1:24", "d=256:1024:256"], columns=["params"], where=["params < 2e8"],
              top=k, by="params", smallest=smallest)
    pool = [(seed_params(L, d, **GPT), i, [L, d]) for i, (L, d) in
            enumerate((L, d) for L in range(1, 25) for d in range(256, 1025, 256))
            if seed_params(L, d, **GPT) < 2 * 10**8]
    pool.sort(key=lambda t: (t[0] if smallest else -t[0], t[1]))
    assert r.rows == [[*ld, p] for p, _, ld in pool[:k]]


def test_constraints_skip_points_with_a_count():
    m = symgpt.load("gpt2", **GPT)
    r = sweep(m, ["L=2", "d=64:1024:64", "h=8,12"], columns=["params"])
    bad = sum(1 for d in range(64, 1025, 64) for h in (8, 12) if d % h)
    assert r.skipped == {"d must be divisible by h": bad}
    assert all(d % h == 0 for _, d, h, _ in r.rows) and len(r.rows) == 32 - bad


def test_flags_can_be_gridded():
    r = sweep("gpt2-small", ["tied=true,false", "L=12,24"], columns=["params"])
    assert r.rows == [[t, L, symgpt.load("gpt2-small", tied=t, L=L).params.value]
                      for t in (True, False) for L in (12, 24)]


def test_ceiling_atoms_are_exact():
    m = symgpt.load("gpt2-small", vocab_multiple=64)
    r = sweep(m, ["V=50200:50320:7"], columns=["params"])
    for V, p in r.rows:
        assert p == symgpt.load("gpt2-small", vocab_multiple=64, V=V).params.value
        padded = -(-V // 64) * 64
        assert p == seed_params(12, 768, padded, 1024)


@pytest.mark.parametrize("d", [10**39, 3 * 10**18, 2**31 - 1])
def test_huge_sizes_never_overflow(d):
    m = symgpt.load("gpt2", **GPT)
    r = sweep(m, ["L=1,7", f"d={d}"], columns=["params"], where=["params > 0"])
    assert r.rows == [[L, d, seed_params(L, d, **GPT)] for L in (1, 7)]
    assert all(type(v) is int for row in r.rows for v in row)


def test_api_accepts_a_mapping_and_options_reach_flops():
    m = symgpt.load("gpt2-small", B=8, T=1024)
    r = sweep(m, {"L": [12]}, columns=["flops.train"], options={"convention": "kaplan"})
    assert r.rows == [[12, m.quantity("flops.train", convention="kaplan").value]]


def _cli(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_csv_is_deterministic_and_parses_back(tmp_path, capsys):
    args = ["sweep", "gpt2-small", "--grid", "L=6:24:6", "--grid", "d=768,1536", "--columns",
            "params,flops.forward", "--set", "B=8", "--set", "T=1024"]
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert _cli(args + ["-o", str(a)], capsys)[0] == 0
    assert _cli(args + ["-o", str(b), "--no-progress"], capsys)[0] == 0
    assert a.read_bytes() == b.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv"]  # no temp files left
    code, out, _ = _cli(args, capsys)
    assert code == 0 and out == a.read_text()
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["L", "d", "params", "flops.forward"] and len(rows) == 9
    for L, d, p, f in rows[1:]:
        L, d = int(L), int(d)
        assert int(p) == seed_params(L, d, 50257, 1024)
        assert int(f) == seed_train(8, 1024, L, d, 50257) // 3


def test_cli_top_answers_a_design_question(capsys):
    code, out, err = _cli(["sweep", "gpt2", "--set", "V=50257", "--set", "T_max=1024", "--grid",
                           "L=1:64", "--grid", "d=128:4096:128", "--where", "params < 1.5e9",
                           "--top", "1", "--by", "params"], capsys)
    best = max((seed_params(L, d, 50257, 1024), L, d) for L in range(1, 65)
               for d in range(128, 4097, 128) if seed_params(L, d, 50257, 1024) < 1.5 * 10**9)
    assert code == 0 and out.splitlines()[1] == f"{best[1]},{best[2]},{best[0]}"
    assert "points" in err


@pytest.mark.parametrize("args, message", [
    (["--grid", "d=4096:512:128"], "STOP (512) is smaller than START (4096)"),
    (["--grid", "d=512:4096:0"], "STEP of d must be a positive integer"),
    (["--grid", "d=512:4096:-64"], "STEP of d must be a positive integer"),
    (["--grid", "d=1.5:10"], "START of d must be a positive integer"),
    (["--grid", "d=512:4e3:x"], "STEP of d must be a positive integer"),
    (["--grid", "d=0:10"], "START of d must be a positive integer"),
    (["--grid", "width=1:10"], "unknown name 'width'"),
    (["--grid", "d=1:10000000", "--grid", "L=1:1000000"], "at most 1,000,000,000,000"),
    (["--grid", "d=1:10000000000000"], "at most 1,000,000,000,000"),
    (["--grid", "d=1:10", "--grid", "d=2"], "given twice"),
    (["--grid", "d=1,1"], "listed twice"),
    (["--grid", "d"], "--grid expects NAME=START:STOP:STEP"),
    (["--grid", "tied=1"], "flag tied takes true/false"),
    (["--grid", "d=64", "--where", "params < oops"], "unknown name 'oops'"),
    (["--grid", "d=64", "--where", "__import__('os')"], "condition"),
    (["--grid", "d=64", "--columns", "nope"], "unknown quantity 'nope'"),
    (["--grid", "d=64", "--top", "1"], "--top needs --by"),
    (["--grid", "d=64", "--top", "0", "--by", "params"], "--top must be a positive integer"),
    (["--grid", "d=64", "--columns", "flops.train"], "depends on B, T"),
    (["--grid", "d=64", "--zero", "2"], "option zero=2 does not apply"),
    (["--grid", "L=6", "--set", "L=12"], "both set (--set) and gridded"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, capsys):
    code, out, err = _cli(["sweep", "gpt2-small", *args], capsys)
    assert code == 2 and out == ""
    assert err.startswith("symgpt: error: ") and err.count("\n") == 1, err
    assert message in err


def test_grid_object_counts_points():
    g = Grid.parse(["d=512:4096:128", "L=12,24,36"])
    assert (g.shape, g.total) == ((29, 3), 87)
    with pytest.raises(SymgptError, match="at most"):
        Grid.parse(["d=1:1000001", "L=1:1000000"])  # 10**12 + 10**6 points


@pytest.mark.parametrize("options, per_param, divisor", [
    ({"precision": "fp32"}, 4, 1),
    ({"precision": "bf16"}, 2, 1),
    ({"precision": "fp32", "zero": 3, "dp": 7}, 4, 7),   # ZeRO-3 shards the weights: exact p/q
])
def test_memory_weights_follow_the_precision_and_zero(options, per_param, divisor):
    from fractions import Fraction

    m = symgpt.load("gpt2", **GPT)
    r = sweep(m, ["L=1,2", "d=64,128"], columns=["memory.weights"], options=options)
    assert r.rows == [[L, d, Fraction(per_param * seed_params(L, d, **GPT), divisor)]
                      for L in (1, 2) for d in (64, 128)]


def test_the_80gb_question_matches_exact_values(capsys):
    args = ["sweep", "gpt2", "--set", "V=50257", "--set", "T_max=4096", "--set", "T=4096", "--set", "B=1",
            "--set", "h=64", "--grid", "L=12:96:12", "--grid", "d=1024:8192:1024", "--zero", "2", "--dp",
            "64", "--where", "memory.total < 80e9", "--top", "1", "--by", "params",
            "--columns", "params,memory.total,flops.train"]
    code, out, _ = _cli(args, capsys)
    assert code == 0
    L, d, p, mem, f = map(int, out.splitlines()[1].split(","))
    m = symgpt.load("gpt2", V=50257, T_max=4096, T=4096, B=1, h=64, L=L, d=d)
    assert p == m.params.value == seed_params(L, d, 50257, 4096)
    assert mem == m.quantity("memory.total", zero=2, dp=64).value < 80 * 10**9
    assert f == m.quantity("flops.train").value == seed_train(1, 4096, L, d, 50257)
    bigger = [(L2, d2) for L2 in range(12, 97, 12) for d2 in range(1024, 8193, 1024)
              if seed_params(L2, d2, 50257, 4096) > p]
    for L2, d2 in bigger[:6]:  # every larger model does not fit
        m2 = symgpt.load("gpt2", V=50257, T_max=4096, T=4096, B=1, h=64, L=L2, d=d2)
        assert m2.quantity("memory.total", zero=2, dp=64).value >= 80 * 10**9


def test_by_without_top_sorts_every_row():
    m = symgpt.load("gpt2", **GPT)
    r = sweep(m, ["L=1:6", "d=64,128"], columns=["params"], by="params", smallest=True)
    assert r.column("params") == sorted(seed_params(L, d, **GPT) for L in range(1, 7) for d in (64, 128))


def test_progress_bar_goes_to_its_stream():
    from symgpt.sweep import Progress

    stream = io.StringIO()
    m = symgpt.load("gpt2", **GPT)
    sweep(m, ["L=1:1000", "d=64:64000:640"], columns=["params"], top=1, by="params",
          progress=Progress(100_000, stream, after=0))
    text = stream.getvalue()
    assert text.startswith("\rsweep [") and "100.0%  100,000/100,000 points" in text and text.endswith("\n")


def test_keywords_and_the_option_values_are_one_request():
    """``top=``/``by=``/``workers=`` are the keyword edge of ``Ranking`` and ``Execution``: the
    same request either way; a misspelt keyword is a TypeError, as for any Python signature."""
    import pytest as _pytest

    from symgpt.sweep import Execution, Ranking, sweep as run

    a = run("gpt2-small", ["L=12,24"], top=1, by="params", workers=0)
    b = run("gpt2-small", ["L=12,24"], ranking=Ranking(1, "params"), execution=Execution(workers=0))
    # the larger model is the one with more layers; GPT-2 small's 124,439,808 at L=12
    assert a.rows == b.rows == [[24, 124439808 + 12 * 7087872]]
    with _pytest.raises(TypeError, match="topp"):
        run("gpt2-small", ["L=12,24"], topp=1)
    with _pytest.raises(TypeError, match="not both"):
        run("gpt2-small", ["L=12,24"], top=1, ranking=Ranking(1, "params"))

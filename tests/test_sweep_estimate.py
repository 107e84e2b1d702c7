"""Long sweeps say how long: an estimate before a large one (from timed samples of its own grid),
a refusal past the limits unless --yes (naming the limit), progress lines on stderr (never in
the CSV), and memory bounded however large the grid (a product of two 10**6-value axes streamed
for a bounded prefix). The timing constants are replaced so that each test runs in seconds.

Oracles: the CSV's own bytes (the estimate of the output against the file written), the
sample layout (three samples of at most SAMPLE_POINTS points, whole runs of the inner
axis: the grid's start, middle and end), and
GPT-2's parameter count 12Ld² + 13Ld + Vd + T_max·d + 2d (tied head, biases; Radford et al.
2019) for the rows.
"""

from __future__ import annotations

import io
import tracemalloc

import pytest

import symgpt
from symgpt.cli import main
from symgpt.sweep import estimate, run
from symgpt.sweep.run import duration, write_csv

GPT = dict(V=50257, T_max=1024)
GRID = ["--grid", "L=1:100", "--grid", "d=64:6400:64"]   # 10,000 points


def gpt2_params(L, d, V=50257, T_max=1024):
    return 12 * L * d * d + 13 * L * d + V * d + T_max * d + 2 * d


def _cli(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def small_limits(monkeypatch):
    """Sample from 1,000 points, 256 points a sample, and say every estimate."""
    monkeypatch.setattr(estimate, "SAMPLE_FROM", 1000)
    monkeypatch.setattr(estimate, "SAMPLE_POINTS", 256)
    monkeypatch.setattr(estimate, "SAY_AFTER", 0.0)


def test_an_estimate_before_a_large_sweep(small_limits, tmp_path, capsys):
    out = tmp_path / "s.csv"
    code, stdout, err = _cli(["sweep", "gpt2", "--set", "V=50257", "--set", "T_max=1024", *GRID,
                              "--workers", "0", "-o", str(out)], capsys)
    assert code == 0, err
    lines = err.splitlines()
    assert lines[0].startswith("symgpt: sweep of 10,000 points: expected about ")
    assert "in this process, writing about " in lines[0]
    # a sample is whole runs of the inner axis (100 values of d): 2 runs = 200 points of the 256
    assert lines[0].endswith(f"(rate measured on {3 * 200:,} sample points)")
    written = out.stat().st_size
    said = lines[0].split("writing about ")[1].split(" (")[0]
    value, unit = said.split()
    assert unit == "kB" and abs(float(value) * 1000 - written) <= 0.15 * written, (said, written)
    rows = out.read_text().splitlines()
    assert rows[0] == "L,d,params" and len(rows) == 10_001
    assert rows[-1] == f"100,6400,{gpt2_params(100, 6400)}"


def test_small_sweeps_are_not_sampled(capsys, monkeypatch):
    calls = []
    monkeypatch.setattr(estimate, "measure", lambda *a: calls.append(a))
    code, _, err = _cli(["sweep", "gpt2-small", "--grid", "L=1:1000", "--workers", "0"], capsys)
    assert code == 0 and calls == [] and "expected" not in err


def test_yes_is_needed_past_the_point_limit(small_limits, monkeypatch, capsys):
    monkeypatch.setattr(estimate, "CONFIRM_POINTS", 5000)
    argv = ["sweep", "gpt2", "--set", "V=50257", "--set", "T_max=1024", *GRID, "--workers", "0"]
    code, out, err = _cli(argv, capsys)
    assert code == 2 and out == ""
    assert err.startswith("symgpt: error: the sweep has 10,000 points, more than the limit of "
                          "5,000 that runs unconfirmed (expected: about ")
    assert err.rstrip().endswith("add --yes to run it, or narrow the grid") and err.count("\n") == 1
    code, out, err = _cli(argv + ["--yes"], capsys)
    assert code == 0 and len(out.splitlines()) == 10_001


def test_yes_is_needed_past_the_output_limit(small_limits, monkeypatch, capsys):
    monkeypatch.setattr(estimate, "CONFIRM_BYTES", 10_000)
    argv = ["sweep", "gpt2", "--set", "V=50257", "--set", "T_max=1024", *GRID, "--workers", "0"]
    code, out, err = _cli(argv, capsys)
    assert code == 2 and out == ""
    assert "of CSV, more than the limit of 10.0 kB that runs unconfirmed" in err
    code, out, err = _cli(argv + ["--top", "1", "--by", "params"], capsys)  # one row: no CSV limit
    assert code == 0 and out.splitlines()[1] == f"100,6400,{gpt2_params(100, 6400)}"


def test_a_huge_grid_is_refused_at_once(capsys):
    """10**12 points (a product of two 10**6-value axes): refused, naming the real limit, after
    sampling a few thousand points (no worker process is started)."""
    code, out, err = _cli(["sweep", "gpt2-small", "--grid", "L=1:1000000", "--grid", "d=1:1000000"],
                          capsys)
    assert code == 2 and out == ""
    assert err.startswith("symgpt: error: the sweep has 1,000,000,000,000 points, more than the "
                          f"limit of {estimate.CONFIRM_POINTS:,} that runs unconfirmed")


def test_progress_lines_on_stderr_not_in_the_output(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(run, "LINE_AFTER", 0.0)
    monkeypatch.setattr(run, "LINE_EVERY", 0.0)
    out = tmp_path / "s.csv"
    code, _, err = _cli(["sweep", "gpt2", "--set", "V=50257", "--set", "T_max=1024", "--grid",
                         "L=1:40", "--grid", "d=64:64000:64", "--chunk", "4000", "--workers", "0",
                         "-o", str(out)], capsys)
    assert code == 0
    lines = [line for line in err.splitlines() if line.startswith("symgpt: sweep ")]
    assert len(lines) == 10  # one per chunk of 4,000 points (40,000 points)
    assert lines[0].startswith("symgpt: sweep 10.0% done (4,000/40,000 points, ")
    assert lines[-1].startswith("symgpt: sweep 100.0% done (40,000/40,000 points, ")
    assert "left)" in lines[1]
    text = out.read_text()
    assert "symgpt" not in text and "done" not in text and len(text.splitlines()) == 40_001
    assert text.splitlines()[-1] == f"40,64000,{gpt2_params(40, 64000)}"


def test_progress_lines_are_spaced(monkeypatch, capsys):
    monkeypatch.setattr(run, "LINE_AFTER", 0.0)
    monkeypatch.setattr(run, "LINE_EVERY", 3600.0)
    code, _, err = _cli(["sweep", "gpt2-small", "--grid", "L=1:40", "--grid", "d=64:64000:64",
                         "--chunk", "4000", "--workers", "0"], capsys)
    assert code == 0 and sum(line.startswith("symgpt: sweep ") for line in err.splitlines()) == 1
    code, _, err = _cli(["sweep", "gpt2-small", "--grid", "L=1:40", "--chunk", "4", "--workers",
                         "0", "--no-progress"], capsys)
    assert code == 0 and "done" not in err


class _Stop(Exception):
    pass


class _Sink:
    """A binary output that keeps nothing and stops the sweep after *limit* writes."""

    def __init__(self, limit: int):
        self.limit, self.writes, self.bytes = limit, 0, 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        self.bytes += len(data)
        if self.writes > self.limit:
            raise _Stop()


def _peak(chunks: int) -> int:
    m = symgpt.load("gpt2-small")
    tracemalloc.start()
    try:
        with pytest.raises(_Stop):
            write_csv(_Sink(chunks), m, ["L=1:1000000", "d=1:1000000"], ["params"], workers=0,
                      chunk=1 << 14)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_of_a_product_grid_stays_bounded():
    """10**12 points streamed: the peak after 40 chunks is the peak after 5 (no growth with the
    points done), and a few MB (a chunk's arrays and text), far from the product's size."""
    few, many = _peak(5), _peak(40)
    assert many < 16 * 2**20, many
    assert many - few < 2**20, (few, many)


def test_durations_in_words():
    assert [duration(s) for s in (0, 59.4, 60, 200, 3600, 7500, 86400, 3 * 86400 + 4 * 3600)] == [
        "0 s", "59 s", "1 min", "3 min 20 s", "1 h", "2 h 5 min", "1 day 0 h", "3 days 4 h"]

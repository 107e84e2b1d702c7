"""Sweeps on Dask give the bytes of the in-process sweep and of a plain Python loop.

Oracles: the in-process path (``--workers 0``), and the closed forms of GPT-2 (tied, with
biases) typed here and evaluated point by point with Python ints -- parameters
12Ld² + 13Ld + Vd + T_max·d + 2d (Radford et al. 2019; nanoGPT), training FLOPs
3·(24BTLd² + 4BT²Ld + 2BTVd) (matmuls only, 2 per multiply-add, full T×T, LM head in) -- with
d mod h = 0 checked by hand, --where by exact integer comparison and --top by sorting every row
(ties in grid order). The grids cross many chunk boundaries (small --chunk) and their training
FLOPs pass 2⁶³. Dask runs on two local worker processes (``--workers 2``) and on an in-test
``distributed.LocalCluster`` on 127.0.0.1 named with ``--scheduler``.
"""

from __future__ import annotations

import logging
import pickle
from functools import cache

import pytest

import symgpt
from symgpt.cli import main
from symgpt.sweep import Grid, dask_chunks, sweep, write_csv
from symgpt.sweep.run import Execution, Ranking, _Plan

V, T_MAX, B, T = 50257, 1024, 8192, 1024
LS, DS, HS = range(1, 31), range(64, 131073, 64), (1, 3)   # 122,880 points
GRID = ["--grid", "L=1:30", "--grid", "d=64:131072:64", "--grid", "h=1,3"]
BASE = ["sweep", "gpt2", "--set", f"V={V}", "--set", f"T_max={T_MAX}", "--set", f"B={B}",
        "--set", f"T={T}", *GRID, "--columns", "params,flops.train", "--no-progress"]
TOP = ["--where", "params < 4e11", "--top", "7", "--by", "flops.train"]
CSV = ["--where", "params < 2e10"]


def params(L, d):
    return 12 * L * d * d + 13 * L * d + V * d + T_MAX * d + 2 * d


def train(L, d):
    return 3 * (24 * B * T * L * d * d + 4 * B * T * T * L * d + 2 * B * T * V * d)


@cache
def loop(limit):
    """Every point in grid order (L slowest, then d, then h): the rows under *limit* params."""
    return tuple([L, d, h, params(L, d), train(L, d)] for L in LS for d in DS for h in HS
            if d % h == 0 and params(L, d) < limit)


def csv_text(rows):
    return "L,d,h,params,flops.train\n" + "".join(",".join(map(str, r)) + "\n" for r in rows)


def top_text(rows, k):
    order = sorted(range(len(rows)), key=lambda i: (-rows[i][4], i))  # ties in grid order
    return csv_text([rows[i] for i in order[:k]])


def test_the_oracle_grid_passes_int64_and_has_ties():
    rows = loop(4 * 10**11)
    assert max(r[4] for r in rows) > 2**63 > min(r[4] for r in rows)
    assert len({r[4] for r in rows}) < len(rows)  # h = 1 and h = 3 tie wherever 3 | d


def _cli(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow  # two clusters of worker processes start (a few seconds each)
def test_local_processes_give_the_bytes_of_the_loop_and_of_one_process(tmp_path, capsys):
    want_top = top_text(loop(4 * 10**11), 7)
    code, here, err = _cli([*BASE, *TOP, "--workers", "0", "--chunk", "4096"], capsys)
    assert code == 0 and here == want_top
    code, there, err = _cli([*BASE, *TOP, "--workers", "2", "--chunk", "3000"], capsys)
    assert code == 0 and there == want_top
    assert err.splitlines()[-1] == "symgpt: 122,880 points, " \
        f"{len(loop(4 * 10**11)):,} matched, 7 rows"
    want_csv = csv_text(loop(2 * 10**10)).encode()
    a, b = tmp_path / "here.csv", tmp_path / "there.csv"
    assert _cli([*BASE, *CSV, "--workers", "0", "-o", str(a)], capsys)[0] == 0
    assert _cli([*BASE, *CSV, "--workers", "2", "--chunk", "5000", "-o", str(b)], capsys)[0] == 0
    assert a.read_bytes() == b.read_bytes() == want_csv
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here.csv", "there.csv"]


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                      host="127.0.0.1", dashboard_address=None, worker_dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster:
        yield cluster.scheduler_address


@pytest.mark.parametrize("chunk", [2000, 7777, 1 << 18])
def test_a_named_scheduler_gives_the_same_bytes(scheduler, chunk, capsys, tmp_path):
    code, out, _ = _cli([*BASE, *TOP, "--scheduler", scheduler, "--chunk", str(chunk)], capsys)
    assert code == 0 and out == top_text(loop(4 * 10**11), 7)
    path = tmp_path / "rows.csv"
    code, _, _ = _cli([*BASE, *CSV, "--scheduler", scheduler, "--chunk", str(chunk), "-o", str(path)], capsys)
    assert code == 0 and path.read_bytes() == csv_text(loop(2 * 10**10)).encode()


def test_every_mode_matches_in_process_on_a_named_scheduler(scheduler):
    """Rows kept without --top (grid order, and sorted by --by), --smallest, gridded flags (two
    kernels, two offsets) and skipped counts: the same result on the cluster."""
    m = symgpt.load("gpt2", V=V, T_max=T_MAX, B=B, T=T)
    cases = [
        dict(grid=["L=1:30", "d=64:131072:64", "h=1,3"], columns=["params"], where=["params < 1e10"]),
        dict(grid=["L=1:30", "d=64:131072:64", "h=1,3"], columns=["params"], where=["params < 1e10"],
             by="params", smallest=True),
        dict(grid=["tied=true,false", "L=1:12", "d=64:8192:64", "h=2,3"], columns=["params"],
             top=9, by="params", smallest=True),
        dict(grid=["tied=true,false", "L=1:12", "d=64:8192:64", "h=2,3"], columns=["params"],
             top=4, by="tied"),
    ]
    for case in cases:
        here = sweep(m, workers=0, **case)
        there = sweep(m, scheduler=scheduler, chunk=3001, **case)
        assert there.csv() == here.csv() and here.csv().count("\n") > 1
        assert (there.points, there.matched, there.skipped, there.notes) == \
            (here.points, here.matched, here.skipped, here.notes)
    from distributed import Client

    with Client(scheduler, set_as_default=False) as client:  # a client of the caller's, kept open
        rows = sweep(m, ["L=1:30", "d=64:131072:64", "h=1,3"], ["params"], where=["params < 1e10"],
                     scheduler=client).rows
        assert client.status == "running"
    assert rows == [list(r[:4]) for r in loop(10**10)]


@pytest.mark.parametrize("address, says", [
    ("tcp://127.0.0.1:1", "cannot use the Dask scheduler at tcp://127.0.0.1:1"),
    ("not an address!", "--scheduler expects a Dask scheduler address"),
    ("", "--scheduler expects a Dask scheduler address"),
    ("d", "--scheduler expects a Dask scheduler address with its port"),   # was: 10 s, then "AssertionError"
    ("True", "--scheduler expects a Dask scheduler address with its port"),
    ("tcp://host", "--scheduler expects a Dask scheduler address with its port"),
    ("inproc://x", "--scheduler expects a Dask scheduler address"),
])
def test_a_bad_scheduler_is_one_line_and_exit_2(address, says, capsys, monkeypatch):
    monkeypatch.setattr(dask_chunks, "CONNECT_TIMEOUT", 1)
    code, out, err = _cli([*BASE, *TOP, "--scheduler", address], capsys)
    assert code == 2 and out == ""
    assert err.startswith("symgpt: error: ") and err.count("\n") == 1, err
    assert says in err


@pytest.mark.parametrize("args, says", [
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], "not allowed with"),
    (["--workers", "-1"], "--workers must be an integer from 0"),
    (["--chunk", "0"], "--chunk must be an integer from 1"),
])
def test_bad_placement_is_one_line_and_exit_2(args, says, capsys):
    code, out, err = _cli([*BASE, *TOP, *args], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and says in err, err


@pytest.mark.parametrize("size", [1, 5, 64, 1000, 4096, 1 << 18])
def test_chunk_ranges_tile_the_grid_in_order(size):
    """Any range of chunks is built from its two indices; the ranges, concatenated, are every
    flat index once, in order (the arithmetic of C order, counted here)."""
    assert Grid.parse(["L=1:1000", "d=1:1000", "V=1:1000"]).total == 10**9  # no longer refused
    grid = Grid.parse(["L=1:7", "d=8:800:8", "h=1,2,3"])
    count = grid.chunk_count(size)
    whole = [(c.start, c.stop) for c in grid.chunks(size)]
    assert len(whole) == count and whole[0][0] == 0 and whole[-1][1] == 7 * 100 * 3
    assert all(a[1] == b[0] for a, b in zip(whole, whole[1:]))
    for first in range(0, count, 3):
        part = [(c.start, c.stop) for c in grid.chunks(size, first, first + 3)]
        assert part == whole[first:first + 3]
        assert grid.chunk_points(size, first, first + 3) == sum(b - a for a, b in part)


def test_a_kernel_pickles_small_and_evaluates_the_same():
    """What a worker receives: the compiled closed forms, no arrays of the grid's size."""
    m = symgpt.load("gpt2", T_max=1024, h=64, B=1, T=1024)
    plan = _Plan(m, ["L=1:1000", "d=64:64000:64", "V=32000:32999"], ["params", "flops.train"],
                 ["params < 7e10"], Ranking(5, "flops.train"), {}, False, Execution(0, None, 1 << 18))
    kernel = plan.kernels[0]
    data = pickle.dumps(kernel)
    assert len(data) < 64_000  # 10⁹ points
    back = pickle.loads(data)
    a, b = kernel.part(100, 104, "top"), back.part(100, 104, "top")
    # chunks of 262 d values x every V: chunks 100..103 are L = 26, whole (10⁶ points)
    assert (a.points, a.matched) == (b.points, b.matched) and a.points == 10**6
    assert set(a.table["L"].tolist()) == {26}
    assert {k: v.tolist() for k, v in a.table.items()} == {k: v.tolist() for k, v in b.table.items()}


def test_write_csv_api_on_a_named_scheduler(scheduler):
    import io

    m = symgpt.load("gpt2", V=V, T_max=T_MAX, B=B, T=T)
    out = io.BytesIO()
    r = write_csv(out, m, ["L=1:30", "d=64:131072:64", "h=1,3"], ["params", "flops.train"],
                  where=["params < 2e10"], scheduler=scheduler, chunk=2000)
    assert out.getvalue() == csv_text(loop(2 * 10**10)).encode() and r.matched == len(loop(2 * 10**10))

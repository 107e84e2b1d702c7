"""``symgpt plan``'s fast pricing (``sweep.plan``, ``plan_space``, ``plan_price``) against
independent oracles: each strategy's memory, step time, bytes and MFU derived alone with integer
degrees (``model.quantity``); the whole ranking against a brute-force exact sort of every
strategy, priced from ``memory.total`` and ``time.step`` derived once per structural choice and
substituted point by point (the path plan took before it was vectorised); the exact grid
tabulation of ``sweep.compile`` against SymPy substituting one point at a time."""

from __future__ import annotations

import itertools
import random

import sympy
from hypothesis import given, settings, strategies as st

import symgpt
from symgpt.derive.options import Machine, Training
from symgpt.derive.steptime import Cluster
from symgpt.sweep.plan import Search, plan

PEAK, LINK, NODE = 312 * 10**12, 300 * 10**9, 25 * 10**9
RANK = {"none": 0, "selective": 1, "full": 2}


def _cluster(memory, peak=PEAK, link=LINK, node=NODE):
    return Cluster(Machine(peak=peak, device_memory=memory, link_bandwidth=link, node_bandwidth=node, node_size=8),
                   training=Training(precision="mixed-bf16"))


def _divisors(n):
    return [i for i in range(1, n + 1) if n % i == 0]


def _brute(m, devices, batch, limit, recompute, zero, sps, vps, sizes, max_cp):
    """Every strategy, written out with loops, priced exactly from the per-choice closed forms."""
    h, T, L = m.sizes["h"], m.sizes["T"], m.sizes["L"]
    degrees = {n: sympy.Symbol(f"d_{n}", integer=True, positive=True)
               for n in ("tp", "pp", "dp", "cp", "ep", "microbatches")}
    bound = {k: v for k, v in m.bindings.items() if k.name != "B"}
    B = sympy.Symbol("B", integer=True, positive=True)
    points = []
    for tp, pp, cp in itertools.product(_divisors(devices), repeat=3):
        if devices % (tp * pp * cp) or h % tp or cp > max_cp or T % cp:
            continue
        dp = devices // (tp * pp * cp)
        for b, vp in itertools.product(sizes, vps):
            if batch % (dp * b) or L % (pp * vp):
                continue
            mb = batch // (dp * b)
            if vp > 1 and (pp == 1 or mb % pp):
                continue
            points.append(dict(tp=tp, pp=pp, dp=dp, cp=cp, ep=1, microbatches=mb, B=b, vp=vp))
    rows, considered = [], 0
    for rc, z, s, vp in itertools.product(recompute, zero, sps, vps):
        o = dict(precision="mixed-bf16", optimizer="adamw", recompute=rc, zero=z, sp=s, vp=vp, **degrees)
        t = dict(peak=PEAK, efficiency=1, link_bandwidth=LINK, node_bandwidth=NODE, node_size=8)
        forms = [m.quantity("memory.total", **o, stage=st_).expr.xreplace(bound) for st_ in ("first", "last")]
        forms += [m.quantity("time.step", **o, **t, stage=st_).expr.xreplace(bound) for st_ in ("first", "last")]
        for p in points:
            if p["vp"] != vp or (s and p["tp"] == 1):
                continue
            considered += 1
            at = {degrees[n]: p[n] for n in degrees} | {B: p["B"]}
            mem1, mem2, t1, t2 = (f.xreplace(at) for f in forms)
            if max(mem1, mem2) <= limit:
                rows.append(dict(p, recompute=rc, zero=z, sp=s, memory=max(mem1, mem2), time=max(t1, t2)))
    rows.sort(key=lambda r: (r["time"], r["memory"], RANK[r["recompute"]], r["zero"], r["sp"], r["tp"], r["pp"],
                             r["vp"], r["dp"], r["cp"], r["ep"], r["B"]))
    return considered, rows


def test_the_ranking_is_a_brute_force_exact_sort():
    """Every fitting strategy of a small space, in order, equal to the brute-force exact sort;
    the memory limit set to one strategy's exact memory, so the float pre-screen has a point it
    cannot decide (exactly at the limit: it fits) and zero 1 and 2 tie on time (order by memory)."""
    m = symgpt.load("gpt2-small", T=1024)
    space = dict(recompute=("none", "full"), zero=(0, 1, 2, 3), sps=(False, True), vps=(1, 2), sizes=(1, 2),
                 max_cp=2)
    search = Search(recompute=space["recompute"], zero=space["zero"], sp=space["sps"], vps=space["vps"],
                    microbatch_sizes=space["sizes"], max_cp=2)
    probe = plan(m, 4, 8, _cluster(10**12), search, top=10**6)
    limit = sorted(r["memory"] for r in probe.rows)[len(probe.rows) // 2]  # a strategy sits exactly on it
    considered, want = _brute(m, 4, 8, limit, **space)
    got = plan(m, 4, 8, _cluster(limit), search, top=10**6)
    assert (got.considered, got.fitting) == (considered, len(want)) and len(want) > 20
    assert any(r["memory"] == limit for r in want)
    keys = ("tp", "pp", "dp", "cp", "ep", "microbatches", "vp", "recompute", "zero", "sp", "memory", "time")
    assert [{k: r[k] for k in keys} | {"B": r["microbatch"]} for r in got.rows] == \
        [{k: r[k] for k in keys} | {"B": r["B"]} for r in want]
    top3 = plan(m, 4, 8, _cluster(limit), search, top=3)
    assert top3.rows == got.rows[:3] and top3.fitting == got.fitting


def test_each_strategy_equals_its_own_derivation():
    """A spread of strategies of a mixture of experts (ep, cp, vp > 1, SP, ZeRO 0-3, every
    recompute policy): memory, step time, bytes sent and MFU equal the quantities derived for
    that one strategy with integer degrees."""
    m = symgpt.load("mixtral-8x7b", T=4096)
    peak, link, node = 989 * 10**12, 450 * 10**9, 50 * 10**9
    r = plan(m, 32, 64, _cluster(80 * 10**9, peak, link, node),
             Search(zero=(0, 1, 2, 3), vps=(1, 2), microbatch_sizes=(1, 2), max_cp=4), top=10**6, tokens=10**9)
    assert r.fitting == len(r.rows) > 100
    times = [(row["time"], row["memory"]) for row in r.rows]
    assert times == sorted(times)
    rng = random.Random(15)
    sample = []
    for rc, z, s, inter in itertools.product(("none", "selective", "full"), (0, 1, 2, 3), (False, True), (False, True)):
        group = [row for row in r.rows
                 if (row["recompute"], row["zero"], row["sp"], row["vp"] > 1) == (rc, z, s, inter)]
        sample += rng.sample(group, min(1, len(group)))
    sample += [row for row in r.rows if row["ep"] > 1][:2] + [row for row in r.rows if row["cp"] > 1][:2]
    assert {row["vp"] for row in sample} == {1, 2} and any(row["ep"] > 1 for row in sample)
    for row in rng.sample(sample, 14):
        one = m.with_(B=row["microbatch"])
        o = dict(precision="mixed-bf16", recompute=row["recompute"], zero=row["zero"], sp=row["sp"], tp=row["tp"],
                 pp=row["pp"], vp=row["vp"], dp=row["dp"], cp=row["cp"], ep=row["ep"], microbatches=row["microbatches"])
        t = dict(peak=peak, link_bandwidth=link, node_bandwidth=node)
        mem = [one.quantity("memory.total", **o, stage=s).value for s in ("first", "last")]
        step = [one.quantity("time.step", **o, **t, stage=s).value for s in ("first", "last")]
        slow = "first" if step[0] >= step[1] else "last"
        assert row["memory"] == max(mem) and row["time"] == max(step)
        assert row["comm_bytes"] == one.quantity("comm.total", **o).value
        assert row["mfu"] == one.quantity("time.mfu_cluster", **o, **t, stage=slow).value
        assert row["bubble"] == sympy.Rational(row["pp"] - 1, row["vp"] * row["microbatches"])
        assert row["train_seconds"] == row["time"] * 10**9 / (64 * 4096)


def test_parts_of_the_busier_stage():
    m = symgpt.load("gpt3-1.3b", T=2048)
    r = plan(m, 16, 64, _cluster(40 * 10**9), Search(zero=(0, 3), vps=(1, 2)), top=3, parts=True)
    for row in r.rows:
        o = dict(precision="mixed-bf16", recompute=row["recompute"], zero=row["zero"], sp=row["sp"], tp=row["tp"],
                 pp=row["pp"], vp=row["vp"], dp=row["dp"], cp=row["cp"], ep=row["ep"], microbatches=row["microbatches"])
        one = m.with_(B=row["microbatch"])
        stages = {s: one.quantity("memory.total", **o, stage=s).value for s in ("first", "last")}
        busy = "first" if stages["first"] >= stages["last"] else "last"
        for part in ("weights", "gradients", "optimizer", "activations"):
            assert row["parts"][part] == one.quantity(f"memory.{part}", **o, stage=busy).value
        assert sum(row["parts"].values()) == row["memory"]


# --- sweep.compile's exact tabulation of an atom over a whole grid --------------------------------
x, y = sympy.symbols("x y", integer=True, positive=True)
LEAF = st.one_of(st.sampled_from([x, y]), st.integers(-5, 9).map(sympy.Integer),
                 st.tuples(st.integers(1, 7), st.integers(1, 9)).map(lambda t: sympy.Rational(*t)))


def _grow(children):
    two = st.tuples(children, children)
    return st.one_of(two.map(lambda a: a[0] + a[1]), two.map(lambda a: a[0] * a[1]),
                     two.map(lambda a: sympy.Min(*a)), two.map(lambda a: sympy.Max(*a)),
                     children.map(lambda a: 1 / (a ** 2 + 1)), children.map(sympy.ceiling),
                     children.map(sympy.floor),
                     st.tuples(children, children, children).map(
                         lambda a: sympy.Piecewise((a[0], a[1] <= a[2]), (a[1], True))))


@settings(max_examples=60, deadline=None)
@given(st.recursive(LEAF, _grow, max_leaves=8))
def test_grid_tabulation_equals_sympy_point_by_point(e):
    import numpy as np

    from symgpt.sweep.gridexact import Unsupported, on_grid

    xs, ys = (1, 2, 3, 7, 8), (1, 4, 9)
    gx, gy = np.meshgrid(np.array(xs, dtype=object), np.array(ys, dtype=object), indexing="ij")
    try:
        got = np.broadcast_to(on_grid(e, {x: gx, y: gy}), gx.shape)
    except Unsupported:
        return  # evaluated point by point by SymPy instead
    for i, j in itertools.product(range(len(xs)), range(len(ys))):
        assert sympy.Rational(got[i, j]) == e.xreplace({x: xs[i], y: ys[j]})


def test_chunks_pruning_and_the_exact_fallback_change_nothing(monkeypatch):
    """Pricing in chunks of 7 strategies, pruning the candidates at every offer, and (where floats
    cannot say) evaluating every part exactly give the same answer as one pass."""
    import symgpt.sweep.plan as plan_module
    from symgpt.sweep.compile import Compiled

    m = symgpt.load("gpt3-1.3b", T=2048)
    args = (m, 16, 64, _cluster(30 * 10**9), Search(zero=(0, 1, 3), vps=(1, 2), microbatch_sizes=(1, 2, 4)))
    kw = dict(top=25)
    want = plan(*args, **kw)
    assert want.fitting < want.considered and len(want.rows) == 25
    monkeypatch.setattr(plan_module, "CHUNK", 7)
    monkeypatch.setattr(plan_module, "PRUNE", 0)
    got = plan(*args, **kw)
    assert (got.considered, got.fitting, got.rows) == (want.considered, want.fitting, want.rows)
    monkeypatch.setattr(Compiled, "estimate", lambda self, pts: None)
    got = plan(*args, **kw)
    assert (got.considered, got.fitting, got.rows) == (want.considered, want.fitting, want.rows)

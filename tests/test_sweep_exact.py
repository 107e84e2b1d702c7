"""Sweeps on random grids equal a plain, exact Python loop over the same points, values past 2⁶³
and past 2⁵³ included (the int64 path, the float pre-screen with its exact re-check, and the
exact object path all answer the same as the loop).

Oracle: lecture note 7.3's parameter count 12Ld² + 13Ld + Vd + T_max·d + 2d and the seeds' training
FLOPs 3·(24BTLd² + 4BT²Ld + 2BTVd) (GPT-2, tied, matmuls only), evaluated with Python ints one
point at a time, the constraint d mod h = 0 checked by hand, --where applied with exact integer
comparisons, and --top taken by sorting the whole list (ties in grid order).
"""

from __future__ import annotations

import operator

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import symgpt
from symgpt.sweep import Grid, sweep
from symgpt.sweep.compile import Compiled, sign
from symgpt.sweep.grid import Axis

V, T_MAX = 50257, 1024
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def seed_params(L, d):
    return 12 * L * d * d + 13 * L * d + V * d + T_MAX * d + 2 * d


def seed_train(B, T, L, d):
    return 3 * (24 * B * T * L * d * d + 4 * B * T * T * L * d + 2 * B * T * V * d)


def loop(Ls, ds, hs, B, T):
    """Every point in grid order (L slowest), the constraint checked by hand."""
    rows, skipped = [], 0
    for L in Ls:
        for d in ds:
            for h in hs:
                if d % h:
                    skipped += 1
                    continue
                rows.append([L, d, h, seed_params(L, d), seed_train(B, T, L, d)])
    return rows, skipped


# d spans the int64 path (small), values past 2**63 with sizes below 2**53 (the float
# pre-screen) and sizes past 2**53 (exact Python ints only)
D_STARTS = st.sampled_from([64, 768, 10**6, 3 * 10**7, 2**40, 2**53 - 96, 2**60])


@st.composite
def grids(draw):
    L0, Ln, Ls = draw(st.integers(1, 10**4)), draw(st.integers(1, 12)), draw(st.integers(1, 1000))
    d0, dn, ds = draw(D_STARTS), draw(st.integers(1, 12)), draw(st.sampled_from([1, 2, 64, 96, 1000]))
    hs = draw(st.lists(st.sampled_from([1, 2, 3, 4, 8, 12]), min_size=1, max_size=3, unique=True))
    B, T = draw(st.sampled_from([(1, 1), (8, 1024), (512, 1024)]))
    Lv = [L0 + i * Ls for i in range(Ln)]
    dv = [d0 + i * ds for i in range(dn)]
    return Lv, dv, hs, B, T


def specs(Lv, dv, hs):
    return [f"L={Lv[0]}:{Lv[-1]}:{Lv[1] - Lv[0] if len(Lv) > 1 else 1}",
            f"d={dv[0]}:{dv[-1]}:{dv[1] - dv[0] if len(dv) > 1 else 1}", "h=" + ",".join(map(str, hs))]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grids(), st.data())
def test_rows_where_and_top_equal_a_python_loop(g, data):
    Lv, dv, hs, B, T = g
    m = symgpt.load("gpt2", V=V, T_max=T_MAX, B=B, T=T)
    rows, skipped = loop(Lv, dv, hs, B, T)
    r = sweep(m, specs(Lv, dv, hs), columns=["params", "flops.train"])
    assert r.rows == rows
    assert sum(r.skipped.values()) == skipped
    if not rows:
        return
    # --where at a value some point has exactly (the boundary the float pre-screen must not guess)
    col = data.draw(st.sampled_from(["params", "flops.train"]))
    op = data.draw(st.sampled_from(sorted(OPS)))
    at = data.draw(st.sampled_from(rows))[3 if col == "params" else 4]
    keep = [row for row in rows if OPS[op](row[3 if col == "params" else 4], at)]
    r = sweep(m, specs(Lv, dv, hs), columns=["params", "flops.train"], where=[f"{col} {op} {at}"])
    assert r.rows == keep
    # --top K --by, largest or smallest, ties in grid order
    k = data.draw(st.integers(1, 5))
    smallest = data.draw(st.booleans())
    by = data.draw(st.sampled_from(["params", "flops.train", "d"]))
    i = {"params": 3, "flops.train": 4, "d": 1}[by]
    order = sorted(range(len(rows)), key=lambda j: (rows[j][i] if smallest else -rows[j][i], j))
    r = sweep(m, specs(Lv, dv, hs), columns=["params", "flops.train"], top=k, by=by, smallest=smallest)
    assert r.rows == [rows[j] for j in order[:k]]


def test_one_large_corner_leaves_the_other_chunks_in_int64():
    """Overflow is judged per chunk: with d up to 10⁷ only the chunks holding large d leave int64."""
    import sympy

    from symgpt.core.symbols import CANONICAL

    L, d = CANONICAL["L"], CANONICAL["d"]
    axes = [Axis("L", 1, 1, 4), Axis("d", 1, 1, 10**7)]
    c = Compiled(sympy.Integer(10**6) * L * d * d, axes, "test")
    chunks = list(Grid(axes).chunks(size=1 << 16))
    kinds = [c.fits(ch) for ch in chunks]
    assert not c.int64 and kinds[0] and not kinds[-1]
    for ch in (chunks[0], chunks[-1]):  # both exact: compare with Python ints
        got = c.evaluate(ch)
        Ls = np.broadcast_to(ch.values(0, exact=True), ch.shape).reshape(-1)
        ds = np.broadcast_to(ch.values(1, exact=True), ch.shape).reshape(-1)
        assert got.tolist() == [10**6 * int(a) * int(b) ** 2 for a, b in zip(Ls, ds)]


def test_sign_past_int64_is_exact_at_the_boundary():
    """d² - 3037000499² changes sign between two neighbours far past 2⁶³·…: the float estimate
    cannot decide there, the exact re-check does."""
    import sympy

    from symgpt.core.symbols import CANONICAL

    d, L = CANONICAL["d"], CANONICAL["L"]
    n0 = 3037000499 * 10**4
    axes = [Axis("L", 1, 1, 3), Axis("d", n0 - 5, 1, 11)]
    c = Compiled(L * d**2 - L * n0**2, axes, "test")
    ch = next(Grid(axes).chunks())
    got = np.broadcast_to(sign(c, ch), ch.shape).reshape(-1).tolist()
    want = [(x > 0) - (x < 0) for Lx in (1, 2, 3) for x in (Lx * (n0 - 5 + i) ** 2 - Lx * n0**2 for i in range(11))]
    assert got == want

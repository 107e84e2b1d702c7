"""DualPipe's run as arrays: the op graph of ``pipeline_zb.dualpipe_graph`` built with NumPy from the
ranks' orders of ops (``pipeline_zb._dualpipe_order``), its ops grouped by depth, and the step's
length evaluated on it -- in floats for many strategies at once, or exactly.

The graph depends on (p, m) only, never on the model: each op's duration is a count of the nine
times (T_F, T_B, T_W of the first stage, of every middle stage and of the last stage) and it starts
at the latest end among its waits (the device's previous op and the op whose output it takes), as in
``pipeline_zb.schedule``. The depth of an op (the most ops on a chain of waits ending at it) is found
by relaxing each device's chain at once: along a chain, depth_j = max(depth_{j-1}, ext_j) + 1, i.e.
j + the running maximum of (ext_k + 1 − k), with ext the depth of the op taken from another device;
repeated until nothing moves (integers: exact), at most once per op.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import lcm

import numpy as np

#: the op codes: (has a forward, its direction, has an input gradient, its direction, W, split)
_CODES = {("F", 0): 0, ("F", 1): 1, ("B", 0, True): 2, ("B", 1, True): 3, ("B", 0, False): 4,
          ("B", 1, False): 5, ("W",): 6, ("FB", 0, 1): 7, ("FB", 1, 0): 8}
#           F? dF  B? dB  W? full backward (B + W)
_TABLE = np.array([[1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [0, 0, 1, 1, 0, 0],
                   [0, 0, 1, 0, 0, 1], [0, 0, 1, 1, 0, 1], [0, 0, 0, 0, 1, 0], [1, 0, 1, 1, 0, 1],
                   [1, 1, 1, 0, 0, 1]], dtype=np.int64)


def _running(flag: np.ndarray, chain_of: np.ndarray) -> np.ndarray:
    """For each op, how many earlier ops of its chain (device and, where asked, direction) have *flag*."""
    o = np.argsort(chain_of, kind="stable")
    f = flag[o]
    before = np.cumsum(f) - f
    keys = chain_of[o]
    out = np.empty(len(flag), dtype=np.int64)
    out[o] = before - before[np.searchsorted(keys, keys, side="left")]
    return out


@lru_cache(maxsize=64)
def run_arrays(p: int, m: int):
    """DualPipe's run on *p* stages and *m* micro-batches as arrays, the ops renumbered by depth:
    (counts, waits, cuts): ``counts[i]`` op i's counts of the nine times; ``waits[i]`` the ops it
    starts after, padded with n (an op that ends at 0); ops ``cuts[d]:cuts[d + 1]`` are those of
    depth d (all their waits lie before ``cuts[d]``)."""
    from .pipeline_zb import _dualpipe_order, check

    check(p, m, "dualpipe")
    codes, rank = [], []
    for r in range(p):
        order = list(map(_CODES.__getitem__, _dualpipe_order(p, m, r)))
        codes += order
        rank += [r] * len(order)
    code, rank = np.asarray(codes, dtype=np.int64), np.asarray(rank, dtype=np.int64)
    n = len(code)
    hasf, df, hasb, db, isw, full = _TABLE[code].T
    stage = lambda d: np.where(d == 0, rank, p - 1 - rank)  # noqa: E731
    sf, sb = stage(df), stage(db)
    # micro-batch of each forward / input gradient: the earlier ones of its device and direction
    mf = _running(hasf, rank * 2 + df)
    mb = _running(hasb, rank * 2 + db)
    # a W takes the oldest input gradient B left on its device (first in, first out)
    split = hasb & (1 - full)
    # (each device runs as many W as split B, so the k-th W of all, device by device, takes the k-th B)
    bs, wi = np.flatnonzero(split), np.flatnonzero(isw)
    if not np.array_equal(np.bincount(rank[bs], minlength=p), np.bincount(rank[wi], minlength=p)):
        raise AssertionError("a device runs a W for no input gradient")
    wstage = np.zeros(n, dtype=np.int64)
    wstage[wi] = sb[bs]
    kind = np.array([0] + [3] * (p - 2) + [6], dtype=np.int64)
    counts = np.zeros((n, 9), dtype=np.int64)
    np.add.at(counts, (np.flatnonzero(hasf), kind[sf[hasf == 1]]), 1)
    hb = np.flatnonzero(hasb)
    np.add.at(counts, (hb, kind[sb[hb]] + 1), 1)
    fb = np.flatnonzero(full)
    np.add.at(counts, (fb, kind[sb[fb]] + 2), 1)
    np.add.at(counts, (wi, kind[wstage[wi]] + 2), 1)
    # who makes each (direction, micro-batch, stage) forward and input gradient
    half = m // 2
    made_f = np.full((2, half, p), -1, dtype=np.int64)
    made_b = np.full((2, half, p), -1, dtype=np.int64)
    fi = np.flatnonzero(hasf)
    made_f[df[fi], mf[fi], sf[fi]] = fi
    made_b[db[hb], mb[hb], sb[hb]] = hb
    if (made_f < 0).any() or (made_b < 0).any():
        raise AssertionError("an op of the run is missing")
    waits = np.full((n, 3), n, dtype=np.int64)
    ff = fi[sf[fi] > 0]
    waits[ff, 0] = made_f[df[ff], mf[ff], sf[ff] - 1]
    inner, last = hb[sb[hb] < p - 1], hb[sb[hb] == p - 1]
    waits[inner, 1] = made_b[db[inner], mb[inner], sb[inner] + 1]
    waits[last, 1] = made_f[db[last], mb[last], sb[last]]
    first = np.r_[True, rank[1:] != rank[:-1]]
    prev = np.where(first, n, np.arange(n) - 1)
    waits[:, 2] = prev
    depth = _depths(waits, first, n)
    order = np.argsort(depth, kind="stable")
    new = np.empty(n + 1, dtype=np.int64)
    new[order], new[n] = np.arange(n), n
    waits = np.sort(new[waits[order]], axis=1)
    cuts = np.r_[0, np.flatnonzero(np.diff(depth[order])) + 1, n]
    return counts[order], waits, cuts


def _depths(waits: np.ndarray, first: np.ndarray, n: int) -> np.ndarray:
    """The depth of each op (ops in device order, *first* marking each device's first op): every
    device's chain relaxed at once until nothing moves."""
    starts = np.flatnonzero(first)
    pos = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))   # position on its device
    depth = np.zeros(n + 1, dtype=np.int64)
    depth[n] = -1
    for _ in range(n + 1):
        ext = np.maximum(depth[waits[:, 0]], depth[waits[:, 1]]) + 1 - pos   # from other devices
        ext = np.maximum(ext, 0)
        # the running maximum restarts at each device's first op: offset each chain above the last
        lift = np.repeat(np.arange(len(starts)) * (2 * n + 2), np.diff(np.r_[starts, n]))
        new = np.maximum.accumulate(ext + lift) - lift + pos
        if np.array_equal(new, depth[:n]):
            return new
        depth[:n] = new
    raise AssertionError("the schedule deadlocked")


@lru_cache(maxsize=64)
def _ring(p: int, m: int):
    """Where each op's end is kept while it is still waited for: a ring of S slots, S the most ops in
    any G + 1 consecutive depths, G the largest difference in depth between an op and what it waits
    for (about 1.5·p): an op's slot is its number mod S, slot S the zero of an op with no wait.
    (slots of the waits, slots of the ops, S)."""
    counts, waits, cuts = run_arrays(p, m)
    n = len(counts)
    depth = np.repeat(np.arange(len(cuts) - 1), np.diff(cuts))
    real = waits < n
    gap = int((np.repeat(depth[:, None], 3, axis=1)[real] - depth[waits[real]]).max(initial=0))
    window = cuts[np.minimum(np.arange(1, len(cuts)), len(cuts) - 1)] - cuts[np.maximum(np.arange(len(cuts) - 1) - gap, 0)]
    size = int(window.max())
    return np.where(real, waits % size, size), np.arange(n) % size, size


def span_many(p: int, m: int, times) -> np.ndarray:
    """The step's length (first op to last) for many steps at once, in floats: *times* nine rows
    (T_F, T_B, T_W of the first stage, of every middle stage and of the last stage), one column per
    step; the ops of one depth evaluated together, each op's start the latest end among its waits
    and its end that start plus its duration, as ``pipeline_zb.dualpipe_span``. Only the ends still
    waited for are kept (``_ring``): the memory touched stays small whatever m."""
    counts, _, cuts = run_arrays(p, m)
    waits, slots, size = _ring(p, m)
    t = np.asarray(times, dtype=np.float64)
    ring = np.zeros((size + 1, t.shape[1]))
    out = np.zeros(t.shape[1])
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        ends = ring[waits[a:b]].max(axis=1) + counts[a:b] @ t
        ring[slots[a:b]] = ends
        np.maximum(out, ends.max(axis=0), out=out)
    return out


def span_batch(jobs) -> list:
    """``span_many`` for each (p, m, times) of *jobs*."""
    return [span_many(p, m, t) for p, m, t in jobs]


def span_exact(p: int, m: int, times) -> Fraction:
    """The step's length exactly on nine rational times: in integers over their common denominator."""
    times = [Fraction(t) for t in times]
    den = lcm(*(t.denominator for t in times))
    t = [int(x * den) for x in times]
    counts, waits, cuts = run_arrays(p, m)
    if min(t) >= 0 and sum(int(c) * x for c, x in zip(counts.sum(axis=0), t)) < 2 ** 62:
        # every sum along a path is at most the sum of all durations: 64-bit integers hold it exactly
        dur = counts @ np.asarray(t, dtype=np.int64)
        ends = np.zeros(len(dur) + 1, dtype=np.int64)
        for a, b in zip(cuts[:-1], cuts[1:]):
            np.add(ends[waits[a:b]].max(axis=1), dur[a:b], out=ends[a:b])
        return Fraction(int(ends[:-1].max()), den)
    dur = [sum(c * x for c, x in zip(row, t)) for row in counts.tolist()]
    ends = [0] * (len(dur) + 1)
    for i, (a, b, c) in enumerate(waits.tolist()):
        ends[i] = max(ends[a], ends[b], ends[c]) + dur[i]
    return Fraction(max(ends[:-1]), den)

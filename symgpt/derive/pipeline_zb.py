"""Pipeline schedules with the backward split in two, run: zero-bubble ZB-H1 and ZB-H2 (Qi et al.
2023, "Zero Bubble Pipeline Parallelism", arXiv 2309.16712, Sec. 2) and DualPipe (DeepSeek-V3
technical report, arXiv 2412.19437, Sec. 3.2.1; the order of its public implementation).

A backward is B, the input gradient (on the critical path: the previous stage waits for it), and
W, the weight gradient (needed only by the optimizer step, so it can wait). Durations are exact
Rationals per stage: ``forward`` (T_F), ``backward`` (T_B, the input gradient only) and
``weight`` (T_W). Every op starts as soon as its device is free and its input has arrived, as in
``derive.pipeline``; the run is the derivation and the papers' closed forms the oracle:

* ZB-H1: each stage warms up as 1F1B (p − r − 1 forwards on rank r), then F, B, W, with rank r
  running its W passes r micro-batches late; bubble (p − 1)(T_F + T_B − T_W), p micro-batches of
  activations (paper, Table 1) while T_W ≤ T_F and T_W ≤ T_B (its figures draw T_F = T_B = T_W).
* ZB-H2: 2(p − r) − 1 forwards before the first B on rank r and W passes 2r late (the
  parallelogram); bubble (p − 1)(T_F + T_B − 2T_W), 2p − 1 micro-batches of activations; it needs
  m ≥ 2p − 1 (the first stage's warm-up) and the paper's optimizer step without a synchronisation
  (post-validation): a device's bubble is its idle time between its own first and last op (T_W as
  in ZB-H1).
* DualPipe: p even, m even and m ≥ 2p (the implementation's checks); rank r holds stage r of the
  forward direction and stage p − 1 − r of the reverse one (two stages' parameters); m/2 micro-
  batches enter at each end. A forward of one direction overlapped with a full backward (B + W)
  of the other is one op of ``overlapped`` time (F&B; default T_F + T_B + T_W: computation does
  not overlap with computation). Table 2: bubble (p/2 − 1)(F&B + B − 3W) with B the *full*
  backward, i.e. (p/2 − 1)(F&B + T_B − 2T_W), p + 1 micro-batches of activations; it holds where
  the report's figure draws it, T_F = T_B and T_W ≤ T_B.

Activations are counted as the papers count them: a micro-batch from its forward to its input
gradient B on that device (the inputs W still needs are smaller; the papers leave them out).
"""

from __future__ import annotations

from functools import lru_cache

import sympy

from ..core.errors import SymgptError
from .pipeline import Slot

#: the schedules run here, with the papers they come from
SPLIT = ("zb-h1", "zb-h2", "dualpipe")
SOURCES = {"zb-h1": "Qi et al. 2023, Zero Bubble Pipeline Parallelism, Sec. 2.2 and Table 1",
           "zb-h2": "Qi et al. 2023, Zero Bubble Pipeline Parallelism, Sec. 2.2 and Table 1",
           "dualpipe": "DeepSeek-V3 technical report (arXiv 2412.19437), Sec. 3.2.1 and Table 2"}


def check(p: int, m: int, kind: str) -> None:
    """One clear line where *kind* cannot run *m* micro-batches on *p* stages."""
    if kind not in SPLIT:
        raise SymgptError(f"unknown schedule {kind!r}; choose one of {', '.join(SPLIT)}")
    if min(p, m) < 1:
        raise SymgptError("pipeline stages and micro-batches must be positive")
    if kind == "zb-h2" and m < 2 * p - 1:
        raise SymgptError(f"ZB-H2 runs 2p - 1 = {2 * p - 1} forwards before its first backward on the first "
                          f"stage: it needs at least that many micro-batches, got {m}")
    if kind == "dualpipe":
        if p % 2:
            raise SymgptError(f"DualPipe pairs stage r with stage p - 1 - r: it needs an even pp, got {p}")
        if m % 2 or m < 2 * p:
            raise SymgptError(f"DualPipe feeds m/2 micro-batches from each end and needs m even and at least "
                              f"2·pp = {2 * p}, got {m}")


def _zb_order(p: int, m: int, r: int, kind: str) -> list[tuple]:
    """Rank *r*'s ops in order: (F|B|W, direction, micro-batch index filled in by the run)."""
    warm, lag = (p - r - 1, r) if kind == "zb-h1" else (2 * (p - r) - 2, 2 * r)
    warm = min(warm, m)
    out = [("F", 0)] * warm
    f, b, w = warm, 0, 0
    while f < m or b < m:
        if f < m:
            out.append(("F", 0))
            f += 1
        out.append(("B", 0, True))
        b += 1
        if b - w > lag:
            out.append(("W",))
            w += 1
    return out + [("W",)] * (m - w)


def _dualpipe_order(p: int, m: int, r: int) -> list[tuple]:
    """Rank *r*'s ops in the order of DualPipe's eight steps. Phase 0 is the direction whose first
    stage is nearer (forward on the first half of the ranks, reverse on the second)."""
    half, hr, second = p // 2, min(r, p - 1 - r), int(r >= p // 2)
    middle = r in (half - 1, half)
    out: list[tuple] = []

    def d(phase):
        return phase ^ second

    out += [("F", d(0))] * ((half - hr - 1) * 2)                        # 1: nF0
    out += [("F", d(0)), ("F", d(1))] * (hr + 1)                         # 2: nF0F1
    out += [("B", d(1), True), ("W",), ("F", d(1))] * (half - hr - 1)    # 3: nB1W1F1
    steady, pair = m // 2 - p + hr + 1, [("FB", d(0), d(1)), ("FB", d(1), d(0))]
    if steady > 0:                                                       # 4: nF0B1F1B0
        out += ([("F", d(0)), ("B", d(1), False)] if middle else pair[:1]) + pair[1:] + pair * (steady - 1)
    out += [("B", d(1), False), ("FB", d(1), d(0))] * (half - hr - 1)   # 5: nB1F1B0
    zb, steps = False, hr + 1                                            # 6: nB1B0
    for i in range(steps):
        if i == steps // 2 and hr % 2 == 1:
            zb = True
        out.append(("B", d(1), zb))
        if i == steps // 2 and hr % 2 == 0:
            zb = True
        out.append(("B", d(0), zb))
    out += [("W",), ("B", d(0), True)] * (half - hr - 1)                # 7: nWB0
    return out + [("W",)] * (hr + 1)                                      # 8: nW


def schedule(p: int, m: int, kind: str = "zb-h1", forward=1, backward=1, weight=1, overlapped=None,
             stage_times=None) -> list[Slot]:
    """Every op of one step: kinds F, B (input gradient), W (weight gradient) and, in DualPipe,
    BW (a backward not split). ``chunk`` is the direction (DualPipe; 0 otherwise); the two halves
    of an overlapped F&B pair are an F and a BW slot sharing its time in proportion.
    *stage_times*, when given, is one (T_F, T_B, T_W) per stage (the stages need not be alike);
    an F&B pair then takes the forward's and the full backward's times in turn (no overlap)."""
    check(p, m, kind)
    tf, tb, tw = (sympy.Rational(x) for x in (forward, backward, weight))
    tfb = tf + tb + tw if overlapped is None else sympy.Rational(overlapped)
    if min(tf, tb, tw, tfb) < 0:
        raise SymgptError("the times of F, B, W and F&B must not be negative")
    per = None
    if stage_times is not None:
        per = [tuple(sympy.Rational(x) for x in t) for t in stage_times]
        if len(per) != p or any(len(t) != 3 or min(t) < 0 for t in per) or overlapped is not None:
            raise SymgptError("stage times: one non-negative (F, B, W) per stage, F&B their sum")
    orders = [_dualpipe_order(p, m, r) if kind == "dualpipe" else _zb_order(p, m, r, kind) for r in range(p)]
    stage = (lambda dr, r: r if dr == 0 else p - 1 - r)
    done: dict[tuple, sympy.Rational] = {}                   # (F|B, direction, micro-batch, stage) -> end
    fc, bc = [[0, 0] for _ in range(p)], [[0, 0] for _ in range(p)]
    queue: list[list] = [[] for _ in range(p)]               # the deferred W passes, first in first out
    free, nxt, slots = [sympy.Integer(0)] * p, [0] * p, []

    def fdep(dr, mb, r):
        s = stage(dr, r)
        return ("F", dr, mb, s - 1) if s > 0 else None

    def bdep(dr, mb, r):
        s = stage(dr, r)
        return ("B", dr, mb, s + 1) if s < p - 1 else ("F", dr, mb, s)

    while any(nxt[r] < len(orders[r]) for r in range(p)):
        progressed = False
        for r in range(p):
            if nxt[r] == len(orders[r]):
                continue
            op = orders[r][nxt[r]]
            if op[0] == "F":
                deps = [fdep(op[1], fc[r][op[1]], r)]
            elif op[0] == "B":
                deps = [bdep(op[1], bc[r][op[1]], r)]
            elif op[0] == "FB":
                deps = [fdep(op[1], fc[r][op[1]], r), bdep(op[2], bc[r][op[2]], r)]
            else:
                deps = []
            deps = [x for x in deps if x is not None]
            if any(x not in done for x in deps):
                continue
            start = max([free[r]] + [done[x] for x in deps])
            if per is not None:   # this op's stage's times
                tf, tb, tw = per[stage(op[1], r)] if op[0] in ("F", "B", "FB") else per[stage(queue[r][0][0], r)]
                if op[0] == "FB":
                    tf, tfb = per[stage(op[1], r)][0], per[stage(op[1], r)][0] + sum(per[stage(op[2], r)][1:])
            if op[0] == "F":
                dr, mb = op[1], fc[r][op[1]]
                end = start + tf
                done[("F", dr, mb, stage(dr, r))] = end
                fc[r][dr] += 1
                slots.append(Slot(r, "F", mb, dr, start, end))
            elif op[0] == "B":
                dr, mb, split = op[1], bc[r][op[1]], op[2]
                end = start + (tb if split else tb + tw)
                done[("B", dr, mb, stage(dr, r))] = end
                bc[r][dr] += 1
                if split:
                    queue[r].append((dr, mb))
                slots.append(Slot(r, "B" if split else "BW", mb, dr, start, end))
            elif op[0] == "W":
                dr, mb = queue[r].pop(0)
                end = start + tw
                slots.append(Slot(r, "W", mb, dr, start, end))
            else:
                (df, mf), (db, mbb) = (op[1], fc[r][op[1]]), (op[2], bc[r][op[2]])
                end = start + tfb
                mid = start + (tf if per is not None else tfb * tf / (tf + tb + tw) if tf + tb + tw else 0)
                done[("F", df, mf, stage(df, r))] = done[("B", db, mbb, stage(db, r))] = end
                fc[r][df] += 1
                bc[r][db] += 1
                slots += [Slot(r, "F", mf, df, start, mid), Slot(r, "BW", mbb, db, mid, end)]
            free[r] = end
            nxt[r] += 1
            progressed = True
        if not progressed:
            raise AssertionError("the schedule deadlocked")
    return slots


def bubble(slots: list[Slot], kind: str = "zb-h1") -> sympy.Rational:
    """The idle time of the least busy device over the step (from the first op to the last), as
    Table 1 and Table 2 count it; ZB-H2's is the largest idle time of a device between its own
    first and last op (the paper's optimizer step needs no synchronisation: post-validation)."""
    first, last = min(s.start for s in slots), max(s.end for s in slots)
    out = sympy.Integer(0)
    for r in range(max(s.device for s in slots) + 1):
        mine = [s for s in slots if s.device == r]
        span = (max(s.end for s in mine) - min(s.start for s in mine)) if kind == "zb-h2" else last - first
        out = max(out, span - sum((s.end - s.start for s in mine), sympy.Integer(0)))
    return out


def peak_in_flight(slots: list[Slot], device: int = 0) -> int:
    """The most micro-batches *device* holds activations for at once: from a forward to its input
    gradient (B or BW). Of an overlapped F&B pair, the forward's are held before the backward's
    are freed."""
    held = best = 0
    for s in sorted((s for s in slots if s.device == device), key=lambda s: (s.start, s.kind != "F")):
        held += 1 if s.kind == "F" else (-1 if s.kind in ("B", "BW") else 0)
        best = max(best, held)
    return best


T_F, T_B, T_W, T_FB = sympy.symbols("T_F T_B T_W T_FB", positive=True)


def paper_bubble(kind: str, p, forward=T_F, backward=T_B, weight=T_W, overlapped=None):
    """The bubble each paper states (1F1B and the split schedules): T_B the input gradient."""
    tf, tb, tw = forward, backward, weight
    if kind == "1f1b":
        return (p - 1) * (tf + tb + tw)
    if kind == "zb-h1":
        return (p - 1) * (tf + tb - tw)
    if kind == "zb-h2":
        return (p - 1) * (tf + tb - 2 * tw)
    if kind == "dualpipe":
        tfb = T_FB if overlapped is None else overlapped
        full = tb + tw                        # Table 2's B is the whole backward
        return (sympy.Rational(p, 2) - 1) * (tfb + full - 3 * tw)
    raise AssertionError(kind)


def paper_activations(kind: str, p) -> int:
    """Micro-batches of activations per device each paper states (Table 1; Table 2)."""
    return {"1f1b": p, "zb-h1": p, "zb-h2": 2 * p - 1, "dualpipe": p + 1}[kind]



def dualpipe_graph(p: int, m: int) -> tuple[tuple, ...]:
    """The run of DualPipe as a graph whatever the times: every op once, in an order where each comes
    after what it waits for, as (device, terms, waits): *terms* the (stage, 0 | 1 | 2) whose T_F, T_B
    or T_W make its duration (an F&B pair: the forward's and the full backward's, in turn), *waits*
    the ops it starts after (the device's previous op, and the op whose output it takes). Each op of
    ``schedule`` starts at the latest end among its waits, so the step's length is the longest path
    through this graph (``dualpipe_span``); the order of ops on a device does not depend on the times."""
    return _graph(p, m)


@lru_cache(maxsize=64)
def _graph(p: int, m: int) -> tuple[tuple, ...]:
    from collections import deque

    check(p, m, "dualpipe")
    stage = (lambda dr, r: r if dr == 0 else p - 1 - r)
    made: dict[tuple, int] = {}          # (F|B, direction, micro-batch, stage) -> the op that makes it
    ops: list = []                       # (device, terms, needs: the outputs it takes)
    for r in range(p):                   # each device's ops in its order, the inputs they take named
        fc, bc, queue = [0, 0], [0, 0], []
        for op in _dualpipe_order(p, m, r):
            i, kind, needs = len(ops), op[0], []
            if kind in ("F", "FB"):
                d, s = op[1], stage(op[1], r)
                made[("F", d, fc[d], s)] = i
                needs += [("F", d, fc[d], s - 1)] if s > 0 else []
                fc[d] += 1
            if kind in ("B", "FB"):
                d = op[1] if kind == "B" else op[2]
                s = stage(d, r)
                made[("B", d, bc[d], s)] = i
                needs.append(("B", d, bc[d], s + 1) if s < p - 1 else ("F", d, bc[d], s))
                bc[d] += 1
            if kind == "F":
                terms = ((stage(op[1], r), 0),)
            elif kind == "B":
                s = stage(op[1], r)
                terms = ((s, 1),) if op[2] else ((s, 1), (s, 2))
                if op[2]:
                    queue.append(s)
            elif kind == "W":
                terms = ((queue.pop(0), 2),)
            else:
                sf, sb = stage(op[1], r), stage(op[2], r)
                terms = ((sf, 0), (sb, 1), (sb, 2))
            ops.append((r, terms, needs, i - 1 if i and ops[i - 1][0] == r else None))
    waits = [sorted({made[x] for x in needs} | ({prev} if prev is not None else set()))
             for _, _, needs, prev in ops]
    # an order in which every op comes after what it waits for (Kahn's), the waits renumbered
    after: list = [[] for _ in ops]
    left = [len(w) for w in waits]
    for i, w in enumerate(waits):
        for j in w:
            after[j].append(i)
    ready, order = deque(i for i, k in enumerate(left) if k == 0), []
    while ready:
        i = ready.popleft()
        order.append(i)
        for j in after[i]:
            left[j] -= 1
            if not left[j]:
                ready.append(j)
    if len(order) != len(ops):
        raise AssertionError("the schedule deadlocked")
    new = {old: k for k, old in enumerate(order)}
    return tuple((ops[i][0], ops[i][1], tuple(sorted(new[j] for j in waits[i]))) for i in order)


def dualpipe_span(p: int, m: int, times):
    """The length of a DualPipe step (first op to last) on *times*: ``times[s][k]`` the T_F (k = 0),
    T_B (1) or T_W (2) of stage s, each a number or a NumPy array (many steps at once): the longest
    path through ``dualpipe_graph``. The sums and maxima are monotone in the times, so on lower
    (upper) bounds of the times it gives a lower (upper) bound of the span, up to the rounding of
    n sums along a path of n ops (floats: relative error at most n·2⁻⁵³ each)."""
    import numpy as np

    ends: list = []
    for r, terms, waits in dualpipe_graph(p, m):
        dur = sum((times[s][k] for s, k in terms[1:]), times[terms[0][0]][terms[0][1]])
        if waits:
            start = ends[waits[0]]
            for w in waits[1:]:
                start = np.maximum(start, ends[w])
            dur = start + dur
        ends.append(dur)
    out = ends[0]
    for e in ends[1:]:
        out = np.maximum(out, e)
    return out



def dualpipe_span_many(p: int, m: int, times):
    """``dualpipe_span`` for many steps at once, in floats: *times* an array of nine rows (T_F, T_B,
    T_W of the first stage, of every middle stage and of the last stage), one column per step (the
    fast path ``plan`` takes is ``dualpipe_run.span_many``, the same graph built with NumPy)."""
    import numpy as np

    t = np.asarray(times, dtype=np.float64)
    kinds = [list(t[0:3]), list(t[3:6]), list(t[6:9])]
    return dualpipe_span(p, m, [kinds[0]] + [kinds[1]] * (p - 2) + [kinds[2]])


def dualpipe_held(p: int, m: int, r: int) -> tuple[int, tuple[int, int], tuple[int, int]]:
    """Micro-batches rank *r* holds activations for, read from its order of ops alone (one device runs
    them one after another, so the order is the time order): (the most at once, how many of each
    direction then, the most of each direction at any time). A forward adds one of its direction (an
    F&B pair's forward before its backward), an input gradient B frees one."""
    held, best, at, tops = [0, 0], -1, (0, 0), [0, 0]
    for op in _dualpipe_order(p, m, r):
        steps = ([(op[1], 1)] if op[0] == "F" else [(op[1], -1)] if op[0] == "B"
                 else [(op[1], 1), (op[2], -1)] if op[0] == "FB" else [])
        for d, x in steps:
            held[d] += x
            tops[d] = max(tops[d], held[d])
            if sum(held) > best:
                best, at = sum(held), tuple(held)
    return best, at, tuple(tops)


def dualpipe_span_exact(p: int, m: int, times) -> "Fraction":
    """``dualpipe_span`` exactly on nine rational times (T_F, T_B, T_W of the first stage, of every
    middle stage and of the last stage): in integers over their common denominator."""
    from fractions import Fraction
    from math import lcm

    times = [Fraction(t) for t in times]
    den = lcm(*(t.denominator for t in times))
    t = [int(x * den) for x in times]
    kind = [0] + [3] * (p - 2) + [6]
    ends: list = []
    for r, terms, waits in dualpipe_graph(p, m):
        start = max([ends[w] for w in waits]) if waits else 0
        ends.append(start + sum(t[kind[s] + k] for s, k in terms))
    return Fraction(max(ends), den)

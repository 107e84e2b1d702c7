"""Pipeline schedules, run: GPipe, 1F1B (PipeDream-Flush) and Megatron-LM's interleaved 1F1B.

:func:`schedule` lays out every forward and backward of every micro-batch on every device in
the order the schedule prescribes, each starting as soon as its device is free and its input
has arrived (the previous stage's forward, the next stage's backward). Durations are exact
Rationals (a forward of a whole device's layers takes ``forward``, its backward ``backward``;
a chunk of the interleaved schedule 1/vp of that). The bubble is the idle time of a device:
:func:`bubble_fraction` derives it from the run, and the papers' (p − 1)/m and (p − 1)/(v·m)
(Huang et al. 2019; Narayanan et al. 2021 Sec. 2.2) are checked against it (``symgpt check``,
tests). The same run draws the schedule figure.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError


@dataclass(frozen=True)
class Slot:
    device: int
    kind: str        # "F" or "B" (W, the weight gradient, and BW, both: derive.pipeline_zb)
    microbatch: int
    chunk: int       # the virtual stage's chunk on its device (0 unless interleaved)
    start: sympy.Rational
    end: sympy.Rational


def _order(p: int, m: int, v: int, r: int, kind: str) -> list[tuple[str, int, int]]:
    """Device *r*'s ops in the order the schedule runs them: (F|B, micro-batch, chunk)."""
    if kind == "gpipe":
        return [("F", i, 0) for i in range(m)] + [("B", i, 0) for i in range(m)]
    total = m * v

    def op(k, backward):
        chunk = (k // p) % v
        return ("B" if backward else "F", (k // (p * v)) * p + k % p, v - 1 - chunk if backward else chunk)

    if v == 1:
        warm = min(p - r - 1, m)
    else:
        warm = min((p - r - 1) * 2 + (v - 1) * p, total)
    out = [op(k, False) for k in range(warm)]
    f, b = warm, 0
    while f < total:
        out.append(op(f, False))
        f += 1
        out.append(op(b, True))
        b += 1
    out += [op(k, True) for k in range(b, total)]
    return out


def schedule(p: int, m: int, v: int = 1, kind: str = "1f1b", forward=1, backward=2) -> list[Slot]:
    """Every op of one step on *p* devices, *m* micro-batches, *v* chunks per device."""
    if kind not in ("1f1b", "gpipe"):
        raise SymgptError(f"unknown schedule {kind!r}; choose 1f1b or gpipe")
    if min(p, m, v) < 1 or (v > 1 and (kind != "1f1b" or m % p)):
        raise SymgptError("the interleaved schedule needs a 1F1B schedule and m a multiple of p")
    tf, tb = sympy.Rational(forward) / v, sympy.Rational(backward) / v
    stages = p * v
    orders = [_order(p, m, v, r, kind) for r in range(p)]
    done: dict[tuple[str, int, int], sympy.Rational] = {}   # (kind, microbatch, virtual stage) -> end
    free = [sympy.Integer(0)] * p
    nxt = [0] * p
    slots: list[Slot] = []
    while any(nxt[r] < len(orders[r]) for r in range(p)):
        progressed = False
        for r in range(p):
            if nxt[r] == len(orders[r]):
                continue
            k, mb, chunk = orders[r][nxt[r]]
            stage = chunk * p + r
            if k == "F":
                dep = ("F", mb, stage - 1) if stage > 0 else None
            else:
                dep = ("B", mb, stage + 1) if stage < stages - 1 else ("F", mb, stage)
            if dep is not None and dep not in done:
                continue
            start = max(free[r], done[dep]) if dep is not None else free[r]
            end = start + (tf if k == "F" else tb)
            done[(k, mb, stage)] = end
            free[r] = end
            slots.append(Slot(r, k, mb, chunk, start, end))
            nxt[r] += 1
            progressed = True
        if not progressed:
            raise AssertionError("the schedule deadlocked")
    return slots


def bubble_fraction(p: int, m: int, v: int = 1, kind: str = "1f1b", forward=1, backward=2) -> sympy.Rational:
    """Idle time of a device over its busy time, from the run of the schedule."""
    slots = schedule(p, m, v, kind, forward, backward)
    makespan = max(s.end for s in slots)
    busy = m * (sympy.Rational(forward) + sympy.Rational(backward))
    return (makespan - busy) / busy


def peak_in_flight(p: int, m: int, v: int = 1, kind: str = "1f1b", device: int = 0, chunk: int | None = None) -> int:
    """The most chunk micro-batches *device* holds activations for at once (forward done,
    backward not yet), from the run of the schedule (of one *chunk* only, if given)."""
    held = best = 0
    mine = [s for s in schedule(p, m, v, kind) if s.device == device and (chunk is None or s.chunk == chunk)]
    for s in sorted(mine, key=lambda s: s.start):
        held += 1 if s.kind == "F" else -1
        best = max(best, held)
    return best

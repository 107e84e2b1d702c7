"""Which strategies each pipeline schedule runs in ``plan``, and DualPipe's step there: its run's
length (``derive.dualpipe_run``) at the strategies that could be among the fastest, a floor (the busiest
device's own work) everywhere else, and the exact length of the rows shown."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..core.errors import SymgptError
from .plan_price import add, dualpipe_spans, interval, mul


def zeros(zero: tuple, kind: str) -> tuple:
    """The ZeRO stages *kind* is searched at: DualPipe's communication is not priced under ZeRO-3
    (``derive.comm``), so not there."""
    return tuple(z for z in zero if z != 3) if kind == "dualpipe" else zero


def eligible(cols, schedules, kind) -> np.ndarray:
    """The strategies *kind* runs: interleaving only under 1F1B; a one-stage pipeline only under the
    first schedule listed (they are all the same there); ZB-H2 with m >= 2·pp − 1 micro-batches."""
    pp, vp, m = cols["pp"], cols["vp"], cols["microbatches"]
    ok = np.ones(len(pp), dtype=bool) if kind == "1f1b" else vp == 1
    if kind != schedules[0]:
        ok &= pp > 1
    if kind == "zb-h2":
        ok &= m >= 2 * pp - 1
    if kind == "dualpipe":  # DualPipe's own checks (derive.pipeline_zb.check): even pp > 1, m even, m >= 2·pp
        ok &= (pp > 1) & (pp % 2 == 0) & (m % 2 == 0) & (m >= 2 * pp)
    return ok


def _dualpipe_span(forms, cols, chunk, whole, schedules, memo, wanted, policy):
    """The interval of DualPipe's step length (compute and bubble) at the strategies of *chunk* it
    runs (NaN where not run yet): the longest path through its run on the stages' T_F, T_B, T_W
    (``plan_price.dualpipe_span``), run for each (pp, m) among the positions *wanted* (indices into
    *chunk*) not run before, at every strategy of the chunk with that (pp, m) and every recompute
    policy of *recomputes* at once (*memo* keeps them: the same for every SP and ZeRO choice);
    *policy* is (recompute, recomputes)."""
    recompute, recomputes = policy
    policies = tuple(recomputes or (recompute,))
    if "pairs" not in memo:
        memo["pairs"] = set()
        for rc in policies:
            memo["span", rc] = (np.full(len(chunk), np.nan), np.full(len(chunk), np.nan))
    pp, mb = cols["pp"][chunk], cols["microbatches"][chunk]
    todo = sorted({(int(pp[i]), int(mb[i])) for i in wanted} - memo["pairs"])
    if todo:
        runs = np.flatnonzero(eligible({n: c[chunk] for n, c in cols.items()}, schedules, "dualpipe"))
        times = {rc: {(kind, k): interval(forms.compiled[forms.time_key(kind, rc, k)], whole)
                      for kind in ("first", "middle", "last") for k in range(3)} for rc in policies}
        jobs = []
        for p, m in todo:
            idx = runs[(pp[runs] == p) & (mb[runs] == m)]
            keys = times[policies[0]].keys()
            jobs.append((p, m, idx, {k: (np.concatenate([times[rc][k][0][idx] for rc in policies]),
                                         np.concatenate([times[rc][k][1][idx] for rc in policies])) for k in keys}))
        for (p, m, idx, _), (v, e) in zip(jobs, dualpipe_spans([(p, m, t) for p, m, _, t in jobs])):
            for j, rc in enumerate(policies):
                cut = slice(j * len(idx), (j + 1) * len(idx))
                memo["span", rc][0][idx], memo["span", rc][1][idx] = v[cut], e[cut]
        memo["pairs"].update(todo)
    return memo["span", recompute]


def _dualpipe_floor(forms, cols, chunk, whole, recompute, memo):
    """A lower bound of DualPipe's step length at every strategy of *chunk*: the busiest device's own
    work, (m/2)·(T_F + T_B + T_W summed over its two stages): the first and the last at the end
    ranks, two middle ones elsewhere (pp > 2); in floats at most the exact value (*memo* keeps it)."""
    if ("floor", recompute) not in memo:
        total = {}
        for kind in ("first", "middle", "last"):
            t = (np.zeros(len(chunk)), np.zeros(len(chunk)))
            for k in range(3):
                t = add(t, interval(forms.compiled[forms.time_key(kind, recompute, k)], whole))
            total[kind] = t
        half = ((cols["microbatches"][chunk] // 2).astype(np.float64), np.zeros(len(chunk)))
        ends = mul(add(total["first"], total["last"]), half)
        middle = mul(add(total["middle"], total["middle"]), half)
        lo = np.where(cols["pp"][chunk] > 2, np.maximum(ends[0] - ends[1], middle[0] - middle[1]), ends[0] - ends[1])
        memo["floor", recompute] = np.maximum(lo, 0) * (1 - 2 ** -50)
    return memo["floor", recompute]


def _dualpipe_exact(p: int, m: int, times: dict) -> Fraction:
    """DualPipe's exact step length (compute and bubble) on the stages' exact times, its run's
    micro-batches in flight checked against the activations the plan priced (Table 2's pp + 1)."""
    from ..derive.dualpipe_run import span_exact
    from ..derive.pipeline_zb import dualpipe_held

    for r, embedding in ((0, 0), (p - 1, 1)):  # the direction whose stage 0 (the embedding) the rank holds
        best, at, tops = dualpipe_held(p, m, r)
        if best != p + 1 or at != tops or at[embedding] != p:
            raise SymgptError(f"dualpipe on pp={p}, {m} micro-batches: rank {r} holds {best} micro-batches at its "
                              "peak, not the pp + 1 the plan priced")
    return span_exact(p, m, [times[kind, k] for kind in ("first", "middle", "last") for k in range(3)])

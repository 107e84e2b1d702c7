"""DualPipe's run built with NumPy (``derive/dualpipe_run.py``, the fast path ``plan`` takes) against the
run itself: ``pipeline_zb.schedule`` places every op at the latest end among what it waits for, one op
after another (the oracle), and ``pipeline_zb.dualpipe_graph`` is the graph built op by op in Python.
The order of ops on each device is the public implementation's (DeepSeek-V3 report, arXiv 2412.19437,
Sec. 3.2.1)."""

import random
from fractions import Fraction

import numpy as np
import pytest
import sympy

from symgpt.derive import dualpipe_run
from symgpt.derive.pipeline_zb import dualpipe_span, schedule

GRID = [(p, m) for p in (2, 4, 6, 8, 10) for m in sorted({2 * p, 2 * p + 2, 3 * p + p % 2, 4 * p + 6})]


def _per_stage(p, kinds):
    return [kinds[0]] + [kinds[1]] * (p - 2) + [kinds[2]]


@pytest.mark.parametrize("p,m", GRID)
def test_fast_run_is_the_run(p, m):
    """On a grid of (pp, m): the step's length from the arrays (exact, in 64-bit integers and in Python
    integers; floats for many steps, and for many runs joined) equals the run's last end and the longest
    path through the graph built op by op; each device's own work is (m/2)·(its two stages' F + B + W),
    the floor ``plan`` prunes with."""
    rng = random.Random(p * 1000 + m)
    cols = []
    for trial in range(4):
        kinds = [[rng.randint(0, 9) for _ in range(3)] for _ in range(3)]
        per = _per_stage(p, kinds)
        slots = schedule(p, m, "dualpipe", stage_times=per)
        run = max(s.end for s in slots)
        nine = [x for k in kinds for x in k]
        assert dualpipe_run.span_exact(p, m, nine) == run == dualpipe_span(p, m, per)
        # denominators too large for 64-bit integers: the Python-integer path
        big = Fraction(1, 2 ** 70 + 1)
        assert dualpipe_run.span_exact(p, m, [x * big for x in nine]) == run * big
        busy = {}
        for s in slots:
            busy[s.device] = busy.get(s.device, 0) + s.end - s.start
        for r in range(p):
            assert busy[r] == Fraction(m, 2) * (sum(per[r]) + sum(per[p - 1 - r]))
        cols.append((nine, run))
    times = np.array([c[0] for c in cols], dtype=np.float64).T          # small integers: exact floats
    assert list(dualpipe_run.span_many(p, m, times)) == [float(c[1]) for c in cols]
    other = np.array([[1.0] * 9, [2.0, 1, 1, 3, 1, 2, 1, 1, 1]]).T
    joined = dualpipe_run.span_batch([(p, m, times), (p, m + 2, other), (p, m, times[:, :1])])
    assert list(joined[0]) == [float(c[1]) for c in cols] and joined[2][0] == float(cols[0][1])
    assert list(joined[1]) == list(dualpipe_run.span_many(p, m + 2, other))


def test_rational_times_against_the_run():
    """Rational stage times (the plan's exact rows): the arrays' exact length is the run's."""
    rng = random.Random(11)
    for p, m in ((4, 8), (6, 14), (8, 20)):
        kinds = [[Fraction(rng.randint(1, 50), rng.randint(1, 9)) for _ in range(3)] for _ in range(3)]
        per = [tuple(sympy.Rational(x.numerator, x.denominator) for x in t) for t in _per_stage(p, kinds)]
        run = max(s.end for s in schedule(p, m, "dualpipe", stage_times=per))
        assert dualpipe_run.span_exact(p, m, [x for k in kinds for x in k]) == run


def test_plan_pruned_equals_plan_run_everywhere(monkeypatch):
    """plan runs DualPipe only where a strategy fits and its floor (the busiest device's own work plus its
    communication) could be among the fastest; its top rows equal those of the plan that runs DualPipe
    at every strategy (the floor forced to 0) and the first rows of the plan that keeps every row."""
    import symgpt
    from symgpt.derive.options import Machine, Training
    from symgpt.derive.steptime import Cluster
    from symgpt.sweep import plan as plan_module
    from symgpt.sweep import plan_schedules

    m = symgpt.load("gpt2-small", T=1024)
    cluster = Cluster(Machine(peak=312 * 10**12, device_memory=80 * 10**9, link_bandwidth=300 * 10**9,
                              node_bandwidth=25 * 10**9, node_size=4), training=Training(precision="mixed-bf16"))
    search = plan_module.Search(zero=(0, 1), vps=(1,), microbatch_sizes=(1, 2), recompute=("none", "full"),
                                schedules=("1f1b", "dualpipe"))
    ran = []
    spans = plan_schedules.dualpipe_spans

    def spy(jobs):
        ran.extend((p, m) for p, m, _ in jobs)
        return spans(jobs)

    monkeypatch.setattr(plan_schedules, "dualpipe_spans", spy)
    pruned = plan_module.plan(m, 8, 64, cluster, search, top=3)
    pruned_runs = len(ran)
    every = plan_module.plan(m, 8, 64, cluster, search, top=10**6)
    assert pruned.rows == every.rows[:3]
    assert any(x["schedule"] == "dualpipe" for x in every.rows)
    ran.clear()
    floor = plan_module._dualpipe_floor
    monkeypatch.setattr(plan_module, "_dualpipe_floor", lambda *a: floor(*a) * 0)
    unpruned = plan_module.plan(m, 8, 64, cluster, search, top=3)
    assert unpruned.rows == pruned.rows and pruned.fitting == unpruned.fitting == every.fitting
    assert pruned_runs < len(ran)                                      # the floor did prune

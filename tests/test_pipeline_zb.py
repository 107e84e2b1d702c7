"""Zero-bubble ZB-H1, ZB-H2 and DualPipe: the run of each schedule against the papers' Table 1
(Qi et al. 2023) and Table 2 (DeepSeek-V3 report), in integers over a grid of stage times and
in symbols (the run's bubble is linear in the times inside each paper's regime: four points fix
it, and it must be the paper's form)."""

import itertools

import pytest
import sympy

from symgpt.core.errors import SymgptError
from symgpt.derive import pipeline
from symgpt.derive.pipeline_zb import (SPLIT, T_B, T_F, T_FB, T_W, bubble, check, paper_activations,
                                       paper_bubble, peak_in_flight, schedule)

SIZES = {"zb-h1": [(2, 2), (2, 4), (3, 5), (4, 4), (4, 8), (5, 9), (8, 16), (6, 7)],
         "zb-h2": [(2, 3), (3, 5), (4, 7), (4, 8), (5, 9), (8, 16), (6, 20)],
         "dualpipe": [(2, 4), (4, 8), (4, 10), (6, 12), (8, 16), (8, 20)]}


def in_regime(kind, tf, tb, tw):
    """Where each paper's figure (and so its closed form) applies."""
    if kind == "dualpipe":
        return tf == tb and tw <= tb
    return tw <= tf and tw <= tb


def test_1f1b_reference_formula_is_the_run():
    # the paper's 1F1B row against the existing run, B + W together as one backward
    for p, m in [(2, 3), (4, 8), (5, 5)]:
        for tf, tb, tw in [(1, 1, 1), (2, 3, 1), (3, 1, 2)]:
            slots = pipeline.schedule(p, m, 1, "1f1b", tf, tb + tw)
            assert bubble(slots, "1f1b") == paper_bubble("1f1b", p, tf, tb, tw)


@pytest.mark.parametrize("kind", ["zb-h1", "zb-h2"])
def test_zero_bubble_table_1_integers(kind):
    for p, m in SIZES[kind]:
        for tf, tb, tw in itertools.product(range(1, 5), repeat=3):
            if in_regime(kind, tf, tb, tw):
                slots = schedule(p, m, kind, tf, tb, tw)
                assert bubble(slots, kind) == paper_bubble(kind, p, tf, tb, tw), (p, m, tf, tb, tw)


def test_dualpipe_table_2_integers():
    for p, m in SIZES["dualpipe"]:
        for tf, tb, tw in itertools.product(range(1, 5), repeat=3):
            if not in_regime("dualpipe", tf, tb, tw):
                continue
            for tfb in range(max(tf, tb + tw), tf + tb + tw + 1):   # from full overlap to none
                slots = schedule(p, m, "dualpipe", tf, tb, tw, tfb)
                assert bubble(slots, "dualpipe") == paper_bubble("dualpipe", p, tf, tb, tw, tfb), (p, m, tf, tb, tw, tfb)


@pytest.mark.parametrize("kind", SPLIT)
def test_symbolic_form_from_the_run(kind):
    # fit a + b·T_F + c·T_B + d·T_W (+ e·T_FB) to runs at independent points, check it at more
    pts = ([(4, 4, 1, 7), (4, 4, 2, 9), (5, 5, 1, 9), (4, 4, 1, 8), (6, 6, 3, 14), (7, 7, 2, 15)]
           if kind == "dualpipe" else [(3, 3, 1, None), (4, 3, 1, None), (3, 4, 1, None), (4, 4, 2, None),
                                       (5, 3, 2, None), (6, 7, 3, None)])
    for p, m in SIZES[kind][1:4]:
        # DualPipe's regime ties T_F to T_B: its form is fitted in T_B, T_W, T_FB
        syms = [T_B, T_W, T_FB] if kind == "dualpipe" else [T_F, T_B, T_W]
        coef = sympy.symbols("c0:4")
        form = coef[0] + sum(c * s for c, s in zip(coef[1:], syms))
        eqs = []
        for tf, tb, tw, tfb in pts:
            got = bubble(schedule(p, m, kind, tf, tb, tw, tfb), kind)
            vals = dict(zip(syms, (tb, tw, tfb) if kind == "dualpipe" else (tf, tb, tw)))
            eqs.append(sympy.Eq(form.subs(vals), got))
        sol = sympy.solve(eqs, coef, dict=True)
        assert len(sol) == 1
        derived = form.subs(sol[0])
        assert sympy.expand(derived - paper_bubble(kind, p).subs(T_F, T_B if kind == "dualpipe" else T_F)) == 0


def test_zb_h1_two_weight_passes_better_than_1f1b():
    # the reduction the paper names: 1F1B − ZB-H1 = 2(p − 1)·T_W
    assert sympy.expand(paper_bubble("1f1b", 4) - paper_bubble("zb-h1", 4)) == 6 * T_W


@pytest.mark.parametrize("kind", SPLIT)
def test_activations_table(kind):
    for p, m in SIZES[kind]:
        slots = schedule(p, m, kind)
        peaks = [peak_in_flight(slots, r) for r in range(p)]
        want = paper_activations(kind, p) if kind != "zb-h1" else min(p, m)
        assert max(peaks) == want == peaks[0], (p, m, peaks)


def test_each_op_once_and_in_order():
    for kind in SPLIT:
        p, m = SIZES[kind][2]
        slots = schedule(p, m, kind, 2, 3, 1)
        dirs = 2 if kind == "dualpipe" else 1
        per = m // dirs
        for r in range(p):
            mine = [s for s in slots if s.device == r]
            f = [(s.chunk, s.microbatch) for s in mine if s.kind == "F"]
            b = [(s.chunk, s.microbatch) for s in mine if s.kind in ("B", "BW")]
            w = [(s.chunk, s.microbatch) for s in mine if s.kind in ("W", "BW")]
            want = sorted((d, i) for d in range(dirs) for i in range(per))
            assert sorted(f) == sorted(b) == sorted(w) == want
            for a, c in zip(sorted(mine, key=lambda s: s.start), sorted(mine, key=lambda s: s.start)[1:]):
                assert a.end <= c.start            # a device runs one op at a time


@pytest.mark.parametrize("p,m,kind,needle", [(4, 6, "zb-h2", "at least"), (3, 6, "dualpipe", "even pp"),
                                             (4, 6, "dualpipe", "at least"), (4, 9, "dualpipe", "m even")])
def test_bad_sizes_refused(p, m, kind, needle):
    with pytest.raises(SymgptError, match=needle):
        check(p, m, kind)


def _cli(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "symgpt", *args], capture_output=True, text=True)


@pytest.mark.parametrize("kind,times,want", [("zb-h1", "2,2,1", 3 * 3), ("zb-h2", "3,2,1", 3 * 3),
                                             ("dualpipe", "2,2,1,4", 1 * 4)])
def test_schedule_command_text(kind, times, want):
    # the paper's forms at these times, worked by hand: 3(2 + 2 - 1); 3(3 + 2 - 2); (4/2 - 1)(4 + 3 - 3)
    r = _cli("schedule", "--pp", "4", "--microbatches", "8", "--schedule", kind, "--times", times)
    assert r.returncode == 0, r.stderr
    first, second, third = r.stdout.splitlines()
    assert f"bubble {want} time units" in first and second.endswith("]") and ": equal [" in second
    assert third.endswith("equal")


def test_schedule_drawings_show_w_slots():
    from symgpt.render.cluster_fig import schedule_svg, schedule_tikz

    slots = schedule(4, 8, "zb-h1")
    svg, tikz = schedule_svg(slots, "t"), schedule_tikz(slots, "t")
    assert svg.count('fill="#8c8c8c"') == 4 * 8                    # one grey W per micro-batch and stage
    assert tikz.count(r"\slot{black!45}") == 4 * 8
    assert "W (weight gradient) grey" in svg
    old = schedule_svg(pipeline.schedule(4, 8), "t")                # the 1F1B drawing keeps its legend
    assert "backward in red; white: the bubble" in old and "#8c8c8c" not in old


@pytest.mark.parametrize("args,needle", [
    (["--schedule", "zb-h2", "--microbatches", "6"], "at least that many micro-batches"),
    (["--schedule", "dualpipe", "--pp", "3"], "even pp"),
    (["--schedule", "zb-h1", "--vp", "2"], "--vp interleaves 1F1B"),
    (["--schedule", "zb-h1", "--times", "1,x,1"], "--times expects"),
    (["--schedule", "zb-h1", "--times", "1,1,1,2"], "only for dualpipe")])
def test_schedule_command_errors(args, needle):
    base = {"--pp": "4", "--microbatches": "8"}
    for i in range(0, len(args), 2):
        base[args[i]] = args[i + 1]
    r = _cli("schedule", *[x for kv in base.items() for x in kv])
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr

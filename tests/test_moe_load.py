"""MoE load imbalance: the busiest expert-parallel rank under an imbalance X and a capacity factor C
-- its expert FLOPs, saved activations, all-to-all bytes and the token copies it drops -- against
hand counts from the Switch Transformer's capacity formula (Fedus et al. 2021, Sec. 2.2:
capacity = tokens per batch / experts × capacity factor; k copies of each token under top-k)."""

import subprocess
import sys

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError

R = sympy.Rational
LAYOUT = dict(precision="mixed-bf16", dp=8, ep=8)
Bv, Tv, Lv, E, k, ep = 1, 4096, 32, 8, 2, 8


@pytest.fixture(scope="module")
def m():
    return symgpt.load("mixtral-8x7b", B=Bv, T=Tv)


def _experts(q):
    """The parts of *q* that the experts' ops own."""
    return sum(q.part(p).value for p, _ in q.breakdown if "/experts/" in p)


def test_dropped_tokens_by_the_switch_formula(m):
    X, C = R(2), R(5, 4)
    # the expert-parallel group routes N = ep·B·T tokens, k copies each; each expert's capacity is
    # C·k·N/E, the busiest rank's E/ep experts take (E/ep)·C·k·N/E; it receives X·k·B·T
    N = ep * Bv * Tv
    capacity_rank = (E // ep) * C * k * N / E
    received = X * k * Bv * Tv
    per_layer = received - capacity_rank
    q = m.quantity("moe.dropped", **LAYOUT, imbalance=X, capacity_factor=C, microbatches=2)
    assert q.value == per_layer * Lv * 2
    assert m.quantity("moe.dropped", **LAYOUT, imbalance=X).value == 0                 # no capacity
    assert m.quantity("moe.dropped", **LAYOUT, imbalance=1, capacity_factor=C).value == 0  # room to spare


def test_busiest_rank_activations_and_flops_scale_by_min_x_c(m):
    X, C = R(3, 2), R(5, 4)
    bal = m.quantity("memory.activations", **LAYOUT)
    imb = m.quantity("memory.activations", **LAYOUT, imbalance=X, capacity_factor=C)
    assert _experts(bal) > 0 and _experts(imb) == C * _experts(bal)                   # capped at capacity: min(3/2, 5/4)
    assert imb.value - _experts(imb) == bal.value - _experts(bal)  # attention, router, norms: unchanged
    t = dict(LAYOUT, peak=10**15, link_bandwidth=10**11, node_bandwidth=10**10)
    cb = m.quantity("time.compute", **t)
    ci = m.quantity("time.compute", **t, imbalance=X)
    assert _experts(cb) > 0 and _experts(ci) == X * _experts(cb) and ci.value - _experts(ci) == cb.value - _experts(cb)


def test_all_to_all_dispatch_balanced_combine_loaded(m):
    X = R(3, 2)
    bal = m.quantity("comm.ep", **LAYOUT).value
    assert bal > 0
    # four passes: dispatch forward and its backward at the balanced share, combine and its
    # backward at X times it
    assert m.quantity("comm.ep", **LAYOUT, imbalance=X).value == bal * (2 + 2 * X) / 4


def test_balanced_default_unchanged_and_named(m):
    q = m.quantity("memory.activations", **LAYOUT)
    assert q.expr == m.quantity("memory.activations", **LAYOUT, imbalance=1).expr
    assert any("balanced (the default)" in n for n in q.notes)
    assert not any("MoE" in n for n in symgpt.load("gpt2-small").quantity("memory.total").notes)


def test_checks(m):
    with pytest.raises(SymgptError, match="exceeds ep"):
        m.quantity("memory.activations", **LAYOUT, imbalance=9)
    with pytest.raises(SymgptError, match="at least 1"):
        m.quantity("memory.activations", **LAYOUT, imbalance=R(1, 2))
    with pytest.raises(SymgptError, match="no experts"):
        symgpt.load("gpt2-small").quantity("memory.activations", capacity_factor=1)


def test_cli():
    r = subprocess.run([sys.executable, "-m", "symgpt", "memory", "mixtral-8x7b", "--set", "B=1", "--set", "T=4096",
                        "--dp", "8", "--ep", "8", "--imbalance", "2", "--capacity-factor", "1.25"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"= {R(3, 4) * k * Tv * Lv} token copies per step" in r.stdout
    r = subprocess.run([sys.executable, "-m", "symgpt", "memory", "gpt2-small", "--capacity-factor", "1"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no experts" in r.stderr

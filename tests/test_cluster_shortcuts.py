"""The report's shortcuts against the direct computations they replace (the oracles).

* ``Quantity.value`` adds its entries' values where each is a rational number; the direct form
  evaluates the expanded total (``evaluate(q.expr, q.bindings)``).
* ``memory.total`` sums the parts the model derives (``model.quantity``, once per options); the
  direct form calls ``memory_states`` / ``memory_activations`` on a fresh model.
* ``cluster.summary`` adds the step's and the collectives' entries value by value and takes the
  parameter count's terms once; the direct form evaluates ``grouped(1)`` and ``by_collective``'s
  sums. The LaTeX bars read ``summary``'s numbers; the direct form reads the priced quantities.
* ``dominance`` makes each part's share limit on first use; the direct form orders and limits
  every entry as it is made (``order``, ``share_limit``).

Each must give exactly the same thing: the same numbers and, where printed, the same expression.
"""

from __future__ import annotations

import pytest
import sympy

import symgpt
from symgpt.derive.memory import activations, gradients, optimizer, weights
from symgpt.documents.cluster import HARDWARE, MEMORY, _machine, by_collective, figures, per_param, summary
from symgpt.documents.latex_cluster import _HEIGHT, _bars
from symgpt.documents.workload import report_model
from symgpt.core.hardware import hardware
from symgpt.derive.quantity import Quantity, evaluate
from symgpt.query import dominance, share_limit
from symgpt.query.regime import order, regime_of

PRESETS = ("gpt2-small", "llama-7b", "mixtral-8x7b")
OPTIONS = ({}, {"precision": "mixed-bf16", "optimizer": "adamw", "zero": 3, "dp": 8},
           {"precision": "bf16", "optimizer": "sgd", "tp": 4, "sp": True, "dp": 2},
           {"precision": "mixed-bf16", "optimizer": "adamw", "pp": 4, "microbatches": 8, "stage": "last"},
           {"recompute": "full", "dp": 8})


MACHINE = _machine(hardware(HARDWARE))


def fresh(q: Quantity) -> Quantity:
    """The same quantity with nothing computed yet (its total not expanded)."""
    return Quantity(q.name, q.breakdown, q.bindings, q.unit, q.convention, q.notes)


def forms(name):
    m = symgpt.load(name)
    return {"bound": report_model(m), "loaded": m, "free": m.free(*m.sizes)}


def quantities(m):
    out = [m.params, m.quantity("flops.forward"), m.quantity("flops.train", per="batch")]
    for o in OPTIONS:
        out += [m.quantity(f"memory.{p}", **o) for p in (*MEMORY, "total")]
        if o.get("dp", 1) * o.get("tp", 1) * o.get("pp", 1) > 1:
            out += [m.quantity("comm.total", **o), m.quantity("time.step", **o, **MACHINE)]
    return out


@pytest.mark.parametrize("name", PRESETS)
def test_value_equals_the_expanded_totals(name):
    seen = 0
    for m in forms(name).values():
        for q in quantities(m):
            got = fresh(q).value
            assert sympy.srepr(got) == sympy.srepr(evaluate(q.expr, q.bindings)), (name, q.name)
            assert q.value == got  # with the total expanded already: the same number
            seen += got is not None
    assert seen > 20


def test_value_where_only_the_sum_is_bound():
    """Entries that are not numbers while their sum is: the expanded total is evaluated."""
    x, y = sympy.symbols("x y", positive=True, integer=True)
    q = Quantity("q", (("a", x * y + 3), ("b", -x * y + 4)), {x: sympy.Integer(2)})
    assert q.value == 7
    assert Quantity("q", (("a", x),), {}).value is None
    assert Quantity("q", (("a", sympy.Integer(3)), ("b", x)), {x: sympy.Integer(5)}).value == 8


@pytest.mark.parametrize("name", PRESETS)
def test_memory_total_is_its_parts_derived_directly(name):
    models, direct = forms(name), forms(name)  # the second: fresh models, nothing derived yet
    for kind, m in models.items():
        for o in OPTIONS:
            d = direct[kind]
            parts = [("weights", weights(d, **o).expr), ("gradients", gradients(d, **o).expr)]
            parts += list(optimizer(d, **o).breakdown)
            parts.append(("activations", activations(d, **o).expr))
            got = m.quantity("memory.total", **o)
            assert [p for p, _ in got.breakdown] == [p for p, _ in parts], (name, kind, o)
            assert [sympy.srepr(e) for _, e in got.breakdown] == [sympy.srepr(e) for _, e in parts], (name, kind, o)


@pytest.mark.parametrize("name", PRESETS)
def test_summary_equals_the_direct_sums(name):
    m = report_model(symgpt.load(name))
    f = figures(m)
    rows = summary(f)
    assert len(rows) == len(f.rows) >= 6
    for r, p in zip(rows, f.rows):
        step = {k: m.value(e) for k, e in p.step.grouped(1)}
        assert r["time"] == {k: step.get(k, sympy.Integer(0)) for k in ("compute", "comm", "bubble")}
        comm = {k: m.value(e) for k, e in by_collective(p.comm).items()}
        assert list(r["comm"].items()) == list(comm.items())   # the same order: COLLECTIVES'
        assert r["per_param"] == per_param(m, p)
        assert r["memory"] == {k: evaluate(p.memory[k].expr, p.memory[k].bindings) for k in MEMORY}
        assert r["memory_total"] == evaluate(p.total.expr, p.total.bindings)
        assert r["step"] == evaluate(p.step.expr, p.step.bindings)


def test_bars_read_the_priced_quantities():
    m = report_model(symgpt.load("gpt2-small"))
    f = figures(m)
    bars, top = _bars(summary(f))
    totals = [evaluate(r.total.expr, r.total.bindings) for r in f.rows]
    assert str(top) == str(_bars(summary(f))[1]) and len(bars) == len(f.rows)
    for bar, r in zip(bars, f.rows):
        y = sympy.Integer(0)
        for seg, part in zip(bar["segments"], MEMORY):
            y0 = y
            y += evaluate(r.memory[part].expr, r.memory[part].bindings) * _HEIGHT / max(totals)
            assert (seg["y0"], seg["y1"]) == (f"{float(y0):.3f}", f"{float(y):.3f}")
        assert bar["top"] == f"{float(y):.3f}" and bar["label"] == r.strategy.short


@pytest.mark.parametrize("name,regime,depth", [("gpt2-small", "d", None), ("gpt2-small", "T", 2),
                                                ("llama-7b", "d,V", None), ("mixtral-8x7b", "T", None)])
def test_dominance_parts_equal_the_eager_ones(name, regime, depth):
    m = symgpt.load(name)
    for q in (m.params, m.quantity("memory.activations", precision="bf16")):
        dm = dominance(q, regime, depth)
        reg = regime_of(regime)
        entries = q.grouped(depth) if depth else list(q.breakdown)
        total = q.value
        for (path, e), part in zip(entries, dm.parts, strict=True):
            v = evaluate(e, q.bindings)
            assert (part.path, part.expr, part.order, part.value) == (path, e, order(e, reg)[0], v)
            assert part.limit == share_limit(e, q.expr, reg)
            assert part.share == (v / total if (v is not None and total) else None)
        for prefix in {p.split("/")[0] for p, _ in entries}:
            want = sympy.simplify(sympy.Add(*[p.limit for p in dm.parts if p.path == prefix
                                               or p.path.startswith(prefix + "/")]))
            assert dominance(q, regime, depth).share(prefix) == want  # before .parts is made

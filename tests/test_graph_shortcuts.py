"""The diagram's shortcuts against the direct computation they replace (the oracle).

``dotparts.at_bindings`` skips ``sympy.cancel`` where the value is a number or an expanded
polynomial, ``dotparts.share_of`` reads a share of two expanded polynomials off their
coefficients, and a node's per-copy value and share are made once per measure and path, its
share only where it is shown or coloured by. Each must give exactly what the direct form gives:
the same expression, structurally (``srepr``), and the same DOT text, byte for byte.
"""

import pytest
import sympy

import symgpt
from symgpt.documents.workload import report_model
from symgpt.render import dotparts
from symgpt.documents.diagrams import dot_text

PRESETS = ("gpt2-small", "llama-7b", "mixtral-8x7b", "deepseek-v2-lite", "t5-small", "bert-base")


def direct_at(e, b):
    """What every value and share of a node was before the shortcuts: cancel, bind, expand."""
    return sympy.expand(sympy.cancel(e).xreplace(b))


def direct_share(part, total):
    if total == 0:
        return None
    r = sympy.cancel(part / total)
    return r if r.is_number else None


def forms(name):
    """The model bound (as a report draws it: B and T too), as loaded, and with every size free."""
    m = symgpt.load(name)
    lengths = {"T_enc": 128, "T_dec": 32} if m.family.name == "t5" else {}  # a report needs both
    return {"bound": report_model(m.with_(**lengths)), "loaded": m, "free": m.free(*m.sizes)}


def measures(m):
    out = [("params", m.params, "multiplicity"), ("flops", m.quantity("flops.forward", per="batch"), "activity")]
    if "memory.activations" in symgpt.model.model.quantity_names():
        out.append(("memory", m.quantity("memory.activations"), "activity"))
    return out


@pytest.mark.parametrize("name", PRESETS)
def test_values_and_shares_equal_the_cancelled_forms(name):
    checked = 0
    for kind, m in forms(name).items():
        arch, b = m.arch, m.bindings
        for key, q, per in measures(m):
            count = (lambda g: g.repeat) if per == "multiplicity" else (lambda g: g.active)
            total = sympy.expand(q.expr.xreplace(b))
            for path, e in q.breakdown:
                exprs = [e]
                if path in arch.graph:
                    chain = arch.group_chain(arch.graph.nodes[path]["group"])
                    exprs.append(e / sympy.Mul(*[count(g) for g in chain]))
                    if chain:
                        exprs.append(e / count(chain[-1]))
                for x in exprs:
                    got, want = dotparts.at_bindings(x, b), direct_at(x, b)
                    assert sympy.srepr(got) == sympy.srepr(want), (name, kind, key, path, x)
                    share, oracle = dotparts.share_of(got, total), direct_share(want, total)
                    assert sympy.srepr(share) == sympy.srepr(oracle), (name, kind, key, path)
                    checked += 1
            for g in arch.groups:  # a cluster's part: the entries under its group
                part = direct_at(sympy.Add(*[e for p, e in q.breakdown if p == g or p.startswith(g + "/")]), b)
                assert sympy.srepr(dotparts.at_bindings(part, b)) == sympy.srepr(part)
                assert sympy.srepr(dotparts.share_of(part, total)) == sympy.srepr(direct_share(part, total))
    assert checked > 50


def test_share_of_reads_numbers_and_refuses_what_is_not_one():
    x, y = sympy.symbols("x y", positive=True, integer=True)
    total = sympy.expand(3 * x**2 * y + 6 * x)
    assert dotparts.share_of(sympy.expand(x**2 * y + 2 * x), total) == sympy.Rational(1, 3)
    assert dotparts.share_of(sympy.expand(x**2 * y + x), total) is None      # not proportional
    assert dotparts.share_of(x**2 * y, total) is None                        # fewer terms
    assert dotparts.share_of(sympy.Integer(3), sympy.Integer(12)) == sympy.Rational(1, 4)
    assert dotparts.share_of(x, sympy.Integer(0)) is None


@pytest.mark.parametrize("name", PRESETS)
def test_dot_text_equals_the_direct_drawing(name, monkeypatch):
    drawn = {}
    cases = [(kind, m, colour, unroll) for kind, m in forms(name).items()
             for colour in ("params", "flops", "memory", "none") for unroll in (False, True)
             if not (unroll and kind != "bound")]
    for case in cases:
        kind, m, colour, unroll = case
        try:
            drawn[case[0], colour, unroll] = dot_text(m, color_by=colour, unroll=unroll)
        except symgpt.SymgptError as e:  # an unroll past the cap: the same refusal either way
            drawn[case[0], colour, unroll] = str(e)
    monkeypatch.setattr(dotparts, "at_bindings", direct_at)
    monkeypatch.setattr(dotparts, "share_of", direct_share)
    for kind, m, colour, unroll in cases:
        try:
            want = dot_text(m, color_by=colour, unroll=unroll)
        except symgpt.SymgptError as e:
            want = str(e)
        assert drawn[kind, colour, unroll] == want, (name, kind, colour, unroll)

"""Anyone's formula against the derivation: equal, or off by an exact expression; and the
safe parser refusing attack strings (nothing is run)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy

import symgpt
from attacks import code_guard  # tests/attacks.py (the hostile-input harness)
from symgpt.core.errors import SymgptError
from symgpt.query import check_formula, compare, holds
from symgpt.core.symbols import L, T_max, V, d

PWNED = Path("/tmp/pwned_symgpt_query")


def test_one_line_assertion():
    """The README's one-liner: a textbook formula asserted against the derivation."""
    assert holds("gpt2", "params", "12*L*d^2 + 13*L*d + V*d + T_max*d + 2*d")
    assert holds(symgpt.load("gpt2-small"), "params", "124439808")
    assert holds("gpt2", "flops.forward", "24*B*T*d^2 + 4*B*T^2*d", part="blocks",
                 per_block=True)
    assert holds("gpt2", "params", 12 * L * d**2 + 13 * L * d + V * d + T_max * d + 2 * d)


def test_a_failing_assertion_says_by_how_much():
    c = holds("gpt2-small", "params", "12*L*d^2 + V*d + 2*d")
    assert not c
    assert c.difference == -13 * L * d - T_max * d
    assert c.difference_value == -(13 * 12 * 768 + 1024 * 768) == -906_240
    assert c.relative_error == sympy.Rational(-906_240, 124_439_808)
    assert c.within(0.01) and not c.within(0.001) and c.within(sympy.Rational(1, 100))
    with pytest.raises(SymgptError):
        c.within("__import__('os')")
    assert "formula - derived = -13*L*d - T_max*d" in repr(c) and "gpt2-small" in repr(c)


def test_numeric_formula_compares_the_value():
    untied = symgpt.load("gpt2-small", tied=False)
    c = check_formula(untied, "params", "163_009_536")
    assert not c.equal          # 163,037,184 with the Q/K/V biases (conventions.md §10)
    assert c.difference == 163_009_536 - 163_037_184
    assert check_formula(untied.with_(qkv_bias=False), "params", "163009536")


def test_equal_at_configuration_only():
    c = compare(symgpt.load("gpt2-small").params,
                "12*L*d^2 + 13*L*d + 50257*d + T_max*d + 2*d")
    assert not c.equal and c.equal_at_configuration is True


def test_names_for_formulas():
    N = sympy.Integer(12) * L * d**2
    assert holds("gpt2", "flops.forward", "2*N + 2*L*T*d", names={"N": N},
                 convention="kaplan")
    with pytest.raises(SymgptError, match="canonical"):
        holds("gpt2", "params", "d", names={"d": N})


def test_foreign_symbols_refused():
    with pytest.raises(SymgptError, match="not symgpt's"):
        holds("gpt2", "params", sympy.Symbol("d") * 2)


ATTACKS = [
    "__import__('os').system('touch /tmp/pwned_symgpt_query')",
    "exec(\"open('/tmp/pwned_symgpt_query','w')\")",
    "eval('1')",
    "d.__class__",
    "lambda: 0",
    "[x for x in ()]",
    "open('/tmp/pwned_symgpt_query', 'w')",
    "d; import os",
    "Symbol('x')",
    "d**d**d**d**d",
    "9" * 3000,
    "(" * 200 + "d" + ")" * 200,
    "2^1000000",
]


@pytest.mark.parametrize("text", ATTACKS)
def test_attack_strings_refused_and_not_run(text):
    PWNED.unlink(missing_ok=True)
    with code_guard(), pytest.raises(SymgptError) as e:   # eval/sympify/os.system on text fail
        holds("gpt2", "params", text)
    assert "\n" not in str(e.value) and len(str(e.value)) < 400
    assert not PWNED.exists()


def test_nothing_reaches_sympify(monkeypatch):
    """compare never hands text to sympify/parse_expr: make both explode and compare anyway."""
    def boom(*a, **k):
        raise AssertionError("sympify called")

    monkeypatch.setattr(sympy, "sympify", boom)
    monkeypatch.setattr(sympy.parsing.sympy_parser, "parse_expr", boom)
    assert holds("gpt2", "params", "12*L*d^2 + 13*L*d + V*d + T_max*d + 2*d")
    with pytest.raises(SymgptError):
        holds("gpt2", "params", "__import__('os')")


def test_symgpt_query_attribute_form():
    """The issue's spelling: symgpt.query.holds(model, ...) after a plain ``import symgpt``."""
    m = symgpt.load("gpt2")
    assert symgpt.query.holds(m, "params", "12*L*d^2 + 13*L*d + V*d + T_max*d + 2*d")

"""Tests of symgpt.core.exprparse: the safe text -> SymPy parser."""

from __future__ import annotations

import os
import time

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symgpt.core.errors import SymgptError
from symgpt.core.exprparse import parse_assignment, parse_condition, parse_expression, parse_value
from symgpt.core.symbols import CANONICAL, B, E, L, T, T_max, V, W, d, d_ff, d_head, h, h_kv, k

PWNED = "/tmp/pwned_symgpt"


def same(parsed: sympy.Expr, expected: sympy.Expr) -> bool:
    """Equal as SymPy expressions, and built from exact numbers only."""
    return not parsed.atoms(sympy.Float) and sympy.expand(parsed - expected) == 0


# --------------------------------------------------------------------------- valid input

CASES = [
    ("12*L*d^2 + 13*L*d", 12 * L * d**2 + 13 * L * d),
    ("24*T*d**2 + 4*T^2*d", 24 * T * d**2 + 4 * T**2 * d),
    ("(V + T_max)*d", (V + T_max) * d),
    ("d/h", d / h),
    ("d / h * h", d),
    ("1.5e3", sympy.Integer(1500)),
    ("1e-3", sympy.Rational(1, 1000)),
    ("1.5", sympy.Rational(3, 2)),
    ("6e9", sympy.Integer(6_000_000_000)),
    ("6E9", sympy.Integer(6_000_000_000)),
    ("1.2e-3", sympy.Rational(3, 2500)),
    ("50_257 * d", 50257 * d),
    ("−d²", -(d**2)),
    ("2·L×d", 2 * L * d),
    ("d³ + h²", d**3 + h**2),
    ("(d + h)²", (d + h) ** 2),
    ("d²^3", d**6),
    ("-d^2", -(d**2)),
    ("-d**2", -(d**2)),
    ("(-d)^2", d**2),
    ("2^3^2", sympy.Integer(512)),
    ("2^-3^2", sympy.Rational(1, 512)),
    ("2**-1", sympy.Rational(1, 2)),
    ("d^(2*3)", d**6),
    ("d^(-1)", 1 / d),
    ("d^(h-h)", sympy.Integer(1)),
    ("d^64", d**64),
    ("d^-64", d**-64),
    ("--d", d),
    ("+-+d", -d),
    ("2*-3", sympy.Integer(-6)),
    ("1 - 2 - 3", sympy.Integer(-4)),
    ("12/4/3", sympy.Integer(1)),
    ("2/3*d", sympy.Rational(2, 3) * d),
    ("1/3", sympy.Rational(1, 3)),
    ("\td\t+ h ", d + h),
    ("B*T*(2*d + d_ff) + E*k*W + h_kv*d_head", B * T * (2 * d + d_ff) + E * k * W + h_kv * d_head),
    ("0^0", sympy.Integer(1)),
    ("((((d))))", d),
    ("(" * 50 + "d" + ")" * 50, d),
]


@pytest.mark.parametrize("text, expected", CASES, ids=[c[0] for c in CASES])
def test_parses_to_the_expected_expression(text, expected):
    assert same(parse_expression(text), expected)


def test_decimals_and_scientific_numbers_are_exact_not_float():
    for text in ("1.5", "1e-3", "1.2e-3", "6e9", "0.1 * d", "3.14159"):
        assert not parse_expression(text).atoms(sympy.Float)
    assert parse_expression("0.1") == sympy.Rational(1, 10)
    assert isinstance(parse_expression("1.5e3"), sympy.Integer)


def test_big_integers_are_exact_and_fast():
    width = "1234567890123456789012345678901234567890"
    start = time.perf_counter()
    assert parse_expression(f"12*L*{width}^2") == 12 * L * sympy.Integer(int(width)) ** 2
    huge = "9" * 1990
    assert parse_expression(huge) == sympy.Integer(int(huge))
    assert parse_expression("(10^64)^64") == sympy.Integer(10) ** 4096
    assert time.perf_counter() - start < 2


def test_long_chains_do_not_recurse():
    assert parse_expression("-" * 1999 + "d") == -d
    assert parse_expression("+".join(["d"] * 1000)) == 1000 * d
    assert parse_expression("1^" * 999 + "1") == 1


def test_custom_names_with_dots_and_case_sensitivity():
    names = {"memory.total": 2 * L * d, "flops.train": 6 * B * T, "x": sympy.Integer(3), "n": 7}
    assert parse_expression("memory.total + flops.train", names) == 2 * L * d + 6 * B * T
    assert parse_expression("x^2 + n", names) == 16
    with pytest.raises(SymgptError, match="unknown name 'd'"):
        parse_expression("d", names)
    with pytest.raises(SymgptError, match="unknown name 'l'.*did you mean 'L'"):
        parse_expression("l*d")


# --------------------------------------------------------------------------- errors

ERRORS = [
    ("V d", "expected an operator between 'V' and 'd' at position 3"),
    ("12 L", "expected an operator between '12' and 'L' at position 4"),
    ("12L", "expected an operator between '12' and 'L' at position 3"),
    ("2 (d)", "expected an operator between '2' and '(' at position 3"),
    ("(d)(h)", "expected an operator between ')' and '(' at position 4"),
    ("", "empty expression"),
    ("   \t ", "empty expression"),
    ("foo + 1", "unknown name 'foo' in expression 'foo + 1'; known names: B, T, T_max, d,"),
    ("d +", "unexpected end of input"),
    ("d + * h", "unexpected '*' at position 5"),
    ("d)", "unexpected ')' at position 2"),
    ("(d", "missing ')' for the '(' at position 1"),
    ("()", "unexpected ')' at position 2"),
    ("d^L", "exponent of the power at position 2 must be an integer between -64 and 64"),
    ("d^65", "must be an integer between -64 and 64"),
    ("d^(1/2)", "must be an integer"),
    ("d^1.5", "must be an integer"),
    ("d/0", "division by zero at position 2"),
    ("d/(h - h)", "division by zero"),
    ("0^-1", "division by zero"),
    ("d²³", "unexpected '³' at position 3"),
    (".5", "unexpected character '.' at position 1"),
    ("1.", "unexpected character '.' at position 2"),
    ("1__000", "unexpected character '_' at position 2"),
    ("d = 3", "unexpected character '=' at position 3"),
    ("d < 3", "unexpected character '<' at position 3"),
    ("[d]", "unexpected character '[' at position 1"),
    ("d, h", "unexpected character ',' at position 2"),
    ("d α", "unexpected character 'α' at position 3"),
    ("1e1001", "outside -1000..1000"),
    ("(((2*d)^64)^64)^2", "too large"),
    ("(((10^64)^64)^64)", "too large"),
    ("((d^64)^64)^2", "too large"),
    # 9^4096 has 12,984 bits (4096·log2 9); two of them are over 2^14 bits at the first '*'
    ("*".join(["(9^64)^64"] * 200), "the product at position 10 is too large"),
    ("*".join(["1e1000"] * 285), "too large"),
    ("(" * 51 + "d" + ")" * 51, "parentheses nest deeper than 50 at position 51"),
    ("d" * 2001, "too long (2001 characters; at most 2000)"),
]


@pytest.mark.parametrize("text, message", ERRORS, ids=[e[0][:20] for e in ERRORS])
def test_errors_are_clear_one_line_symgpt_errors(text, message):
    with pytest.raises(SymgptError) as info:
        parse_expression(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value) and "\r" not in str(info.value)


def test_non_text_is_rejected():
    with pytest.raises(SymgptError, match="must be text"):
        parse_expression(12)  # type: ignore[arg-type]


def test_unknown_name_lists_at_most_20_names():
    names = {f"q{i}": sympy.Integer(i) for i in range(30)}
    with pytest.raises(SymgptError) as info:
        parse_expression("zz", names)
    message = str(info.value)
    assert "q19" in message and "q20," not in message and "(10 more)" in message


def test_messages_quote_control_characters_safely():
    with pytest.raises(SymgptError) as info:
        parse_expression("d\x1b[31m\r\nrm")
    assert "\\x1b" in str(info.value) and "\x1b" not in str(info.value)
    assert "\n" not in str(info.value) and "\r" not in str(info.value)


# --------------------------------------------------------------------------- attacks

ATTACKS = [
    f"__import__('os').system('touch {PWNED}')",
    f"__import__(\"os\").system(\"touch {PWNED}\")",
    f"exec('open(\"{PWNED}\", \"w\")')",
    f"eval('__import__(\"os\").system(\"touch {PWNED}\")')",
    "lambda: 1",
    "lambda",
    "().__class__.__bases__[0].__subclasses__()",
    "d.__class__",
    "d.__class__.__mro__",
    "__import__",
    "open('/etc/passwd')",
    "9**9**9**9",
    "2^2^2^2^99",
    "2^2^2^2^2",
    "10^64^64",
    "d^L",
    "(" * 1000,
    "(" * 1000 + "d" + ")" * 1000,
    "-" * 1998 + "d;",
    "d^" * 999 + "2",
    "x" * 10_000,
    "1" * 10_000,
    f"1;import os;os.system('touch {PWNED}')",
    "`touch /tmp/pwned_symgpt`",
    "$(touch /tmp/pwned_symgpt)",
    "d\nimport os",
    "d\n",
    "d\r\n+h",
    "d\x00",
    "{d}",
    "d if 1 else h",
    "d @ h",
    "d % h",
    "d // h",
    "~d",
    "d & h | h",
    "d << 2",
    "'d'",
    "S('d')",
    "sympify('d')",
]


@pytest.fixture
def no_pwned_file():
    if os.path.exists(PWNED):
        os.remove(PWNED)
    yield
    assert not os.path.exists(PWNED)


@pytest.mark.parametrize("text", ATTACKS, ids=[a[:25] for a in ATTACKS])
def test_attacks_raise_symgpt_error_and_run_nothing(text, no_pwned_file):
    start = time.perf_counter()
    for parse in (parse_expression, lambda t: parse_condition(t + " < 1", CANONICAL)):
        with pytest.raises(SymgptError) as info:
            parse(text)
        assert "\n" not in str(info.value)
    with pytest.raises(SymgptError):
        parse_assignment("d=" + text)
    assert time.perf_counter() - start < 2


def test_no_attack_left_a_file_behind():
    assert not os.path.exists(PWNED)


# --------------------------------------------------------------------------- properties

SYMBOLS = list(CANONICAL.values())
LEAVES = st.one_of(st.sampled_from(SYMBOLS), st.integers(min_value=-20, max_value=20))


def _combine(children):
    binary = st.tuples(st.sampled_from(["+", "-", "*"]), children, children)
    division = st.tuples(st.just("/"), children,
                         st.one_of(st.sampled_from(SYMBOLS), st.integers(1, 9)))
    power = st.tuples(st.just("^"), children, st.integers(0, 3))
    negation = st.tuples(st.just("neg"), children)
    return st.one_of(binary, division, power, negation)


TREES = st.recursive(LEAVES, _combine, max_leaves=10)


def build(tree):
    """The tree as a SymPy expression, built directly."""
    if not isinstance(tree, tuple):
        return sympy.Integer(tree) if isinstance(tree, int) else tree
    if tree[0] == "neg":
        return -build(tree[1])
    op, a, b = tree[0], build(tree[1]), build(tree[2])
    return {"+": a + b, "-": a - b, "*": a * b}[op] if op in "+-*" else (
        a / b if op == "/" else a ** b)


def show(tree, style: int = 0) -> str:
    """The tree as text: fully parenthesised; *style* varies spacing and spelling of power."""
    space = " " * (style % 3)
    if not isinstance(tree, tuple):
        return f"({tree})" if isinstance(tree, int) and tree < 0 else str(tree)
    if tree[0] == "neg":
        return f"-({show(tree[1], style)})"
    op = ("^" if style % 2 else "**") if tree[0] == "^" else tree[0]
    return f"({show(tree[1], style)}){space}{op}{space}({show(tree[2], style)})"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TREES, st.integers(0, 5))
def test_printed_trees_parse_back_to_themselves(tree, style):
    expected = build(tree)
    parsed = parse_expression(show(tree, style))
    assert not parsed.atoms(sympy.Float)
    assert sympy.expand(parsed - expected) == 0


GRAMMAR_CHARS = "0123456789_.eE+-*/^()² ³×·−dhLTV_maxk<>=!\t\n'\"[]{},;`"


@settings(max_examples=300, deadline=2000)
@given(st.one_of(st.text(max_size=60), st.text(alphabet=GRAMMAR_CHARS, max_size=60)))
def test_random_text_only_ever_raises_symgpt_error(text):
    for parse in (parse_expression, lambda t: parse_condition(t, CANONICAL),
                  parse_value, parse_assignment):
        try:
            parse(text)
        except SymgptError as error:
            assert "\n" not in str(error)


# --------------------------------------------------------------------------- conditions

def test_parse_condition():
    names = {"memory.total": 2 * L * d, "flops.train": 6 * B * T}
    assert parse_condition("memory.total < 80e9", names) == (2 * L * d, "<", 80_000_000_000)
    for op in ("<", "<=", ">", ">=", "==", "!="):
        left, got, right = parse_condition(f"d^2 {op} 2*h", CANONICAL)
        assert (left, got, right) == (d**2, op, 2 * h)
    assert parse_condition("d ≤ h", CANONICAL)[1] == "<="
    assert parse_condition("d≠h", CANONICAL)[1] == "!="


@pytest.mark.parametrize("text, message", [
    ("d", "expected a comparison (<, <=, >, >=, ==, !=) in condition 'd'"),
    ("d < h < 3", "expected exactly one comparison, found another '<' at position 7"),
    ("d = 3", "unexpected character '=' at position 3 (did you mean '=='?)"),
    ("d =< 3", "unexpected character '='"),
    ("< 3", "unexpected '<' at position 1"),
    ("d <", "unexpected end of input"),
    ("(d < 3)", "unexpected '<' at position 4"),
    ("d h < 3", "expected an operator between 'd' and 'h'"),
    ("memory < 3", "unknown name 'memory' in condition 'memory < 3'"),
    (" ", "empty condition"),
])
def test_parse_condition_errors(text, message):
    with pytest.raises(SymgptError) as info:
        parse_condition(text, CANONICAL)
    assert message in str(info.value)


# --------------------------------------------------------------------------- values

@pytest.mark.parametrize("text, expected", [
    ("4096", 4096), ("-3", -3), ("+7", 7), (" 12 ", 12), ("50_257", 50257), ("0", 0),
    ("2e3", 2000), ("1.5e3", 1500), ("2000e-3", 2), ("6E9", 6_000_000_000),
    ("1234567890123456789012345678901234567890", 1234567890123456789012345678901234567890),
    ("true", True), ("False", False), ("TRUE", True),
])
def test_parse_value(text, expected):
    value = parse_value(text)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("text", [
    "", "x", "1.5", "1e-3", "0x10", "1_", "_1", "--3", "+", "yes", "1 2", "٣", "2**3", "1e5000",
    "None", "__import__('os')", "3\n",
])
def test_parse_value_errors(text):
    with pytest.raises(SymgptError) as info:
        parse_value(text)
    assert "expected an integer or true/false" in str(info.value)
    assert str(info.value).startswith("invalid value ")


def test_parse_assignment():
    assert parse_assignment("d=4096") == ("d", 4096)
    assert parse_assignment("use_bias = true") == ("use_bias", True)
    assert parse_assignment("T_max=2e3") == ("T_max", 2000)
    assert parse_assignment("unknown_but_fine=1") == ("unknown_but_fine", 1)


@pytest.mark.parametrize("text, message", [
    ("d", "expected NAME=VALUE, got 'd'"),
    ("d==4", "expected NAME=VALUE, got 'd==4'"),
    ("d=4=5", "expected NAME=VALUE"),
    ("=5", "NAME must be letters, digits and '_'"),
    ("1d=5", "NAME must be letters"),
    ("a.b=5", "NAME must be letters"),
    ("a" * 65 + "=1", "at most 64 characters"),
    ("d=x", "invalid value 'x': expected an integer or true/false"),
    ("d=", "invalid value ''"),
])
def test_parse_assignment_errors(text, message):
    with pytest.raises(SymgptError) as info:
        parse_assignment(text)
    assert message in str(info.value)
    assert parse_assignment("a" * 64 + "=1") == ("a" * 64, 1)

"""Safe parser of user-typed arithmetic: builds SymPy directly, never eval/sympify on text::

    expression := term (('+' | '-') term)*
    term       := unary (('*' | '/') unary)*
    unary      := ('+' | '-')* power
    power      := postfix (('^' | '**') ('+' | '-')* postfix)*    right-associative
    postfix    := primary ('²' | '³')?
    primary    := NUMBER | NAME | '(' expression ')'
    NUMBER     := DIGITS ('.' DIGITS)? ([eE] [+-]? DIGITS)?       DIGITS := [0-9] ('_'? [0-9])*
    NAME       := [A-Za-z_] [A-Za-z0-9_]* ('.' [A-Za-z0-9_]+)*    (looked up in ``names``)
    condition  := expression ('<' | '<=' | '>' | '>=' | '==' | '!=') expression

Whitespace is spaces and tabs only. ``× ·`` mean ``*``, ``−`` (U+2212) ``-``, ``≤ ≥ ≠``
``<= >= !=``. Numbers are exact (``1.5`` is 3/2, ``6e9`` an Integer), never Float. Power
binds tighter than unary minus (``-d^2`` is ``-(d^2)``); its exponent must evaluate to an
integer in [-64, 64]. No implicit multiplication (``12 L`` is an error). Limits: 2,000
characters, 50 nested parentheses, ``e`` exponents within ±1000, numbers (powers and products
too) of at most 2**14 bits (4,932 digits), and -- checked before anything is expanded -- a
polynomial degree of at most 256 and at most 2,000 terms once multiplied out. Every fault is a
one-line SymgptError that names the limit.
"""

from __future__ import annotations

import difflib
import re
from typing import Mapping, NamedTuple

import sympy

from .errors import SymgptError, short
from .symbols import CANONICAL

MAX_LENGTH, MAX_DEPTH, MAX_EXPONENT = 2000, 50, 64   # characters, parentheses, |exponent|
MAX_SCI_EXPONENT = 1000                              # |e| in 6e9-style numbers
MAX_BITS = 1 << 14                                   # bits of one number (4,932 digits)
MAX_DEGREE, MAX_TERMS = 256, 2000                    # of the expanded polynomial

_DIGITS = r"[0-9](?:_?[0-9])*"
_NUMBER = re.compile(rf"({_DIGITS})(?:\.({_DIGITS}))?(?:[eE]([+-]?{_DIGITS}))?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*")
_ASSIGN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_OPS = {**{c: c for c in "+-*/^()"}, "**": "^", "×": "*", "·": "*", "−": "-"}
_CMP_OPS = {**{c: c for c in "< <= > >= == !=".split()}, "≤": "<=", "≥": ">=", "≠": "!="}
_COMPARISONS = frozenset(_CMP_OPS.values())
_SUPERSCRIPTS = {"²": 2, "³": 3}
_INVALID_VALUE = "invalid value {}: expected an integer or true/false"


class _Token(NamedTuple):  # value: Rational (num), ASCII operator (op), int (sup)
    kind: str  # "num", "name", "op", "sup" or "end"
    text: str  # as typed
    pos: int  # 0-based
    value: object


def _decimal(whole: str, frac: str | None, exp: str | None) -> sympy.Rational | None:
    """The exact value of a matched NUMBER, or None when its ``e`` exponent is out of range."""
    frac = (frac or "").replace("_", "")
    power = int(exp.replace("_", "")) if exp else 0
    if abs(power) > MAX_SCI_EXPONENT:
        return None
    mantissa, power = int(whole.replace("_", "") + frac), power - len(frac)
    return sympy.Rational(mantissa * 10 ** max(power, 0), 10 ** max(-power, 0))


def _bits(expr: sympy.Expr) -> int:
    """Bits of the largest numerator or denominator in *expr*."""
    return max((max(abs(r.p), r.q).bit_length() for r in expr.atoms(sympy.Rational)), default=0)


def _choose(n: int, k: int, cap: int) -> int:
    """C(n, k), or *cap* + 1 as soon as it exceeds *cap*."""
    k, out = min(k, n - k), 1
    for i in range(1, k + 1):
        out = out * (n - k + i) // i
        if out > cap:
            return cap + 1
    return out


def expanded_size(expr: sympy.Expr, cap: int = MAX_TERMS) -> tuple[int, int]:
    """(degree, terms) of *expr* multiplied out, without multiplying it out: an upper bound on
    what ``sympy.expand`` would build (terms capped at *cap* + 1). A power's exponent counts
    in absolute value (a denominator is expanded too); a function of symbols counts as one
    symbol."""
    memo: dict = {}

    def size(e) -> tuple[int, int]:
        if e in memo:
            return memo[e]
        if e.is_Number:
            out = (0, 1)
        elif e.is_Symbol:
            out = (1, 1)
        elif e.is_Add:
            parts = [size(a) for a in e.args]
            out = (max(d for d, _ in parts), min(cap + 1, sum(t for _, t in parts)))
        elif e.is_Mul:
            deg, terms = 0, 1
            for a in e.args:
                d, t = size(a)
                deg, terms = deg + d, min(cap + 1, terms * t)
            out = (deg, terms)
        elif e.is_Pow and e.exp.is_Integer:
            d, t = size(e.base)
            n = abs(int(e.exp))
            out = (d * n, 1 if t == 1 else _choose(t + n - 1, n, cap))
        else:  # sqrt, log, ...: one symbol of the degree of its largest argument
            parts = [size(a) for a in e.args] or [(1, 1)]
            out = (max(1, *(d for d, _ in parts)), max(t for _, t in parts))
        memo[e] = out
        return out

    return size(expr)


def check_size(expr: sympy.Expr, what: str = "expression") -> sympy.Expr:
    """*expr* if multiplying it out stays within MAX_DEGREE and MAX_TERMS; else a one-line
    error naming the limit (checked before anything is expanded)."""
    degree, terms = expanded_size(expr)
    if degree > MAX_DEGREE:
        raise SymgptError(f"{what} is too large: its degree would be {degree}, more than the "
                          f"limit of {MAX_DEGREE}")
    if terms > MAX_TERMS:
        raise SymgptError(f"{what} is too large: multiplied out it would have more than "
                          f"{MAX_TERMS:,} terms (the limit)")
    return expr


def _check_text(text: object, what: str) -> str:
    if not isinstance(text, str):
        raise SymgptError(f"{what} must be text, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise SymgptError(f"{what} is too long ({len(text)} characters; at most {MAX_LENGTH})")
    if not text.strip():
        raise SymgptError(f"empty {what}")
    return text


class _Parser:
    def __init__(self, text: str, names: Mapping[str, sympy.Expr], what: str, cmp: bool):
        self.text, self.names, self.what = text, names, what
        self.depth, self.i = 0, 0
        self.tokens = self._tokenize(cmp)

    def error(self, message: str) -> SymgptError:
        return SymgptError(f"{message} in {self.what} {short(self.text)}")

    def _bad_char(self, pos: int, cmp: bool = False) -> SymgptError:
        hint = " (did you mean '=='?)" if cmp and self.text[pos] == "=" else ""
        return self.error(f"unexpected character {self.text[pos]!r} at position {pos + 1}{hint}")

    def _tokenize(self, cmp: bool) -> list[_Token]:
        text, tokens, i = self.text, [], 0
        ops = {**_OPS, **_CMP_OPS} if cmp else _OPS
        while i < len(text):
            ch = text[i]
            if ch in " \t":
                i += 1
                continue
            number = _NUMBER.match(text, i) if ch in "0123456789" else None
            if number:
                if number.end() < len(text) and text[number.end()] in "._":
                    raise self._bad_char(number.end())
                value = _decimal(*number.groups())
                if value is None:
                    raise self.error(f"the exponent of {short(number.group())} at position "
                                     f"{i + 1} is outside -{MAX_SCI_EXPONENT}..{MAX_SCI_EXPONENT}")
                tokens.append(_Token("num", number.group(), i, value))
            elif _NAME.match(text, i):
                tokens.append(_Token("name", _NAME.match(text, i).group(), i, None))
            elif ch in _SUPERSCRIPTS:
                tokens.append(_Token("sup", ch, i, _SUPERSCRIPTS[ch]))
            else:
                op = text[i:i + 2] if text[i:i + 2] in ops else ch
                if op not in ops:
                    raise self._bad_char(i, cmp)
                tokens.append(_Token("op", op, i, ops[op]))
            i += len(tokens[-1].text)
        tokens.append(_Token("end", "", len(text), None))
        return tokens

    def peek(self) -> _Token:
        return self.tokens[self.i]

    def take(self) -> _Token:
        self.i += 1
        return self.tokens[self.i - 1]

    def at(self, *ops: str) -> bool:
        return self.peek().kind == "op" and self.peek().value in ops

    def unexpected(self, tok: _Token) -> SymgptError:
        if tok.kind == "end":
            return self.error("unexpected end of input")
        if tok.kind in ("num", "name") or tok.value == "(":
            prev = self.tokens[self.i - 1].text if self.i else ""
            return self.error(f"expected an operator between {short(prev)} and "
                              f"{short(tok.text)} at position {tok.pos + 1}")
        return self.error(f"unexpected {short(tok.text)} at position {tok.pos + 1}")

    def finish(self, value: sympy.Expr) -> sympy.Expr:
        if self.peek().kind != "end":
            raise self.unexpected(self.peek())
        return value

    def expression(self) -> sympy.Expr:
        terms = [self.term()]
        while self.at("+", "-"):
            negate = self.take().value == "-"
            terms.append(-self.term() if negate else self.term())
        return sympy.Add(*terms)

    def term(self) -> sympy.Expr:
        factors = [self.unary()]
        bits = _bits(factors[0])
        while self.at("*", "/"):
            op, factor = self.take(), self.unary()
            if op.value == "/" and factor == 0:
                raise self.error(f"division by zero at position {op.pos + 1}")
            bits += _bits(factor)
            if bits > MAX_BITS:
                raise self.error(f"the product at position {op.pos + 1} is too large "
                                 f"(a number over {MAX_BITS:,} bits, the limit)")
            factors.append(sympy.Pow(factor, -1) if op.value == "/" else factor)
            if len(factors) > 1 and factors[-1].free_symbols:
                self.bounded(sympy.Mul(*factors, evaluate=False),
                             f"the product at position {op.pos + 1}")
        return sympy.Mul(*factors)

    def signs(self) -> int:
        sign = 1
        while self.at("+", "-"):
            sign *= -1 if self.take().value == "-" else 1
        return sign

    def unary(self) -> sympy.Expr:
        sign, value = self.signs(), self.power()
        return -value if sign < 0 else value

    def power(self) -> sympy.Expr:
        operands, ops = [(1, self.postfix())], []
        while self.at("^"):
            ops.append(self.take())
            operands.append((self.signs(), self.postfix()))
        sign, acc = operands.pop()  # fold right: a ^ s1 b ^ s2 c == a ^ (s1 * (b ^ (s2 * c)))
        for op, (next_sign, base) in zip(reversed(ops), reversed(operands)):
            acc, sign = self.raise_to(base, -acc if sign < 0 else acc, op), next_sign
        return -acc if sign < 0 else acc

    def postfix(self) -> sympy.Expr:
        value = self.primary()
        if self.peek().kind == "sup":
            sup = self.take()
            value = self.raise_to(value, sympy.Integer(sup.value), sup)
        return value

    def raise_to(self, base: sympy.Expr, exponent: sympy.Expr, op: _Token) -> sympy.Expr:
        where = f"at position {op.pos + 1}"
        if not (isinstance(exponent, sympy.Integer) and abs(int(exponent)) <= MAX_EXPONENT):
            raise self.error(f"the exponent of the power {where} must be an integer "
                             f"between -{MAX_EXPONENT} and {MAX_EXPONENT}")
        n = abs(int(exponent))
        if exponent < 0 and base == 0:
            raise self.error(f"division by zero (0 to a negative power) {where}")
        if _bits(base) * n > MAX_BITS:
            raise self.error(f"the power {where} is too large (a number over {MAX_BITS:,} bits, "
                             "the limit)")
        self.bounded(sympy.Pow(base, exponent, evaluate=False), f"the power {where}")
        return sympy.Pow(base, exponent)

    def bounded(self, expr: sympy.Expr, what: str) -> sympy.Expr:
        try:
            return check_size(expr, what)
        except SymgptError as e:
            raise self.error(str(e)) from None

    def primary(self) -> sympy.Expr:
        tok = self.take()
        if tok.kind == "num":
            return tok.value
        if tok.kind == "name":
            return self.lookup(tok)
        if tok.kind != "op" or tok.value != "(":
            self.i -= 1
            raise self.unexpected(tok)
        if self.depth >= MAX_DEPTH:
            raise self.error(f"parentheses nest deeper than {MAX_DEPTH} at position {tok.pos + 1}")
        self.depth += 1
        value = self.expression()
        if not self.at(")"):
            raise self.unexpected(self.peek()) if self.peek().kind != "end" else \
                self.error(f"missing ')' for the '(' at position {tok.pos + 1}")
        self.take()
        self.depth -= 1
        return value

    def lookup(self, tok: _Token) -> sympy.Expr:
        if tok.text not in self.names:
            known = [k for k in self.names if isinstance(k, str) and _NAME.fullmatch(k)]
            more = f", ... ({len(known) - 20} more)" if len(known) > 20 else ""
            close = [k for k in known if k.lower() == tok.text.lower()]
            close = close or difflib.get_close_matches(tok.text, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise SymgptError(f"unknown name {short(tok.text)} in {self.what} {short(self.text)};"
                              f" known names: {', '.join(known[:20]) or '(none)'}{more}{hint}")
        value = self.names[tok.text]
        if isinstance(value, bool) or not isinstance(value, (int, sympy.Expr)):
            raise SymgptError(f"name {short(tok.text)} stands for a {type(value).__name__}, "
                              "not a SymPy expression")
        return sympy.Integer(value) if isinstance(value, int) else value


def parse_expression(text: str, names: Mapping[str, sympy.Expr] | None = None) -> sympy.Expr:
    """The SymPy expression that *text* spells over *names* (default: the canonical symbols)."""
    parser = _Parser(_check_text(text, "expression"),
                     CANONICAL if names is None else names, "expression", cmp=False)
    return parser.bounded(parser.finish(parser.expression()), "the expression")


def parse_condition(text: str, names: Mapping[str, sympy.Expr]
                    ) -> tuple[sympy.Expr, str, sympy.Expr]:
    """``(left, op, right)`` for ``LEFT OP RIGHT``; op is one of < <= > >= == != (ASCII)."""
    parser = _Parser(_check_text(text, "condition"),
                     CANONICAL if names is None else names, "condition", cmp=True)
    left = parser.expression()
    if not parser.at(*_COMPARISONS):
        if parser.peek().kind == "end":
            raise parser.error("expected a comparison (<, <=, >, >=, ==, !=)")
        raise parser.unexpected(parser.peek())
    op = parser.take()
    right = parser.expression()
    if parser.at(*_COMPARISONS):
        raise parser.error(f"expected exactly one comparison, found another "
                           f"{short(parser.peek().text)} at position {parser.peek().pos + 1}")
    parser.finish(right)
    parser.bounded(left - right, "the condition")
    return left, str(op.value), right


def parse_value(text: str) -> int | bool:
    """An integer (``4096``, ``-3``, ``50_257``, ``2e3``) or ``true``/``false``; never evaluates."""
    if not isinstance(text, str):
        raise SymgptError(f"invalid value of type {type(text).__name__}: expected text")
    word = text.strip(" \t")
    if word.lower() in ("true", "false"):
        return word.lower() == "true"
    sign, body = (word[0], word[1:]) if word[:1] in ("+", "-") else ("+", word)
    match = _NUMBER.fullmatch(body) if len(word) <= MAX_LENGTH else None
    value = _decimal(*match.groups()) if match else None
    if value is None or value.q != 1:
        raise SymgptError(_INVALID_VALUE.format(short(text)))
    return -int(value) if sign == "-" else int(value)


def parse_assignment(text: str) -> tuple[str, int | bool]:
    """``(NAME, value)`` for ``NAME=VALUE``; does not check that NAME is known."""
    if not isinstance(text, str) or text.count("=") != 1 or len(text) > MAX_LENGTH:
        raise SymgptError(f"expected NAME=VALUE, got {short(text)}")
    name, value = (part.strip(" \t") for part in text.split("="))
    if not _ASSIGN_NAME.fullmatch(name):
        raise SymgptError(f"expected NAME=VALUE, got {short(text)}: NAME must be letters, "
                          "digits and '_', not starting with a digit, at most 64 characters")
    return name, parse_value(value)

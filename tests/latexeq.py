"""Read back the equations symgpt typesets: a parser of the LaTeX math subset its fragments emit.

A test oracle, independent of the printer: it does not call SymPy's LaTeX printer or parser
(``parse_latex`` fails on these equations as written), it reads the text a reader sees. Each
displayed chain (``align*``: ``lhs &= a \\ &= b \\ &= c \\approx ...``) and each inline ``$a = b$``
is split at its ``=`` signs and every side parsed to an exact SymPy value with an error bound:
integers such as ``1{,}750{,}450{,}176`` are exact, decimals such as ``2.390 \\times 10^{15}`` carry
half a unit of their last digit. ``check`` then asks that every two sides agree: symbolically
where both are symbolic, at the model's sizes where one side is a number, within the rounding
bound where a side was rounded.

Grammar (what the fragments print): sums and differences; products by juxtaposition, ``\\cdot``,
``\\,`` or ``\\times``; ``\\frac{a}{b}``; powers ``x^{n}`` / ``x^n``; ``\\left( \\right)``, ``( )`` and
``{ }`` groups; numbers with ``{,}`` thousands separators; the size symbols of a notation
profile. Anything else (a unit, ``\\text``, a name) makes the side unparseable: ``Unparsed``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

import sympy


class Unparsed(ValueError):
    pass


@dataclass(frozen=True)
class Val:
    value: sympy.Expr          # exact (rounded decimals as written)
    err: Fraction = Fraction(0)  # bound on |printed - true| for numeric sides

    @property
    def numeric(self) -> bool:
        return not self.value.free_symbols


#: the decimal prefixes symgpt writes after a rounded count (thousand, million, billion, trillion)
_SCALES = {"k": 3, "M": 6, "B": 9, "T": 12}

_NUM = re.compile(r"\d+(?:\{,\}\d{3})*(?:\.\d+)?")


class _Parser:
    def __init__(self, text: str, symbols: list[tuple[str, sympy.Symbol]]):
        self.s = re.sub(r"\s+", " ", text).strip()
        self.i = 0
        self.symbols = symbols

    # -- tokens ---------------------------------------------------------------------------
    def _ws(self):
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1

    def _peek(self, lit: str) -> bool:
        self._ws()
        return self.s.startswith(lit, self.i)

    def _eat(self, lit: str) -> bool:
        if self._peek(lit):
            self.i += len(lit)
            return True
        return False

    def _need(self, lit: str):
        if not self._eat(lit):
            raise Unparsed(f"expected {lit!r} at {self.s[self.i:self.i + 30]!r}")

    def done(self) -> bool:
        self._ws()
        return self.i >= len(self.s)

    # -- grammar --------------------------------------------------------------------------
    def expr(self) -> Val:
        sign = -1 if self._eat("-") else 1
        v = self.term()
        total, err = sign * v.value, v.err
        while True:
            if self._eat("+"):
                t = self.term()
                total, err = total + t.value, err + t.err
            elif self._eat("-"):
                t = self.term()
                total, err = total - t.value, err + t.err
            else:
                return Val(sympy.expand(total), err)

    def term(self) -> Val:
        v = self.factor()
        value, err = v.value, v.err
        while True:
            for op in ("\\cdot", "\\times", "\\,"):
                if self._eat(op):
                    break
            if not self._starts_factor():
                break
            f = self.factor()
            if (err or f.err) and not (value.is_number and f.value.is_number):
                raise Unparsed("a rounded factor of a symbolic product")
            # |ab - a'b'| <= |a| e_b + |b| e_a + e_a e_b
            a, b = abs(Fraction(str(value))) if value.is_number else 0, \
                abs(Fraction(str(f.value))) if f.value.is_number else 0
            err = a * f.err + b * err + err * f.err
            value = value * f.value
        return Val(value, err)

    def _starts_factor(self) -> bool:
        self._ws()
        if self.i >= len(self.s):
            return False
        c = self.s[self.i]
        if c.isdigit() or c in "({":
            return True
        if any(self.s.startswith(t, self.i) for t in ("\\left(", "\\bigl(", "\\frac")):
            return True
        return any(self.s.startswith(tex, self.i) for tex, _ in self.symbols)

    def factor(self) -> Val:
        base = self.atom()
        if self._eat("^"):
            if self._eat("{"):
                e = self.expr()
                self._need("}")
            else:
                self._ws()
                m = re.compile(r"\d").match(self.s, self.i)
                if not m:
                    raise Unparsed("a power that is not a number")
                self.i = m.end()
                e = Val(sympy.Integer(m.group()))
            if e.err or not e.value.is_Integer:
                raise Unparsed("a power that is not an integer")
            n = int(e.value)
            value = base.value ** n
            err = Fraction(0)
            if base.err:
                b = abs(Fraction(str(base.value)))
                err = (b + base.err) ** n - b ** n
            return Val(value, err)
        return base

    def atom(self) -> Val:
        self._ws()
        if self._eat("\\left("):
            v = self.expr()
            self._need("\\right)")
            return v
        if self._eat("\\bigl("):   # a bracket broken over align* rows
            v = self.expr()
            self._need("\\bigr)")
            return v
        if self._eat("("):
            v = self.expr()
            self._need(")")
            return v
        if self._eat("\\frac{"):
            n = self.expr()
            self._need("}")
            self._need("{")
            d = self.expr()
            self._need("}")
            if n.err or d.err:
                raise Unparsed("a rounded fraction")
            return Val(n.value / d.value)
        if self._eat("{"):
            v = self.expr()
            self._need("}")
            return v
        m = _NUM.match(self.s, self.i)
        if m:
            self.i = m.end()
            text = m.group().replace("{,}", "")
            scale = 1
            for unit, power in _SCALES.items():  # 14.29\,\mathrm{k}: thousands
                if self.s.startswith(f"\\,\\mathrm{{{unit}}}", self.i):
                    self.i += len(f"\\,\\mathrm{{{unit}}}")
                    scale = 10 ** power
            if "." in text:
                digits = len(text.split(".")[1])
                return Val(sympy.Rational(text) * scale, Fraction(scale, 2 * 10 ** digits))
            return Val(sympy.Integer(text) * scale)
        for tex, sym in self.symbols:
            if self.s.startswith(tex, self.i):
                end = self.i + len(tex)
                # a letter symbol must not run into a longer word (``d`` in ``\mathrm{dense}``)
                if tex[-1].isalpha() and end < len(self.s) and self.s[end].isalpha():
                    continue
                self.i = end
                return Val(sym)
        raise Unparsed(f"unknown token at {self.s[self.i:self.i + 30]!r}")


def symbols_of(notation) -> list[tuple[str, sympy.Symbol]]:
    """(LaTeX, symbol) for every canonical size symbol of *notation*, longest LaTeX first."""
    from symgpt.core.symbols import CANONICAL

    pairs = [(notation.symbol(name), sym) for name, sym in CANONICAL.items()]
    return sorted(pairs, key=lambda p: -len(p[0]))


def parse(text: str, symbols) -> Val:
    p = _Parser(text, symbols)
    v = p.expr()
    if not p.done():
        raise Unparsed(f"trailing text {p.s[p.i:p.i + 30]!r}")
    return v


def _clean(side: str) -> str:
    side = side.strip()
    side = re.sub(r"\\approx.*$", "", side, flags=re.S)   # an approximation in words/units
    side = re.sub(r"\\ \\text\{bytes\}\s*[.,;]?\s*$", "", side)   # a count of bytes, the unit in words
    side = re.sub(r"[.,;]\s*$", "", side.strip())
    return side.replace("&", "").strip()


def chains(tex: str) -> list[list[str]]:
    """The equation chains of a fragment: each ``align*`` environment as one chain of sides
    (its first side is the named left-hand side), and each displayed ``\\[...\\]`` or inline
    ``$...$`` holding ``=``."""
    out = []
    for body in re.findall(r"\\begin\{align\*\}(.*?)\\end\{align\*\}", tex, flags=re.S):
        rows = []
        for r in re.split(r"\\\\", body):
            if not r.strip():
                continue
            if re.match(r"\s*&?\s*\\quad", r) and rows:   # a long side continued on the next row
                rows[-1] += " " + re.sub(r"^\s*&?\s*(\\quad\s*)+", "", r)
            else:
                rows.append(r)
        sides = []
        for r in rows:
            sides += [s for s in re.split(r"&?=", r)]
        out.append([_clean(s) for s in sides if _clean(s)])
    for display in re.findall(r"(?<!\\)\\\[(.*?)\\\]", tex, flags=re.S):   # a displayed \[ a = b \]
        if "=" in display:
            out.append([_clean(s) for s in display.split("=") if _clean(s)])
    stripped = re.sub(r"(?<!\\)\\\[.*?\\\]", "", tex, flags=re.S)
    stripped = re.sub(r"\\begin\{align\*\}.*?\\end\{align\*\}", "", stripped, flags=re.S)
    stripped = re.sub(r"(?m)^%.*$", "", stripped)
    for inline in re.findall(r"(?<!\\)\$(.+?)(?<!\\)\$", stripped, flags=re.S):
        if "=" in inline:
            out.append([_clean(s) for s in inline.split("=") if _clean(s)])
    return out


def _frac(x) -> Fraction:
    x = sympy.Rational(x)
    return Fraction(int(x.p), int(x.q))


def check(tex: str, symbols, bindings) -> tuple[int, list[str], list[str]]:
    """(equalities checked, false ones described, sides not parsed): every two parsed sides
    of each chain compared; a numeric side against a symbolic one at *bindings*."""
    checked, false, unparsed = 0, [], []
    for chain in chains(tex):
        vals = []
        for side in chain:
            try:
                vals.append((side, parse(side, symbols)))
            except Unparsed:
                unparsed.append(side)
        if vals and vals[0][0] == chain[0] and isinstance(vals[0][1].value, sympy.Symbol):
            vals = vals[1:]  # ``T = ...``: the symbol being solved for or set, not a size to check
        for (sa, a), (sb, b) in zip(vals, vals[1:]):
            checked += 1
            if not (a.numeric or b.numeric):
                if sympy.expand(a.value - b.value) != 0:
                    false.append(f"{sa}  !=  {sb}")
                continue
            x, y = a.value.xreplace(bindings), b.value.xreplace(bindings)
            if x.free_symbols or y.free_symbols:
                unparsed.append(f"{sa} = {sb} (sizes left free: {x.free_symbols | y.free_symbols})")
                checked -= 1
                continue
            diff = abs(_frac(x) - _frac(y))
            if diff > a.err + b.err:
                false.append(f"{sa}  !=  {sb}  ({x} vs {y})")
    return checked, false, unparsed

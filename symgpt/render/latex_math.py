"""Printing helpers for derivations: an expression with the sizes substituted term by term
(``24 \\cdot 1{,}024 \\cdot 768^{2}``), the values of its terms, and long sums broken over
lines. Printing only: the expressions and values come from the derivations."""

from __future__ import annotations

import sympy

from .latex import Tex, tex_expr
from .latex_numbers import tex_int, tex_number


def terms(expr) -> list:
    """The terms of *expr* in the printer's order (highest degree first)."""
    expr = sympy.expand(expr)
    return list(expr.as_ordered_terms(order="lex")) if expr != 0 else []


def tex_substituted(expr, bindings, per_line: int | None = None) -> Tex:
    """Each term with its symbols replaced by their values, unevaluated:
    ``12 L d^2 + V d`` -> ``12 \\cdot 12 \\cdot 768^{2} + 50{,}257 \\cdot 768``; with *per_line*,
    a new ``align*`` row (``\\quad``-indented) after every *per_line* terms."""
    out = []
    for i, term in enumerate(terms(expr)):
        coeff, rest = term.as_coeff_Mul()
        sign = "-" if coeff < 0 else "+"
        coeff = abs(coeff)
        factors = []
        if coeff != 1 or rest == 1:
            factors.append(tex_int(coeff))
        for base, exp in sorted(rest.as_powers_dict().items(), key=lambda kv: str(kv[0])):
            if base == 1:
                continue
            v = bindings.get(base)
            shown = tex_int(v) if v is not None else sympy.latex(base)
            factors.append(shown if exp == 1 else f"{shown}^{{{sympy.latex(exp)}}}")
        body = " \\cdot ".join(factors)
        brk = " \\\\\n  &\\quad" if per_line and i and i % per_line == 0 else ""
        out.append(body if i == 0 and sign == "+" else (f"-{body}" if i == 0 else f"{brk} {sign} {body}"))
    return Tex("".join(out) or "0")


def tex_substituted_fit(expr, bindings, width: int = 110) -> Tex:
    """:func:`tex_substituted` on one row where its source is at most *width* characters (about
    a text line of numbers), else two terms a row."""
    one = tex_substituted(expr, bindings)
    return one if len(one) <= width else tex_substituted(expr, bindings, 2)


def tex_term_values(expr, bindings, style: str = "sci", digits: int = 4) -> Tex | None:
    """The value of each term: ``1.450 \\times 10^{10} + 3.221 \\times 10^{9}`` (None if unbound)."""
    out = []
    for i, term in enumerate(terms(expr)):
        v = term.xreplace(dict(bindings))
        if not v.is_number:
            return None
        sign = "-" if v < 0 else "+"
        shown = tex_number(abs(v), style, digits)
        out.append(shown if i == 0 and sign == "+" else (f"-{shown}" if i == 0 else f" {sign} {shown}"))
    return Tex("".join(out) or "0")


def tex_lines(expr, notation, per_line: int = 4) -> list[Tex]:
    """A long sum broken into lines of *per_line* terms (for ``align*``); signs kept."""
    ts = terms(expr)
    if not ts:
        return [Tex("0")]
    lines = []
    for i in range(0, len(ts), per_line):
        s = tex_expr(sympy.Add(*ts[i:i + per_line]), notation)
        if i and not s.startswith("-"):
            s = "+ " + s
        lines.append(Tex(s))
    return lines

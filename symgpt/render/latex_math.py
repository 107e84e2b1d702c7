"""Printing helpers for derivations: an expression with the sizes substituted term by term
(``24 \\cdot 1{,}024 \\cdot 768^{2}``), the values of its terms, and long sums broken over
lines. Printing only: the expressions and values come from the derivations."""

from __future__ import annotations

import re

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


def tex_term_values(expr, bindings, style: str = "sci", digits: int = 4, width: float | None = None) -> Tex | None:
    """The value of each term: ``1.450 \\times 10^{10} + 3.221 \\times 10^{9}`` (None if unbound);
    with *width*, over the rows of an ``align*`` where one row would be wider."""
    out = []
    for i, term in enumerate(terms(expr)):
        v = term.xreplace(dict(bindings))
        if not v.is_number:
            return None
        sign = "-" if v < 0 else "+"
        shown = tex_number(abs(v), style, digits)
        out.append(shown if i == 0 and sign == "+" else (f"-{shown}" if i == 0 else f" {sign} {shown}"))
    if width is not None and tex_width("".join(out)) > width:
        return Tex(ROW_BREAK.join(pack_rows([t.strip() for t in out], width)))
    return Tex("".join(out) or "0")


def tex_lines(expr, notation, per_line: int = 4, width: float | None = None) -> list[Tex]:
    """A long sum broken into lines of *per_line* terms (for ``align*``); signs kept. With
    *width*, a line of *per_line* terms wider than that (long symbols) is broken further."""
    ts = terms(expr)
    if not ts:
        return [Tex("0")]
    lines = []
    for i in range(0, len(ts), per_line):
        s = tex_expr(sympy.Add(*ts[i:i + per_line]), notation)
        if i and not s.startswith("-"):
            s = "+ " + s
        if width is not None and tex_width(s) > width:
            pieces = signed_terms(sympy.Add(*ts[i:i + per_line]), notation)
            if i and not pieces[0].startswith("-"):
                pieces[0] = "+ " + pieces[0]
            lines += [Tex(r) for r in pack_rows(pieces, width)]
            continue
        lines.append(Tex(s))
    return lines


# --- long formulas broken over the rows of an ``align*`` (what fits the page) ---------------------

#: the widest row an ``align*`` of the lecture notes holds (A4, 2.4 cm margins, 11 pt), in the
#: units of :func:`tex_width` (about 6.5 pt each; the text is 459 pt wide), with room for an
#: ``align*`` row's left-hand side or the ``\quad`` of a continued row
ROW_WIDTH = 58
#: a sum continued on the next row of an ``align*``
ROW_BREAK = " \\\\\n  &\\quad "
_TOKEN = re.compile(r"\\([A-Za-z]+|.)|(.)", re.S)
_NO_WIDTH = frozenset("left right bigl bigr Bigl Bigr mathrm mathit mathbf text textrm operatorname "
                      "displaystyle limits".split())


def tex_width(tex) -> float:
    """About how wide LaTeX math *tex* is typeset, in italic letters of the text size: a letter
    or digit 1 (0.7 in a sub- or superscript), a binary operator or relation with its spaces 2,
    ``\\cdot`` 1.5, ``\\quad`` 2, font commands and delimiter sizes nothing."""
    width, script, depth, script_depth = 0.0, False, 0, []
    for cmd, ch in _TOKEN.findall(str(tex)):
        small = bool(script_depth) or script
        scale = 0.7 if small else 1.0
        if cmd:
            w = 0.0 if cmd in _NO_WIDTH else {"cdot": 1.5, "times": 2.0, "quad": 2.0, "qquad": 4.0, ",": 0.3,
                                               ";": 0.5, "approx": 2.0}.get(cmd, 1.0)
            width += w * scale
            script = False if cmd not in _NO_WIDTH else script
            continue
        if ch in "_^":
            script = True
            continue
        if ch == "{":
            depth += 1
            if script:
                script_depth.append(depth)
            script = False
            continue
        if ch == "}":
            if script_depth and script_depth[-1] == depth:
                script_depth.pop()
            depth -= 1
            continue
        if ch.isspace():
            continue
        width += (2.0 if ch in "+-=<>" and not small else 1.0) * scale
        script = False
    return width


def pack_rows(pieces, width: float = ROW_WIDTH) -> list[str]:
    """Signed *pieces* (``"a"``, ``"+ b"``, ``"- c"``) packed greedily into rows of at most
    *width* (:func:`tex_width`); a piece wider than a row gets a row of its own."""
    rows: list[str] = []
    for p in pieces:
        p = str(p)
        if rows and tex_width(rows[-1]) + tex_width(p) <= width:
            rows[-1] += " " + p
        else:
            rows.append(p)
    return rows


def signed_terms(expr, notation, first: bool = False) -> list[str]:
    """Each term of *expr* typeset on its own, signed after the first (``["a", "+ b", "- c"]``;
    *first*: the first signed too, as a sum continued)."""
    out = []
    for i, t in enumerate(terms(expr)):
        s = str(tex_expr(t, notation))
        out.append(s if i == 0 and not first else (f"- {s[1:].lstrip()}" if s.startswith("-") else f"+ {s}"))
    return out or ["0"]


def tex_fit(expr, notation, width: float = ROW_WIDTH) -> Tex:
    """*expr* as printed where it fits one row of an ``align*``, else its terms over rows
    (``ROW_BREAK``): for a side of an ``align*`` only."""
    one = tex_expr(expr, notation)
    if tex_width(one) <= width:
        return one
    return Tex(ROW_BREAK.join(pack_rows(signed_terms(expr, notation), width)))


def tex_fit_pieces(pieces, width: float = ROW_WIDTH) -> Tex:
    """Signed *pieces* on one row where they fit, else packed over rows (``ROW_BREAK``)."""
    rows = pack_rows(pieces, width)
    return Tex(ROW_BREAK.join(rows))


def tex_times_rows(factor_tex: str, per_expr, notation, width: float = ROW_WIDTH) -> Tex:
    """``factor (sum)`` for an ``align*``: on one row in ``\\left( \\right)`` where it fits, else
    the sum's terms over rows inside ``\\bigl( ... \\bigr)`` (which, unlike ``\\left(
    \\right)``, may span rows)."""
    inner = str(tex_expr(per_expr, notation))
    one = f"{factor_tex} \\left({inner}\\right)"
    if tex_width(one) <= width:
        return Tex(one)
    # every row as narrow as the first, which carries the factor (a mixed count can be wide:
    # Llama 4 Maverick's -floor(L/4) + floor(L/2))
    rows = pack_rows(signed_terms(per_expr, notation), width - 4 - tex_width(factor_tex))
    rows[0] = f"{factor_tex} \\bigl({rows[0]}"
    rows[-1] += "\\bigr)"
    return Tex(" \\\\\n  &\\quad\\quad ".join(rows))


def rows_after(head: str, pieces, width: float = ROW_WIDTH) -> str:
    """*head* (a side of an ``align*``, perhaps over rows already) continued by the signed
    *pieces*, packed onto its last row and further rows (``ROW_BREAK``)."""
    cut = head.rfind("\\\\\n")
    cut = head.index("&", cut) + 1 if cut >= 0 else 0
    rows = [head[cut:]]
    for p in pieces:
        if tex_width(rows[-1]) + tex_width(p) <= width:
            rows[-1] += " " + str(p)
        else:
            rows.append(str(p))
    return head[:cut] + ROW_BREAK.join(rows)

"""Plain-text printing for terminals: numbers with thousands separators, readable formulas,
aligned tables. Printers format; they never derive."""

from __future__ import annotations

import re

import sympy

_SUP = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def expr_text(expr) -> str:
    """``12*L*d**2 + 2*d`` -> ``12·L·d² + 2·d`` (a display form; JSON keeps SymPy syntax)."""
    s = sympy.sstr(expr, order="grlex") if isinstance(expr, sympy.Basic) else str(expr)
    s = re.sub(r"\*\*\((-?\d+)\)", lambda m: m.group(1).translate(_SUP), s)
    s = re.sub(r"\*\*(\d+)", lambda m: m.group(1).translate(_SUP), s)
    return s.replace("*", "·")


def group_marks(arch, group: str | None) -> str:
    """How a node is repeated, outermost group first: ``×L``; an expert ``×L, ×E (k active)``;
    ``""`` outside every group."""
    marks = []
    for g in reversed(arch.group_chain(group)):
        mark = "×" + expr_text(g.repeat)
        if sympy.expand(g.active - g.repeat) != 0:
            mark += f" ({expr_text(g.active)} active)"
        marks.append(mark)
    return ", ".join(marks)


def number(v, digits: int | None = None) -> str:
    """An exact value with thousands separators (``124,439,808``); a fraction stays exact
    (``3/2``) unless *digits* asks for a rounded decimal. None prints as ``-``."""
    if v is None:
        return "-"
    v = sympy.nsimplify(v) if isinstance(v, float) else sympy.Integer(v) if isinstance(v, int) else v
    if v.is_Integer:
        return f"{int(v):,}"
    if v.is_Rational and digits is None:
        return f"{int(v.p):,}/{int(v.q):,}"
    return f"{float(v):,.{digits or 4}g}"


def sci(v, digits: int = 4) -> str:
    """``1.771e10``-style rounding for prose (``1.771 × 10¹⁰``)."""
    if v is None:
        return "-"
    r = v if isinstance(v, sympy.Basic) else sympy.Rational(v)  # an int, a float, a Fraction
    if not r.is_Rational:  # ln V and the like: finite floats
        r = sympy.Rational(float(r))
    if r == 0:
        return "0"
    sign, p, q = ("-" if r < 0 else ""), abs(int(r.p)), int(r.q)
    e = int((p.bit_length() - q.bit_length()) * 0.30102999566398120)  # exact: no float overflow
    while p * 10 ** max(-e, 0) < q * 10 ** max(e, 0):
        e -= 1
    while p * 10 ** max(-e - 1, 0) >= q * 10 ** max(e + 1, 0):
        e += 1
    shift = digits - 1 - e  # mantissa = round(r · 10^shift), digits digits
    num, den = p * 10 ** max(shift, 0), q * 10 ** max(-shift, 0)
    mantissa = (2 * num + den) // (2 * den)
    if mantissa >= 10 ** digits:
        mantissa, e = mantissa // 10, e + 1
    text = str(mantissa)
    m = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return f"{sign}{m} × 10{str(e).translate(_SUP)}"


def table(headers: list[str], rows: list[list[str]], align: str | None = None) -> str:
    """An aligned text table; *align* has one letter per column (``l`` or ``r``)."""
    align = align or "l" + "r" * (len(headers) - 1)
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]

    def fmt(cells):
        return "  ".join(
            str(c).ljust(w) if a == "l" else str(c).rjust(w) for c, w, a in zip(cells, widths, align)
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([fmt(headers), rule, *[fmt(r) for r in rows]])

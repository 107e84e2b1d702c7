"""How a number or a formula is spelled in plain text: ``124,439,808``, ``3.000 × 10¹⁴``,
``12·L·d² + 2·d``. The vocabulary of every layer that writes a sentence (a quantity's notes, a
comparison's verdict, the text printers), so it sits at the bottom with the symbols. SymPy is
imported only where a SymPy value is printed: an int or a Fraction prints without it (the
cached answers of ``symgpt params`` never import SymPy)."""

from __future__ import annotations

import re
from fractions import Fraction

_SUP = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def expr_text(expr) -> str:
    """``12*L*d**2 + 2*d`` -> ``12·L·d² + 2·d`` (a display form; JSON keeps SymPy syntax)."""
    import sympy

    s = sympy.sstr(expr, order="grlex") if isinstance(expr, sympy.Basic) else str(expr)
    s = re.sub(r"\*\*\((-?\d+)\)", lambda m: m.group(1).translate(_SUP), s)
    s = re.sub(r"\*\*(\d+)", lambda m: m.group(1).translate(_SUP), s)
    return s.replace("*", "·")


def number(v, digits: int | None = None) -> str:
    """An exact value with thousands separators (``124,439,808``); a fraction stays exact
    (``3/2``) unless *digits* asks for a rounded decimal. None prints as ``-``."""
    if v is None:
        return "-"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    if isinstance(v, Fraction):
        return f"{v.numerator:,}/{v.denominator:,}" if digits is None else f"{float(v):,.{digits or 4}g}"
    import sympy

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
    import sympy

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


def group(n: int, sep: str = "{,}") -> str:
    """Digits in groups of three: ``124{,}439{,}808`` (LaTeX's comma by default)."""
    s = f"{abs(int(n)):,}".replace(",", sep)
    return ("-" if n < 0 else "") + s

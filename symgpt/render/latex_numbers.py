"""Numbers as LaTeX math: exact with thin-space-free grouping (``124{,}439{,}808``), short
(``124.4\\,\\mathrm{M}``), scientific (``1.771 \\times 10^{10}``), bytes (``5.8\\,\\mathrm{GB}``,
decimal units; ``\\mathrm{GiB}`` when asked). Values are exact SymPy numbers; rounding happens
here, at printing, and nowhere else."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, localcontext

import sympy

from ..core.symbols import as_expr

from ..core.errors import SymgptError
from ..core.numtext import group
from .units import BINARY_UNITS, BYTE_UNITS, DECIMAL_UNITS

STYLES = ("exact", "short", "sci")
_SHORT = ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "k"))
_BYTES = tuple((BYTE_UNITS[u], u) for u in DECIMAL_UNITS)
_IBYTES = tuple((BYTE_UNITS[u], u) for u in BINARY_UNITS)


def _exact(v) -> sympy.Rational:
    if isinstance(v, bool):
        raise SymgptError(f"not a number: {v!r}")
    if isinstance(v, int):
        return sympy.Integer(v)
    v = as_expr(v) if not isinstance(v, sympy.Basic) else v
    if not v.is_number:
        raise SymgptError(f"not a number: {v}")
    return v


def _decimal(v, digits: int) -> Decimal:
    """*v* rounded to *digits* significant digits, exactly (no float detour for rationals)."""
    v = _exact(v)
    with localcontext() as ctx:
        ctx.prec = max(digits, 1)
        ctx.rounding = ROUND_HALF_EVEN
        if v.is_Rational:
            return +(Decimal(int(v.p)) / Decimal(int(v.q)))
        return +Decimal(str(sympy.N(v, digits + 10)))


def tex_int(v) -> str:
    """The exact value: ``124{,}439{,}808``; a fraction stays exact (``\\frac{3}{2}``)."""
    v = _exact(v)
    if v.is_Integer:
        return group(int(v))
    if v.is_Rational:
        sign = "-" if v < 0 else ""
        return rf"{sign}\frac{{{group(abs(int(v.p)))}}}{{{group(int(v.q))}}}"
    return tex_fixed(v, 4)


def _plain(d: Decimal) -> str:
    s = format(d, "f")
    if "." in s:
        whole, frac = s.split(".")
        return group(int(whole)) + "." + frac if whole.lstrip("-") else s
    return group(int(s))


def tex_fixed(v, digits: int = 4) -> str:
    """*digits* significant digits, positional: ``10.82``, ``0.7283``."""
    d = _decimal(v, digits)
    if d == 0:
        return "0"
    return _plain(d)


def _sci_parts(v, digits: int) -> tuple[str, int] | None:
    """(mantissa, exponent) of *v* to *digits* significant digits (``("1.771", 10)``); None for 0."""
    d = _decimal(v, digits)
    if d == 0:
        return None
    m, e = f"{d:.{digits - 1}e}".split("e")
    return m, int(e)


def tex_sci(v, digits: int = 4) -> str:
    """``1.771 \\times 10^{10}`` (*digits* significant digits)."""
    parts = _sci_parts(v, digits)
    if parts is None:
        return "0"
    m, e = parts
    return m if e == 0 else rf"{m} \times 10^{{{e}}}"


def tex_short(v, digits: int = 4, units=_SHORT) -> str:
    """``124.4\\,\\mathrm{M}`` (*digits* significant digits, SI-like suffix k, M, B, T)."""
    v = _exact(v)
    for scale, suffix in units:
        if abs(v) >= scale:
            return rf"{tex_fixed(v / scale, digits)}\,\mathrm{{{suffix}}}"
    return tex_fixed(v, digits) if not v.is_Integer else group(int(v))


def tex_bytes(v, digits: int = 3, binary: bool = False) -> str:
    """Bytes in decimal units (``5.84\\,\\mathrm{GB}``, GB = 10^9) or binary (GiB = 2^30)."""
    v = _exact(v)
    units = _IBYTES if binary else _BYTES
    for i, (scale, suffix) in enumerate(units):
        if abs(v) >= scale:
            if i and abs(_decimal(v / scale, digits)) * scale >= units[i - 1][0]:
                scale, suffix = units[i - 1]   # rounds up into the next unit: 999,776,258 B is 1.00 GB
            return rf"{tex_fixed(v / scale, digits)}\,\mathrm{{{suffix}}}"
    return rf"{tex_int(v)}\,\mathrm{{B}}"


def tex_percent(part, total, digits: int = 3) -> str:
    """``45.5\\,\\%``: a share, rounded to *digits* significant digits (two decimals at most)."""
    part, total = _exact(part), _exact(total)
    if total == 0:
        return "--"
    share = part * 100 / total
    if share == 0:
        return r"0\,\%"
    d = _decimal(share, digits)
    if abs(d) < Decimal("0.01"):
        return rf"{tex_fixed(share, 1)}\,\%"
    return rf"{d.quantize(Decimal('0.01') if abs(d) < 10 else Decimal('0.1'))}\,\%"


def tex_number(v, style: str = "exact", digits: int = 4) -> str:
    """One of the styles: ``exact``, ``short`` (124.4 M), ``sci`` (1.771 × 10¹⁰)."""
    if v is None:
        return "\\text{--}"
    if style == "exact":
        return tex_int(v)
    if style == "short":
        return tex_short(v, digits)
    if style == "sci":
        return tex_sci(v, digits)
    raise SymgptError(f"unknown number style {style!r}; styles: {', '.join(STYLES)}")


def plain_number(v, style: str = "exact", digits: int = 4) -> str:
    """The same styles as plain text (Markdown, CSV): ``124,439,808``, ``124.4 M``, ``1.771e10``."""
    if v is None:
        return ""
    v = _exact(v)
    if style == "exact":
        if v.is_Integer:
            return f"{int(v):,}"
        return f"{int(v.p)}/{int(v.q)}" if v.is_Rational else format(_decimal(v, digits), "f")
    if style == "short":
        for scale, suffix in _SHORT:
            if abs(v) >= scale:
                return f"{format(_decimal(v / scale, digits), 'f')} {suffix}"
        return format(_decimal(v, digits), "f")
    if style == "sci":
        parts = _sci_parts(v, digits)
        return "0" if parts is None else f"{parts[0]}e{parts[1]}"
    raise SymgptError(f"unknown number style {style!r}; styles: {', '.join(STYLES)}")

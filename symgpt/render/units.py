"""Byte counts for people: decimal GB (10⁹ bytes) and binary GiB (2³⁰ bytes), always labelled.

ZeRO's "GB" is 10⁹ bytes; Korthikanti's "GB" is GiB; symgpt never prints a bare "GB" that could
mean either: ``bytes_text(5_694_775_298)`` is ``5,694,775,298 B = 5.69 GB = 5.30 GiB``.
"""

from __future__ import annotations

import sympy

GB = sympy.Integer(10) ** 9
GiB = sympy.Integer(2) ** 30
MB = sympy.Integer(10) ** 6
MiB = sympy.Integer(2) ** 20


def in_gb(n) -> sympy.Rational:
    """Exact decimal gigabytes (10⁹ bytes)."""
    return sympy.Rational(n) / GB


def in_gib(n) -> sympy.Rational:
    """Exact binary gibibytes (2³⁰ bytes)."""
    return sympy.Rational(n) / GiB


def scaled(n, digits: int = 3) -> str:
    """``5.69 GB`` / ``498 MB`` / ``12.3 kB``: decimal units, three significant digits."""
    if n is None:
        return "-"
    f = float(n)
    units = (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3), ("B", 1))
    for i, (unit, size) in enumerate(units):
        if abs(f) >= size or unit == "B":
            shown = f"{f / size:.{digits}g}"
            if i and abs(float(shown)) >= 1000:          # 999,776,258 B: 1.00 GB, not "1e+03 MB"
                unit, size = units[i - 1]
                shown = f"{f / size:.{digits}g}"
            return f"{shown} {unit}"


def bytes_text(n) -> str:
    """``5,694,775,298 B = 5.69 GB = 5.30 GiB`` (both units, never confused); ``-`` when unbound."""
    if n is None:
        return "-"
    v = sympy.Rational(n)
    exact = f"{int(v):,} B" if v.is_Integer else f"{float(v):,.1f} B"
    return f"{exact} = {float(in_gb(v)):.3g} GB = {float(in_gib(v)):.3g} GiB"

"""Byte counts for people, always in a named unit: decimal (SI: ``kB``, ``MB``, ``GB``, ``TB``,
powers of 10³) or binary (IEC: ``KiB``, ``MiB``, ``GiB``, ``TiB``, powers of 2¹⁰).

ZeRO's "GB" is 10⁹ bytes; Korthikanti's "GB" is GiB; Megatron-LM prints 2²⁰ bytes as "MB".
A printer names the unit it means (``in_unit(n, "MiB")``), whatever label its source prints, and
symgpt never prints a bare "GB" that could mean either: ``bytes_text(5_694_775_298)`` is
``5,694,775,298 B = 5.69 GB = 5.30 GiB``.
"""

from __future__ import annotations

import sympy

#: bytes per unit, by the unit's name
BYTE_UNITS = {"B": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15,
              "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}
#: the units a scaled figure chooses from, largest first
DECIMAL_UNITS = ("TB", "GB", "MB", "kB")
BINARY_UNITS = ("TiB", "GiB", "MiB", "KiB")


def in_unit(n, unit: str) -> sympy.Rational:
    """*n* bytes as an exact number of *unit* (a name of ``BYTE_UNITS``: ``MB`` is 10⁶ bytes,
    ``MiB`` 2²⁰)."""
    return sympy.Rational(n) / BYTE_UNITS[unit]


def bytes_in(n, unit: str, spec: str = ".3f", missing: str = "-") -> str:
    """*n* bytes as a number of *unit* (``in_unit``), formatted with the format *spec*
    (``bytes_in(5_694_775_298, "GB")`` is ``5.695``); *missing* when *n* is None (unbound)."""
    if n is None:
        return missing
    return format(float(in_unit(n, unit)), spec)


def scaled(n, digits: int = 3) -> str:
    """``5.69 GB`` / ``498 MB`` / ``12.3 kB``: decimal units, three significant digits."""
    if n is None:
        return "-"
    f = float(n)
    units = (*((u, BYTE_UNITS[u]) for u in DECIMAL_UNITS), ("B", 1))
    for i, (unit, size) in enumerate(units):
        if abs(f) >= size or unit == "B":
            shown = f"{f / size:.{digits}g}"
            if i and abs(float(shown)) >= 1000:          # 999,776,258 B: 1.00 GB, not "1e+03 MB"
                unit, size = units[i - 1]
                shown = f"{f / size:.{digits}g}"
            return f"{shown} {unit}"


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _large(v, units: tuple[str, ...]) -> str:
    """*v* bytes (at least a thousand of the smallest of *units*) in the largest of *units* it
    reaches, three significant digits; past a thousand of the largest, as ``m × 10ⁿ`` of it."""
    f = float(v)
    for unit in units:
        size = BYTE_UNITS[unit]
        if abs(f) >= size * 0.9995:  # 999.97 TB rounds to 1.00 PB, never "1e+03 TB"
            shown = f"{f / size:.3g}"
            if "e" not in shown:
                return f"{shown} {unit}"
            mantissa, exponent = f"{f / size:.2e}".split("e")
            return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)} {unit}"
    raise ValueError(v)  # pragma: no cover (callers pass at least the smallest unit)


def bytes_text(n) -> str:
    """``5,694,775,298 B = 5.69 GB = 5.30 GiB`` (both units, never confused); from 10¹² bytes on
    in TB or PB (``3.39 PB = 3.01 PiB``), past a thousand PB as ``m × 10ⁿ PB``; ``-`` when unbound."""
    if n is None:
        return "-"
    v = sympy.Rational(n)
    exact = f"{int(v):,} B" if v.is_Integer else f"{float(v):,.1f} B"
    if abs(v) >= sympy.Rational(9995, 10) * 10**9:  # 999.5 GB and up: "1e+03 GB" otherwise
        return f"{exact} = {_large(v, ('PB', 'TB'))} = {_large(v, ('PiB', 'TiB', 'GiB'))}"
    return f"{exact} = {bytes_in(v, 'GB', '.3g')} GB = {bytes_in(v, 'GiB', '.3g')} GiB"

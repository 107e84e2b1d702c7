"""Checks of the numbers a derivation is given (rates, efficiencies, bandwidths)."""

from __future__ import annotations

import sympy

from ..core.errors import SymgptError

#: an A100's dense bf16/fp16 peak, 312 TFLOP/s (NVIDIA A100 datasheet), rounded to 300
DEFAULT_PEAK = sympy.Integer(300) * 10**12


def positive(name: str, v, upper=None) -> sympy.Expr:
    """*v* as an exact positive Rational (at most *upper*), or a one-line error naming *name*."""
    if isinstance(v, bool) or not isinstance(v, (int, sympy.Rational, sympy.Integer)):
        if isinstance(v, float):
            v = sympy.nsimplify(v, rational=True)
        else:
            raise SymgptError(f"{name} must be a positive number, got {v!r}")
    v = sympy.Rational(v)
    if v <= 0 or (upper is not None and v > upper):
        bound = f" at most {upper}" if upper is not None else ""
        raise SymgptError(f"{name} must be positive{bound}, got {v}")
    return v

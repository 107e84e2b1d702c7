"""The one check of every positive number a derivation or a command is given (rates,
efficiencies, bandwidths, memory, degrees, token counts): :func:`positive` for an exact positive
Rational, :func:`positive_int` for a positive integer. Every option dataclass
(``derive.options``) and every command's argument reader (``cli.args``) calls these."""

from __future__ import annotations

import sympy

from ..core.errors import SymgptError

#: an A100's dense bf16/fp16 peak, 312 TFLOP/s (NVIDIA A100 datasheet), rounded to 300
DEFAULT_PEAK = sympy.Integer(300) * 10**12


def positive(name: str, v, upper=None, symbolic: bool = False) -> sympy.Expr:
    """*v* as an exact positive Rational (at most *upper*), or a one-line error naming *name*.
    A float is taken as the decimal it prints as (``0.4`` is 2/5). *symbolic*: a SymPy symbol
    passes as it is (a plan's closed forms)."""
    if symbolic and isinstance(v, sympy.Symbol):
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float, sympy.Rational, sympy.Integer)):
        raise SymgptError(f"{name} must be a positive number, got {v!r}")
    v = sympy.nsimplify(v, rational=True) if isinstance(v, float) else sympy.Rational(v)
    if v <= 0 or (upper is not None and v > upper):
        bound = f" at most {upper}" if upper is not None else ""
        raise SymgptError(f"{name} must be positive{bound}, got {v}")
    return v


def positive_int(name: str, v, symbolic: bool = False) -> sympy.Expr:
    """*v* as a positive SymPy Integer, or a one-line error naming *name*. *symbolic*: a SymPy
    symbol passes as it is (a plan's degrees)."""
    if symbolic and isinstance(v, sympy.Symbol):
        return v
    if isinstance(v, bool) or not isinstance(v, (int, sympy.Integer)) or v < 1:
        raise SymgptError(f"{name} must be a positive integer, got {v!r}")
    return sympy.Integer(v)


def optional(check, name: str, v, *args, **kwargs):
    """None where *v* is None, else ``check(name, v, ...)``."""
    return None if v is None else check(name, v, *args, **kwargs)

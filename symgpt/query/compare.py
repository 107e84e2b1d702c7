"""Anyone's formula against the derivation: equal, or off by an exact expression.

A formula is text over the canonical symbols (``"12*L*d^2 + 13*L*d + V*d + T_max*d + 2*d"``),
read by the safe parser :func:`symgpt.core.exprparse.parse_expression` -- never by ``sympify`` or
``eval`` -- or a SymPy expression built from :mod:`symgpt.core.symbols`. A formula without symbols
(``"124439808"``) is compared with the value at the configuration.

``difference`` is ``formula - derived``: what the formula has too much (positive) or too little
(negative). ``relative_error`` is ``difference / derived`` at the configuration.

In a pytest file, one line::

    from symgpt.query import holds
    assert holds("gpt2", "params", "12*L*d^2 + 13*L*d + V*d + T_max*d + 2*d")

``holds`` returns a :class:`Comparison`, true when the formula equals the derivation; when it
does not, pytest prints the comparison, which says by how much.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Mapping

import sympy

from ..core.errors import SymgptError
from ..core.exprparse import parse_expression
from ..derive.quantity import Quantity, evaluate
from ..core.numtext import expr_text, number
from ..core.symbols import CANONICAL, HARDWARE_SYMBOLS
from .rules import relative_error
from .selection import load_model, select


def formula_names(extra: Mapping[str, sympy.Expr] | None = None) -> dict[str, sympy.Expr]:
    """The names a formula may use: the canonical symbols, the roofline's hardware symbols
    (F_peak, BW_mem, BW_link), plus *extra* (``N`` -> 12*L*d**2)."""
    names: dict[str, sympy.Expr] = {**CANONICAL, **HARDWARE_SYMBOLS}
    for k, v in (extra or {}).items():
        if k in names:
            raise SymgptError(f"{k!r} is a canonical symbol; it cannot be redefined")
        names[k] = v
    return names


def as_formula(formula, names: Mapping[str, sympy.Expr] | None = None) -> sympy.Expr:
    """*formula* (text, int or SymPy expression) as a SymPy expression over canonical symbols."""
    if isinstance(formula, str):
        return parse_expression(formula, formula_names(names))
    if isinstance(formula, bool):
        raise SymgptError("a formula is text, an integer or a SymPy expression, not a bool")
    if isinstance(formula, int):
        return sympy.Integer(formula)
    if isinstance(formula, sympy.Expr):
        known = set(CANONICAL.values()) | set(HARDWARE_SYMBOLS.values())
        odd = sorted(str(s) for s in formula.free_symbols if s not in known)
        if odd:
            raise SymgptError(f"formula {formula} uses symbols that are not symgpt's: "
                              f"{', '.join(odd)} (import them from symgpt.core.symbols)")
        return formula
    raise SymgptError(f"a formula is text, an integer or a SymPy expression, "
                      f"got {type(formula).__name__}")


@dataclass(frozen=True)
class Comparison:
    """A formula set against a derived quantity; true when they are equal."""

    quantity: Quantity
    formula: sympy.Expr
    text: str = ""          # the formula as the user wrote it
    model: str = ""         # the model's name, for messages

    @property
    def numeric(self) -> bool:
        """A formula without symbols: compared with the value at the configuration."""
        return not self.formula.free_symbols

    @cached_property
    def difference(self) -> sympy.Expr:
        """``formula - derived`` (an expression; a number for a numeric formula)."""
        if self.numeric:
            v = self.quantity.value
            if v is None:
                raise SymgptError(f"formula {self.text or self.formula} is a number, but "
                                  f"{self.quantity.name} is not fully bound at this model")
            return sympy.expand(self.formula - v)
        return sympy.expand(self.formula - self.quantity.expr)

    @property
    def equal(self) -> bool:
        """Identically equal (for a numeric formula: equal to the value)."""
        return self.difference == 0

    @property
    def difference_value(self):
        return evaluate(self.difference, self.quantity.bindings)

    @property
    def equal_at_configuration(self) -> bool | None:
        v = self.difference_value
        return None if v is None else v == 0

    @property
    def relative_error(self):
        """``(formula - derived) / derived`` at the configuration (exact; None if unbound)."""
        return relative_error(self.formula, self.quantity.expr, self.quantity.bindings)

    def within(self, tolerance) -> bool:
        """``|relative error| <= tolerance`` at the configuration (``.within(0.01)``: 1 %)."""
        rel = self.relative_error
        if rel is None:
            raise SymgptError(f"{self.quantity.name} is not fully bound: no relative error "
                              "(bind the sizes, e.g. symgpt.load('gpt2-small'))")
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float, Fraction,
                                                                      sympy.Rational)):
            raise SymgptError(f"a tolerance is a number (0.01 for 1 %), got {tolerance!r}")
        f = Fraction(str(tolerance)) if isinstance(tolerance, float) else Fraction(
            int(sympy.Rational(tolerance).p), int(sympy.Rational(tolerance).q))
        return abs(rel) <= sympy.Rational(f.numerator, f.denominator)

    def __bool__(self) -> bool:
        return self.equal

    def verdict(self) -> str:
        """``equal`` or ``differs by <formula - derived>`` (display form)."""
        return "equal" if self.equal else f"differs by {expr_text(self.difference)}"

    def __repr__(self) -> str:
        shown = self.text or sympy.sstr(self.formula)
        of = f" of {self.model}" if self.model else ""
        head = f"formula {shown!r} vs {self.quantity.name}{of}"
        if self.equal:
            return f"<{head}: equal>"
        extra = ""
        if not self.numeric and self.difference_value is not None:
            extra = f" = {number(self.difference_value)} at the configuration"
        rel = self.relative_error
        if rel is not None:
            extra += f", relative error {float(rel):+.4%}"
        return f"<{head}: formula - derived = {sympy.sstr(self.difference)}{extra}>"

    __str__ = __repr__


def compare(q: Quantity, formula, names: Mapping[str, sympy.Expr] | None = None,
            model: str = "") -> Comparison:
    """*formula* (text over the canonical symbols, or SymPy) set against quantity *q*."""
    if not isinstance(q, Quantity):
        raise SymgptError(f"a formula is compared with a Quantity, got {type(q).__name__}")
    expr = as_formula(formula, names)
    text = formula if isinstance(formula, str) else ""
    return Comparison(q, expr, text, model)


def check_formula(model, quantity: str, formula, *, part=None, per_block: bool = False, roles=None,
                  names: Mapping[str, sympy.Expr] | None = None, **options) -> Comparison:
    """*formula* against *model*'s *quantity* (a model or anything ``symgpt.load`` takes;
    *options* go to the quantity's provider, e.g. ``convention="kaplan", per="token"``)."""
    m = load_model(model)
    q = select(m, quantity, part, per_block, roles=roles, **options)
    return compare(q, formula, names, m.name)


def holds(model, quantity: str, formula, **kwargs) -> Comparison:
    """True (a truthy :class:`Comparison`) when *formula* equals the derived *quantity*::

        assert holds("gpt2", "params", "12*L*d^2 + 13*L*d + V*d + T_max*d + 2*d")
    """
    return check_formula(model, quantity, formula, **kwargs)

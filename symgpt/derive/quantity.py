"""A derived quantity: an exact symbolic total, its breakdown by slash path, and its bindings.

The total is the expanded sum of the breakdown, so the breakdown always sums exactly to it.
Values are exact SymPy numbers (Integer or Rational), ``None`` while a symbol is unbound.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping

import sympy

from ..core.errors import SymgptError


def evaluate(expr, bindings: Mapping[sympy.Symbol, sympy.Integer]):
    """The exact value of *expr* under *bindings*, or None while a free symbol remains."""
    expr = sympy.Integer(expr) if isinstance(expr, int) else expr
    value = expr.xreplace(dict(bindings))  # rebuilding the tree evaluates ceiling, sqrt, ...
    if value.free_symbols or not value.is_number:
        return None
    return value


def is_prefix(prefix: str, path: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


@dataclass(frozen=True)
class Quantity:
    """``name`` (``params``, ``flops.forward``, ...) measured in ``unit``.

    ``breakdown`` is an ordered tuple of (path, expression); paths under ``blocks/`` are totals
    over all layers. ``convention`` names the counting convention that produced it and
    ``notes`` says, in words, what it counts.
    """

    name: str
    breakdown: tuple[tuple[str, sympy.Expr], ...]
    bindings: Mapping[sympy.Symbol, sympy.Integer] = field(default_factory=dict)
    unit: str = ""
    convention: str = ""
    notes: tuple[str, ...] = ()

    @cached_property
    def expr(self) -> sympy.Expr:
        """The exact total, expanded."""
        return sympy.expand(sympy.Add(*[e for _, e in self.breakdown]))

    @property
    def value(self):
        """The exact total at the bindings (Integer or Rational), or None if not fully bound."""
        if "expr" not in self.__dict__:  # not expanded yet: where every entry is a rational number
            b, total = dict(self.bindings), sympy.Integer(0)  # at the bindings, their sum is the total's
            for _, e in self.breakdown:
                v = e.xreplace(b) if isinstance(e, sympy.Basic) else sympy.Integer(e)
                if not v.is_Rational:
                    break
                total += v
            else:
                return total
        return evaluate(self.expr, self.bindings)

    def values(self) -> dict[str, object]:
        """Each breakdown entry's exact value (None where unbound)."""
        return {p: evaluate(e, self.bindings) for p, e in self.breakdown}

    def __getitem__(self, path: str) -> sympy.Expr:
        for p, e in self.breakdown:
            if p == path:
                return e
        raise SymgptError(f"{self.name} has no breakdown entry {path!r}")

    def paths(self) -> list[str]:
        return [p for p, _ in self.breakdown]

    def part(self, prefix: str) -> "Quantity":
        """The sub-quantity of the entries at or under *prefix* (``blocks``, ``embedding``)."""
        kept = tuple((p, e) for p, e in self.breakdown if is_prefix(prefix, p))
        if not kept:
            raise SymgptError(
                f"{self.name} has no part {prefix!r}; parts: {', '.join(self.top_level())}"
            )
        return Quantity(f"{self.name}[{prefix}]", kept, self.bindings, self.unit, self.convention, self.notes)

    def top_level(self) -> list[str]:
        seen: list[str] = []
        for p, _ in self.breakdown:
            head = p.split("/")[0]
            if head not in seen:
                seen.append(head)
        return seen

    def grouped(self, depth: int = 1) -> list[tuple[str, sympy.Expr]]:
        """Breakdown summed to the first *depth* path components, in order."""
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise SymgptError(f"depth must be a positive number of path components, got {depth!r}")
        out: dict[str, sympy.Expr] = {}
        for p, e in self.breakdown:
            key = "/".join(p.split("/")[:depth])
            out[key] = out.get(key, sympy.Integer(0)) + e
        return [(k, sympy.expand(v)) for k, v in out.items()]

    def at(self, /, **values: int) -> "Quantity":
        """The same quantity with more symbols bound (by canonical name)."""
        from ..core.symbols import symbol
        from .checks import positive_int

        b = dict(self.bindings)
        for name, v in values.items():
            b[symbol(name)] = positive_int(name, v)
        return Quantity(self.name, self.breakdown, b, self.unit, self.convention, self.notes)

    def __eq__(self, other) -> bool:
        """``q == 124_439_808`` compares the value; ``q == 12*L*d**2 + ...`` the expression."""
        if isinstance(other, Quantity):
            return sympy.expand(self.expr - other.expr) == 0 and dict(self.bindings) == dict(other.bindings)
        if isinstance(other, bool):
            return NotImplemented
        if isinstance(other, (int, sympy.Integer, sympy.Rational)) and not isinstance(other, sympy.Symbol):
            return self.value is not None and self.value == other
        if isinstance(other, sympy.Expr):
            return sympy.expand(self.expr - other) == 0
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.name, self.expr))

    def __int__(self) -> int:
        v = self.value
        if v is None or not v.is_Integer:
            raise SymgptError(f"{self.name} has no integer value (value: {v})")
        return int(v)

    def __repr__(self) -> str:
        v = self.value
        shown = "" if v is None else f" = {v}"
        return f"<{self.name}: {self.expr}{shown}>"

    def _repr_latex_(self) -> str:
        """Rendered math in notebooks: the expression in the default notation and, when bound,
        its exact value (``... = 124{,}439{,}808``)."""
        from ..core.notation import notation
        from ..core.numtext import group

        nota = notation()
        body = nota.latex(self.expr)
        v = self.value
        if v is not None:
            body += " = " + (group(int(v)) if v.is_Integer else nota.latex(v))
        return f"$\\displaystyle {body}$"

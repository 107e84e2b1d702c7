"""The library of published formulas, each with its source and convention, checked against the
derivations (``symgpt check``; ``check_library()`` in Python).

Every entry is data: the formula as its source writes it, mapped onto symgpt's canonical symbols
(the N blocks -> L, its context L -> T_max; Megatron's l, h, s -> L, d, T_max or T), the
model and flags it describes, the quantity and the provider options (the counting convention)
it is to be compared under, and what the source itself says the comparison should give:
``expect="equal"``, or the documented discrepancy ``formula - derived`` (Megatron's P omits the
final LayerNorm: ``-2*d``). An entry with a ``regime`` states a *rule*: it is compared with the
leading-order form of the quantity in that regime instead of the quantity itself.

Formulas are parsed by the safe parser like anyone else's.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError, short
from ..core.exprparse import parse_expression
from .compare import Comparison, compare
from .formula import Formula
from .published import LIBRARY
from .rules import rule
from .selection import load_model, select


@dataclass(frozen=True)
class Checked:
    formula: Formula
    comparison: Comparison | None   # None when the quantity is not available
    error: str = ""

    @property
    def verdict(self) -> str:
        if self.comparison is None:
            return f"not checked: {self.error}"
        return self.comparison.verdict()

    def __repr__(self) -> str:
        """The formula, its expression and the verdict (the comparison is ``comparison``)."""
        return f"<{self.formula.name}: {self.formula.expression} -- {self.verdict}>"

    @property
    def expected_difference(self) -> sympy.Expr | None:
        """The documented ``formula - derived`` (0 for "equal"; None when none is documented)."""
        f = self.formula
        if not f.expect:
            return None
        return sympy.Integer(0) if f.expect == "equal" else parse_expression(f.expect)

    @property
    def as_expected(self) -> bool | None:
        """True when the verdict is what the source documents (None when not checked, or when
        the source documents no exact verdict)."""
        if self.comparison is None or self.expected_difference is None:
            return None
        return sympy.expand(self.comparison.difference - self.expected_difference) == 0


def _names(f: Formula) -> dict[str, sympy.Expr]:
    return {k: parse_expression(v) for k, v in f.names.items()}


def check(f: Formula) -> Checked:
    """Run one library entry; a quantity that is not (yet) derivable is reported, not raised."""
    try:
        m = load_model(f.model, **dict(f.settings))
        q = select(m, f.quantity, f.part, f.per_block, roles=f.roles, **dict(f.options))
    except SymgptError as e:
        return Checked(f, None, str(e))
    if f.regime:
        r = rule(q, f.regime)
        q = type(q)(f"{q.name} as {r.regime.describe()}", (("rule", r.rule),), q.bindings,
                    q.unit, q.convention, q.notes)
    return Checked(f, compare(q, f.expression, _names(f), m.name))


def check_library(formulas=None, match: str | None = None) -> list[Checked]:
    """Check every library entry (or those whose name, source or quantity contains *match*)."""
    rows = LIBRARY if formulas is None else formulas
    if match:
        low = match.lower()
        rows = [f for f in rows if low in f.name.lower() or low in f.source.lower()
                or low in f.quantity.lower()]
        if not rows:
            raise SymgptError(f"no library formula matches {short(match)}")
    return [check(f) for f in rows]


def formula(name: str) -> Formula:
    """The library entry called *name*."""
    for f in LIBRARY:
        if f.name == name:
            return f
    raise SymgptError(f"no library formula {short(name)}; known: {', '.join(f.name for f in LIBRARY)}")

"""Rules: the leading-order form of a derived quantity under a regime, and its error.

>>> import symgpt
>>> from symgpt.query import rule
>>> r = rule(symgpt.load("gpt2-small").params, "d")      # d -> oo, L, V, T_max fixed
>>> r.rule
12*L*d**2
>>> r = rule(symgpt.load("gpt2-small").params, ["d", "V"])  # d, V -> oo together (V ∝ d)
>>> r.rule
12*L*d**2 + V*d

The *relative error* of an estimate is ``(estimate - exact) / exact`` at the configuration:
signed (negative when the estimate is low), exact (a Rational), None while a symbol is unbound.

Which regime gives which textbook rule (GPT-2 family, default conventions):

* ``12Ld²`` — ``params`` as ``d → ∞`` (L, V, T_max fixed); the stack of layers alone
  (``roles=[roles.STACK]``) gives it too.
* ``Vd + 12Ld²`` — ``params`` as ``d, V → ∞`` together with ``V ∝ d`` (L, T_max fixed): the
  only regimes that keep both terms are those in which ``V / (L·d)`` tends to a constant; with
  L fixed that is ``V ∝ d`` (``d, L, V:2``, i.e. L ∝ d and V ∝ d², is another).
* ``24Td² + 4T²d`` per block — forward FLOPs per sequence of one block as ``d, T → ∞``
  together (``T ∝ d``): ``roles=[roles.STACK], per_block_=True``.
* ``2N + 2LTd`` — forward FLOPs per token under Kaplan's convention, with ``N = 12Ld²``.
* ``6N`` — training FLOPs per token as ``d → ∞`` (T fixed) under Kaplan's convention.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from ..derive.quantity import Quantity, evaluate
from .regime import Regime, far_side, order, regime_of, step_notes


def relative_error(estimate: sympy.Expr, exact: sympy.Expr, bindings):
    """``(estimate - exact) / exact`` at *bindings*, exact; None while unbound or exact is 0."""
    e, x = evaluate(estimate, bindings), evaluate(exact, bindings)
    if e is None or x is None or x == 0:
        return None
    return sympy.simplify((e - x) / x)


def rewrite(expr: sympy.Expr, name: str, definition: sympy.Expr) -> sympy.Expr:
    """*expr* with as many copies of *definition* as its leading monomial allows replaced by
    the symbol *name*: ``rewrite(72*L*d**2 + 6*L*T*d, "N", 12*L*d**2)`` -> ``6*N + 6*L*T*d``.

    The result equals *expr* once *name* is replaced by *definition* (checked)."""
    expr, definition = sympy.expand(expr), sympy.expand(definition)
    if definition == 0 or not definition.free_symbols:
        raise SymgptError(f"cannot rewrite in terms of {name} = {definition}: "
                          "it must be a non-zero expression over the symbols")
    terms = definition.as_coefficients_dict()
    key = max(terms, key=lambda m: (sympy.Poly(m, *sorted(definition.free_symbols, key=str))
                                    .total_degree(), str(m)))
    ours = expr.as_coefficients_dict()
    if key not in ours:
        return expr
    factor = ours[key] / terms[key]
    n = sympy.Symbol(name, positive=True)
    out = factor * n + sympy.expand(expr - factor * definition)
    if sympy.expand(out.xreplace({n: definition}) - expr) != 0:  # pragma: no cover (a bug)
        raise SymgptError(f"internal error rewriting {expr} in terms of {name}")
    return out


@dataclass(frozen=True)
class Rule:
    """The leading-order form of ``quantity`` under ``regime``."""

    quantity: Quantity
    regime: Regime
    rule: sympy.Expr
    order: sympy.Rational | None
    notes: tuple[str, ...] = ()

    @property
    def exact(self) -> sympy.Expr:
        return self.quantity.expr

    @property
    def rule_value(self):
        return evaluate(self.rule, self.quantity.bindings)

    @property
    def exact_value(self):
        return self.quantity.value

    @property
    def relative_error(self):
        """``(rule - exact) / exact`` at the configuration (exact Rational; None if unbound)."""
        return relative_error(self.rule, self.exact, self.quantity.bindings)

    @property
    def correction(self) -> sympy.Expr:
        """``exact - rule``: the terms the rule drops."""
        return sympy.expand(self.exact - self.rule)

    def in_terms_of(self, name: str, definition: sympy.Expr) -> sympy.Expr:
        """The rule written with *name* for *definition* (``6*N`` for ``72*L*d**2``)."""
        return rewrite(self.rule, name, definition)

    def __repr__(self) -> str:
        return f"<rule of {self.quantity.name} as {self.regime.describe()}: {self.rule}>"


def rule(q: Quantity, regime) -> Rule:
    """The leading-order form of *q* under *regime* (a Regime, ``"d"``, ``["d", "V"]``,
    ``"d,L,V:2"``, or a Symbol)."""
    if not isinstance(q, Quantity):
        raise SymgptError(f"a rule is taken of a Quantity, got {type(q).__name__}")
    reg = regime_of(regime)
    far = far_side(q, reg)  # a roofline's max(...) is its larger side far out; q itself stays exact
    o, form = order(far.expr, reg)
    extra = far.notes[len(q.notes):]
    return Rule(q, reg, form, o, tuple(step_notes(far.expr, reg)) + tuple(extra))

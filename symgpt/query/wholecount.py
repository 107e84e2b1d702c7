"""A crossover in a symbol that counts whole things (images per sequence ``N_img``, audio clips,
a batch ``B``, layers): the answer is a fraction, the count that first crosses is a whole number.

``first_whole(c)`` is that number -- the least integer above the crossover at which the part that
overtakes is ahead, checked at it and at the integer before -- as a note for the answer.
"""

from __future__ import annotations

import sympy

from ..derive.quantity import evaluate


def first_whole(c) -> str | None:
    """A note naming the first whole value of *c*'s symbol at which ``c.fast`` exceeds ``c.slow``
    (a crossover whose symbol is an integer and whose value is not); None otherwise."""
    s, v = c.symbol, c.value
    if not s.is_integer or v is None or not v.is_Rational or v.is_Integer or v < 0:
        return None
    n = sympy.ceiling(v)
    b = {k: x for k, x in c.quantity.bindings.items() if k != s}

    def ahead(k):
        return evaluate(sympy.expand(c.fast - c.slow), {**b, s: sympy.Integer(k)})

    at, before = ahead(n), ahead(n - 1)
    if at is None or before is None or not (at > 0 >= before):
        return None
    return (f"{s} counts whole units: {c.fast_label} exceeds {c.slow_label} from {s} = {n} on "
            f"(at {s} = {n - 1} it does not)")

"""Rendered math for notebooks (``_repr_latex_``): the expression and, when bound, its value."""

from __future__ import annotations

import sympy


def quantity_latex(q) -> str:
    body = sympy.latex(q.expr)
    v = q.value
    if v is not None:
        body += " = " + sympy.latex(v)
    return f"$\\displaystyle {body}$"

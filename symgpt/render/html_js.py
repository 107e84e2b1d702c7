"""SymPy expressions printed as JavaScript that evaluates them exactly, and as MathML.

The JavaScript is a small printer over the expression tree (``js_expr``): every number becomes
an exact rational of two BigInts and every operation a call into the page's rational arithmetic
(``templates/page.js``): ``A`` adds, ``M`` multiplies, ``P`` raises to an integer power, ``Q``
makes a rational, ``C``/``F`` take the ceiling/floor, ``N``/``X`` the min/max. A symbol ``d``
reads ``s.d``, the page's current (exact) value of that input. No floating point is involved,
so the page prints the digits the command line prints, far past 2⁵³.

>>> from symgpt.core.symbols import L, d
>>> js_expr(12*L*d**2 + d/7)
'A(M(Q(1n,7n),s.d),M(Q(12n),s.L,P(s.d,2)))'

MathML is SymPy's presentation printer's markup (``mathml_expr``; written by ``symgpt.render.mathml``,
which reproduces it byte for byte, faster), wrapped in ``<math>``.
"""

from __future__ import annotations

import re

import sympy

from ..core.errors import SymgptError
from ..core.symbols import as_expr
from .mathml import presentation

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def js_expr(expr) -> str:
    """The JavaScript source of *expr* (a SymPy expression derived by symgpt, never user text)."""
    return _js(as_expr(expr))


def _js(e) -> str:
    if e.is_Integer:
        return f"Q({int(e)}n)"
    if e.is_Rational:
        return f"Q({int(e.p)}n,{int(e.q)}n)"
    if e.is_Symbol:
        if not _NAME.match(e.name):
            raise SymgptError(f"cannot compile the symbol {e.name!r} to JavaScript")
        return f"s.{e.name}"
    if e.is_Add:
        return "A(" + ",".join(_js(a) for a in _ordered(e.args)) + ")"
    if e.is_Mul:
        return "M(" + ",".join(_js(a) for a in _ordered(e.args)) + ")"
    if e.is_Pow and e.exp.is_Integer:
        return f"P({_js(e.base)},{int(e.exp)})"
    calls = {sympy.ceiling: "C", sympy.floor: "F", sympy.Min: "N", sympy.Max: "X"}
    for fn, name in calls.items():
        if isinstance(e, fn):
            return f"{name}(" + ",".join(_js(a) for a in _ordered(e.args)) + ")"
    raise SymgptError(f"cannot compile {e} to exact JavaScript ({type(e).__name__} is not supported)")


def _ordered(args):
    """Arguments in a fixed order (SymPy's sort key), so the output is deterministic."""
    return sorted(args, key=sympy.default_sort_key)


def mathml_expr(expr) -> str:
    """Presentation MathML of *expr* (terms in graded order, products with a centred dot)."""
    return f'<math display="inline">{presentation(as_expr(expr))}</math>'

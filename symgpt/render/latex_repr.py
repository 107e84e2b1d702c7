"""Rendered math for notebooks (``_repr_latex_``): the expression in the default notation and,
when bound, its exact value (``124{,}439{,}808``)."""

from __future__ import annotations


def quantity_latex(q, notation=None) -> str:
    from ..notation import notation as get_notation
    from .latex import tex_expr
    from .latex_numbers import tex_int

    nota = get_notation(notation)
    body = tex_expr(q.expr, nota)
    v = q.value
    if v is not None:
        body += " = " + tex_int(v)
    return f"$\\displaystyle {body}$"

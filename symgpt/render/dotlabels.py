"""Text and colour for diagrams: HTML-label escaping, numbers, shapes, the colour scale, legend.

Every label of the DOT output is a Graphviz HTML-like label built here, and every piece of
text that reaches one goes through :func:`esc`, so a model called ``a&b<c>"{|}\\N`` prints as
itself in the DOT, the SVG and the PNG.
"""

from __future__ import annotations

import re

import sympy

from ..core.errors import SymgptError, visible
from .markup import xml_escape
from .text import expr_text, number

FONT = "Helvetica"
#: sequential palette (ColorBrewer YlOrRd, 9 classes) and the upper share bound of each class
PALETTE = ("#ffffff", "#fff7bc", "#fee391", "#fec44f", "#fe9929",
           "#ec7014", "#cc4c02", "#993404", "#662506")
BOUNDS = (sympy.Integer(0), sympy.Rational(1, 200), sympy.Rational(1, 100), sympy.Rational(2, 100),
          sympy.Rational(5, 100), sympy.Rational(10, 100), sympy.Rational(20, 100),
          sympy.Rational(40, 100), sympy.Integer(1))
#: classes from this one on are dark: their text is white
DARK_FROM = 7

QUANTITY_TITLES = {"params": "parameters", "flops": "forward FLOPs", "memory": "activation memory"}


def esc(text) -> str:
    """User text for an HTML-like label: XML specials escaped, line breaks as ``<BR/>``.

    Braces, bars and backslashes need no escape inside HTML labels (Graphviz reads them
    literally there), and double quotes are escaped so the text may also sit in an attribute. Control
    characters (invalid in the SVG's XML) are shown as escapes (``\\x1b``).
    """
    s = xml_escape(visible(str(text)))
    lines = s.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return '<BR ALIGN="CENTER"/>'.join(" ".join(line.split()) or " " for line in lines)


def value_text(v) -> str:
    """An exact value with separators; an unevaluated expression in display form, its long
    integers grouped too (``788,594,688·B·T``)."""
    if isinstance(v, sympy.Basic) and not v.is_number:
        return re.sub(r"(?<![\w.])\d{5,}(?![\w.])", lambda m: f"{int(m.group(0)):,}", pretty(expr_text(v)))
    return number(v)


def pretty(text: str) -> str:
    """Display text without SymPy's spelling: ``sqrt(2)/16`` -> ``√2/16``."""
    text = re.sub(r"sqrt\((\w+)\)", "√\\1", text)
    return text.replace("sqrt(", "√(")


def dim_text(x) -> str:
    """One dimension: ``2304`` (no separators inside a shape), ``3·d``."""
    return str(int(x)) if getattr(x, "is_Integer", False) else expr_text(x)


def shape_text(shape) -> str:
    """``(B, T, 2304)``; a one-dimensional shape keeps its comma: ``(2304,)``."""
    dims = [dim_text(x) for x in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def matrix_text(shape) -> str:
    """A parameter's shape, ``768×2304``."""
    return "×".join(dim_text(x) for x in shape) or "1"


def percent(share) -> str:
    """An exact share as a percentage for reading (one decimal; ``<0.1 %`` for tiny ones)."""
    if share == 0:
        return "0 %"
    if share < sympy.Rational(1, 1000):
        return "&lt;0.1 %"
    return f"{100 * float(share):.1f} %"


def color_class(share) -> int:
    """The palette class (0..8) of an exact share in [0, 1]."""
    if share is None or share <= 0:
        return 0
    for i, bound in enumerate(BOUNDS[1:], 1):
        if share <= bound:
            return i
    return len(PALETTE) - 1


def legend_rows(color_by: str, total, shares_known: bool, unbound=(), views=True, tied=True) -> list[str]:
    """HTML table rows: what the colours mean (or which sizes they wait for), and the styles."""
    rows = []
    if color_by != "none" and not shares_known:
        need = f"set {', '.join(unbound)}" if unbound else "bind every size"
        rows.append(f'<TR><TD COLSPAN="8"><FONT POINT-SIZE="11">not coloured: shares of '
                    f"{esc(QUANTITY_TITLES[color_by])} need numbers ({esc(need)} with --set)</FONT></TD></TR>")
    elif color_by != "none":
        rows.append(f'<TR><TD COLSPAN="8"><FONT POINT-SIZE="11">colour: share of {esc(QUANTITY_TITLES[color_by])} '
                    f"(total {esc(value_text(total))})</FONT></TD></TR>")
        cells = []
        for i in range(1, len(PALETTE)):
            lo, hi = BOUNDS[i - 1], BOUNDS[i]
            text = f"≤ {_pct(hi)}" if i < len(PALETTE) - 1 else f"&gt; {_pct(lo)}"
            font = ' COLOR="white"' if i >= DARK_FROM else ""
            cells.append(f'<TD BGCOLOR="{PALETTE[i]}" BORDER="1" CELLPADDING="3" WIDTH="64">'
                         f'<FONT POINT-SIZE="10"{font}>{text}</FONT></TD>')
        rows.append("<TR>" + "".join(cells) + "</TR>")
    styles = ["arrows: tensors with their shapes"]
    styles += ["dashed box: a view (no arithmetic)"] if views else []
    styles += ["dashed arrow: one matrix shared by two ops"] if tied else []
    rows.append('<TR><TD COLSPAN="8"><FONT POINT-SIZE="10" COLOR="#555555">'
                + " · ".join(styles) + "</FONT></TD></TR>")
    return rows


def _pct(r) -> str:
    v = 100 * r
    return (f"{int(v)} %" if v.is_Integer else f"{float(v):g} %")


def op_text(op, bindings) -> str:
    """The op's own description with bound sizes substituted (``Linear 768 → 2304``)."""
    import dataclasses

    if dataclasses.is_dataclass(op) and bindings:
        changes = {f.name: getattr(op, f.name).xreplace(bindings) for f in dataclasses.fields(op)
                   if isinstance(getattr(op, f.name), sympy.Basic)}
        try:
            op = dataclasses.replace(op, **changes)
        except (SymgptError, TypeError, ValueError):  # checks reject it: keep the symbols
            pass
    s = op.describe().replace("->", " → ").replace("**2", "²").replace("*", "·")
    return pretty(" ".join(s.split()))

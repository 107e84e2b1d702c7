"""The LaTeX printer: expressions in a notation profile, and the jinja2 templates that lay out
what the derivations computed.

Templates (``templates/*.tex``) use LaTeX-friendly delimiters: ``\\VAR{x}`` prints a value,
``\\BLOCK{for ...}`` is a statement, ``%# ...`` a comment. They never compute: the Python side
(``symgpt.documents.latex_sections``, ...) prepares every number and formula as a finished
string. Any value that is not a :class:`Tex` string (already LaTeX) is escaped as text when
printed, so user text (model names, file names) can never inject LaTeX.
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jinja2
import sympy

from ..core.symbols import as_expr

from ..core.errors import SymgptError
from .latex_escape import tex_escape


class Tex(str):
    """A string that is already LaTeX (printed as is by the templates)."""

    __slots__ = ()


def tex(s: str) -> Tex:
    return Tex(s)


def template_dir() -> Path:
    """The LaTeX templates: ``SYMGPT_TEMPLATES`` if set; else the copy an installed wheel carries
    (``symgpt/templates``, package data); else ``templates/`` at the top of the checkout (a
    source tree or an editable install)."""
    env = os.environ.get("SYMGPT_TEMPLATES")
    if env:
        return Path(env)
    packaged = resources.files("symgpt").joinpath("templates")
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged
    here = Path(__file__).resolve().parents[2] / "templates"
    if not here.is_dir():
        raise SymgptError(f"the LaTeX templates are missing ({here}); set SYMGPT_TEMPLATES")
    return here


def _finalize(value):
    if isinstance(value, Tex):
        return value
    if value is None:
        return "--"
    return tex_escape(value)


def _tt(value) -> Tex:
    """``\\VAR{model|tt}``: user text in typewriter type, every character as typed."""
    from .latex_escape import tex_texttt

    return Tex(tex_texttt(value))


@lru_cache(maxsize=4)
def environment(folder: str | None = None) -> jinja2.Environment:
    env = _environment(folder)
    env.filters["tt"] = _tt
    return env


def _environment(folder: str | None) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder or str(template_dir())),
        block_start_string=r"\BLOCK{", block_end_string="}",
        variable_start_string=r"\VAR{", variable_end_string="}",
        comment_start_string=r"\#{", comment_end_string="}",
        line_comment_prefix="%#",
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        autoescape=False, undefined=jinja2.StrictUndefined, finalize=_finalize,
    )


def render(template: str, **context) -> str:
    """Render ``templates/<template>`` with *context*; the output ends in one newline."""
    text = environment().get_template(template).render(**context)
    lines = [line.rstrip() for line in text.splitlines()]
    out, blank = [], False
    for line in lines:  # collapse runs of blank lines left by template logic
        if not line:
            if blank:
                continue
            blank = True
        else:
            blank = False
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"


# --- expressions ------------------------------------------------------------------------------

def preamble() -> str:
    """The LaTeX preamble every fragment and table needs (``templates/preamble.tex``)."""
    return render("preamble.tex")


def tex_expr(expr, notation) -> Tex:
    """*expr* as LaTeX math in *notation* (highest degree first, ``12 L d^{2} + ...``)."""
    return Tex(notation.latex(expr))


def tex_shape(shape, notation) -> Tex:
    """``(B, T, 3 d)``; a vector ``(d,)``; a scalar ``()``; fractions inline (``d / h``)."""
    items = [Tex(sympy.latex(as_expr(s), symbol_names=notation.symbol_names, order="lex",
                             fold_short_frac=True)) for s in shape]
    if len(items) == 1:
        return Tex(f"({items[0]},)")
    return Tex("(" + ", ".join(items) + ")")


def tex_concrete_shape(shape) -> Tex:
    """A concrete shape, digits grouped: ``(8, 1{,}024, 50{,}257)``."""
    from .latex_numbers import tex_int

    items = [tex_int(s) if getattr(s, "is_number", True) else sympy.latex(s) for s in shape]
    if len(items) == 1:
        return Tex(f"({items[0]},)")
    return Tex("(" + ", ".join(items) + ")")


def tex_product(factor, expr, notation) -> Tex:
    """``L \\left(12 d^{2} + 13 d\\right)``: a factor times a sum, not multiplied out."""
    return Tex(f"{tex_expr(factor, notation)} \\left({tex_expr(expr, notation)}\\right)")

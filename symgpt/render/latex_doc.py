"""LaTeX fragments and standalone documents of a model, section by section.

>>> from symgpt.render.latex_doc import fragment, document
>>> tex = fragment(symgpt.load("gpt2-small"), "blocks", notation="raschka")

A *section* is a name (``blocks``, ``shapes``, ...), a context builder (``latex_sections``,
``latex_costs``) and one or more templates. ``fragment`` renders one section for ``\\input``;
``document`` wraps sections in a standalone article that compiles with pdflatex.
"""

from __future__ import annotations

import importlib
import weakref
import re

from ..errors import SymgptError
from ..notation import notation as get_notation
from .latex import Tex, environment, render

#: section name -> (context module, function, templates, title of the section in a document)
SECTIONS = {
    "notation": ("latex_sections", "header", ("notation.tex",), None),
    "shapes": ("latex_sections", "shapes", ("shapes.tex",), "The shape of every tensor"),
    "steps": ("latex_steps", "steps", ("steps.tex",), "The forward pass, step by step"),
    "blocks": ("latex_sections", "blocks", ("blocks.tex",), "Parameters of one block"),
    "embeddings": ("latex_sections", "embeddings", ("embeddings.tex",), "Embeddings, final norm and head"),
    "total": ("latex_sections", "total", ("total.tex",), "The total"),
    "rule": ("latex_costs", "rule", ("rule.tex",), "Cross-check against a rule of thumb"),
    "breakdown": ("latex_sections", "breakdown", ("breakdown.tex", "fig_breakdown.tex"), "Where the parameters are"),
    "flops": ("latex_costs", "flops", ("flops.tex", "fig_flops.tex"), "FLOPs of a forward and a training step"),
    "memory": ("latex_costs", "memory", ("memory.tex",), "Training memory"),
    "scaling": ("tables", "family_scaling", ("scaling.tex",), "The same recipe at other sizes"),
    "selftest": ("latex_selftest", "selftest", ("selftest.tex",), "Answers to the self-test"),
}
#: names that stand for several sections
ALIASES = {
    "params": ("blocks", "embeddings", "total"),
    "all": ("notation", "shapes", "blocks", "embeddings", "total", "rule", "breakdown", "flops",
            "memory", "scaling", "selftest"),
}
WHATS = (*SECTIONS, *ALIASES)


def label_key(name: str) -> str:
    """A LaTeX-label-safe key for a model name (``my_model&v2`` -> ``mymodelv2``)."""
    return re.sub(r"[^A-Za-z0-9]", "", str(name))[:40] or "model"


def expand(whats) -> list[str]:
    """Section names for ``--what`` values (aliases expanded, order kept, no duplicates)."""
    out: list[str] = []
    for w in ([whats] if isinstance(whats, str) else whats):
        if w not in SECTIONS and w not in ALIASES:
            raise SymgptError(f"unknown --what {w!r}; choose from {', '.join(WHATS)}")
        for s in ALIASES.get(w, (w,)):
            if s not in out:
                out.append(s)
    return out


def available(name: str, model) -> bool:
    """Whether a section can be rendered now (its derivations are installed)."""
    try:
        context(name, model, get_notation())
    except _Unavailable:
        return False
    return True


class _Unavailable(SymgptError):
    """A section whose derivation (flops, memory, queries) is not available."""


_CONTEXTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def context(name: str, model, notation, placement: str = "htbp", **options) -> dict:
    """The template context of section *name* (cached per model: a report asks many times)."""
    try:
        nkey = (notation.name, tuple(sorted(notation.symbols.items())),
                tuple(sorted(notation.quantities.items())))
        key = (name, nkey, placement, tuple(sorted(options.items())))
        hash(key)
    except (TypeError, AttributeError):
        return _context(name, model, notation, placement, **options)
    per_model = _CONTEXTS.setdefault(model, {})
    if key not in per_model:
        per_model[key] = (notation, _context(name, model, notation, placement, **options))
    return dict(per_model[key][1])


def _context(name: str, model, notation, placement: str = "htbp", **options) -> dict:
    mod, fn, _, _ = SECTIONS[name]
    try:
        module = importlib.import_module(f"{__package__}.{mod}")
    except ModuleNotFoundError as e:
        if e.name == f"{__package__}.{mod}":
            raise _Unavailable(f"the {name} section is not available yet") from None
        raise
    try:
        ctx = getattr(module, fn)(model, notation, **options)
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("symgpt."):
            raise _Unavailable(f"the {name} section needs {e.name}, which is not available yet") from None
        raise
    ctx.setdefault("key", label_key(model.name))
    ctx["placement"] = Tex(placement)
    ctx.setdefault("label", Tex(f"tab:symgpt-{ctx['key']}-{name}"))
    return ctx


def fragment(model, what, notation=None, **options) -> str:
    """The LaTeX of the sections in *what* (a name or a list), ready to ``\\input``."""
    nota = get_notation(notation)
    parts = []
    for name in expand(what):
        ctx = context(name, model, nota, **options.get(name, {}))
        parts += [render(t, **ctx) for t in SECTIONS[name][2]]
    return "\n".join(parts)


def preamble() -> str:
    return render("preamble.tex")


def document(model, what="all", notation=None, title: str | None = None, skip_unavailable=True,
             **options) -> str:
    """A standalone ``article`` with the sections in *what*; sections whose derivations are
    not installed yet are left out when *skip_unavailable*."""
    nota = get_notation(notation)
    intros = environment().get_template("intros.tex").module
    sections = []
    for name in expand(what):
        try:
            ctx = context(name, model, nota, placement="H", **options.get(name, {}))
        except _Unavailable:
            if skip_unavailable:
                continue
            raise
        body = "\n".join(render(t, **ctx) for t in SECTIONS[name][2])
        intro = getattr(intros, name, None)
        sections.append({"name": name, "title": SECTIONS[name][3],
                         "intro": Tex(str(intro(ctx)).strip()) if intro else None, "body": Tex(body)})
    if not sections:
        raise SymgptError("nothing to typeset: none of the requested sections is available")
    from .latex_escape import tex_escape, tex_texttt

    shown = Tex(tex_escape(title)) if title else Tex(tex_texttt(model.name) + ": parameters, shapes and costs")
    return render("document.tex", title=shown,
                  model=model.name, sections=sections, preamble=Tex(preamble()))


class Rendered(str):
    """LaTeX that Jupyter renders as math (``_repr_latex_``); it is still a ``str``."""

    def _repr_latex_(self) -> str:
        return "\n".join(line for line in self.splitlines() if not line.lstrip().startswith("%"))


def derivation(model, notation=None) -> Rendered:
    """The grand-total derivation (``align*``), shown as math in a notebook::

        symgpt.render.latex_doc.derivation(symgpt.load("gpt2-small"), "raschka")
    """
    return Rendered(fragment(model, "total", notation))

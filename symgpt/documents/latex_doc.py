"""LaTeX fragments and standalone documents of a model, section by section.

>>> from symgpt.documents.latex_doc import fragment, document
>>> tex = fragment(symgpt.load("gpt2-small"), "blocks", notation="raschka")

A *section* is a name (``blocks``, ``shapes``, ...), a context builder (a function of
``latex_sections``, ``latex_steps``, ``latex_costs``, ...) and one or more
templates. ``fragment`` renders one section for ``\\input``; ``document`` wraps sections in a
standalone article that compiles with pdflatex.
"""

from __future__ import annotations

import weakref
from functools import lru_cache
from typing import Callable, NamedTuple

from ..core.errors import SymgptError
from ..core.notation import notation as get_notation
from ..render.latex import Tex, environment, preamble, render
from ..render.latex_escape import label_key, tex_escape, tex_texttt
from . import (latex_cluster, latex_costs, latex_finetune, latex_images, latex_sections, latex_selftest,
               latex_serving, latex_state, latex_steps, tables)


class Section(NamedTuple):
    build: Callable      # (model, notation, **options) -> the templates' context
    templates: tuple     # template names, rendered in order
    title: str | None    # the section's title in a standalone document
    applies: Callable | None = None   # (model) -> whether "all" includes it (None: always)


#: section name -> its context builder, templates and title (an explicit table: a missing builder
#: is an ImportError when this module is imported)
SECTIONS = {
    "notation": Section(latex_sections.header, ("notation.tex",), None),
    "shapes": Section(latex_sections.shapes, ("shapes.tex",), "The shape of every tensor"),
    "steps": Section(latex_steps.steps, ("steps.tex",), "The forward pass, step by step"),
    "blocks": Section(latex_sections.blocks, ("blocks.tex",), "Parameters of one block"),
    "embeddings": Section(latex_sections.embeddings, ("embeddings.tex",), "Embeddings, final norm and head"),
    "total": Section(latex_sections.total, ("total.tex",), "The total"),
    "rule": Section(latex_costs.rule, ("rule.tex",), "Cross-check against a rule of thumb"),
    "breakdown": Section(latex_sections.breakdown, ("breakdown.tex", "fig_breakdown.tex"), "Where the parameters are"),
    "flops": Section(latex_costs.flops, ("flops.tex", "fig_flops.tex"), "FLOPs of a forward and a training step"),
    "memory": Section(latex_costs.memory, ("memory.tex",), "Training memory"),
    # fine-tuning: full against LoRA and QLoRA of the same model
    "finetune": Section(latex_finetune.finetune, ("finetune.tex",), "Fine-tuning: full, LoRA and QLoRA"),
    "cluster": Section(latex_cluster.cluster, ("cluster.tex",), "Training on a cluster"),
    # serving on one hardware profile (paged KV capacity, decode throughput, speculative decoding)
    "serving": Section(latex_serving.serving, ("serving.tex",), "Serving"),
    # a model with recurrent layers: its fixed-size state against the KV cache
    "state": Section(latex_state.state, ("state.tex",), "Recurrent state against the KV cache", latex_state.applies),
    "scaling": Section(tables.family_scaling, ("scaling.tex",), "The same recipe at other sizes"),
    "selftest": Section(latex_selftest.selftest, ("selftest.tex",), "Answers to the self-test"),
    # a vision--language model whose images are priced: the tokens and FLOPs of one image
    "images": Section(latex_images.images, ("images.tex",), "What an image costs", latex_images.applies),
}
#: names that stand for several sections
ALIASES = {
    "params": ("blocks", "embeddings", "total"),
    "all": ("notation", "shapes", "blocks", "embeddings", "total", "rule", "breakdown", "flops",
            "memory", "finetune", "cluster", "serving", "state", "images", "scaling", "selftest"),
}
WHATS = (*SECTIONS, *ALIASES)


def expand(whats, model=None) -> list[str]:
    """Section names for ``--what`` values (aliases expanded, order kept, no duplicates); given
    *model*, an alias leaves out the sections that do not apply to it (``Section.applies``)."""
    out: list[str] = []
    for w in ([whats] if isinstance(whats, str) else whats):
        if w not in SECTIONS and w not in ALIASES:
            raise SymgptError(f"unknown --what {w!r}; choose from {', '.join(WHATS)}")
        for s in ALIASES.get(w, (w,)):
            if s in out:
                continue
            if w in ALIASES and model is not None and SECTIONS[s].applies is not None and not SECTIONS[s].applies(model):
                continue
            out.append(s)
    return out


_CONTEXTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def context(name: str, model, notation, placement: str = "htbp", **options) -> dict:
    """The template context of section *name*, computed once per model, notation and options
    (a report asks for each section twice: in the document and as a fragment; only the
    placement differs)."""
    try:
        nkey = (notation.name, tuple(sorted(notation.symbols.items())),
                tuple(sorted(notation.quantities.items())))
        key = (name, nkey, tuple(sorted(options.items())))
        hash(key)
    except (TypeError, AttributeError):
        return _placed(_context(name, model, notation, **options), placement)
    per_model = _CONTEXTS.setdefault(model, {})
    if key not in per_model:
        per_model[key] = (notation, _context(name, model, notation, **options))
    return _placed(per_model[key][1], placement)


def _context(name: str, model, notation, **options) -> dict:
    ctx = SECTIONS[name].build(model, notation, **options)
    ctx.setdefault("key", label_key(model.name))
    ctx.setdefault("label", Tex(f"tab:symgpt-{ctx['key']}-{name}"))
    return ctx


def _placed(ctx: dict, placement: str) -> dict:
    return {**ctx, "placement": Tex(placement)}


def fragment(model, what, notation=None, **options) -> str:
    """The LaTeX of the sections in *what* (a name or a list), ready to ``\\input``."""
    nota = get_notation(notation)
    parts = []
    for name in expand(what, model):
        ctx = context(name, model, nota, **options.get(name, {}))
        parts += [render(t, **ctx) for t in SECTIONS[name].templates]
    return "\n".join(parts)


def document(model, what="all", notation=None, title: str | None = None, progress=None, **options) -> str:
    """A standalone ``article`` with the sections in *what*. *progress*, if given, is called as
    each section is done with ``(prefix, widths_complete)``: the document so far (the final one
    starts with it) and whether no longtable can follow (a PDF build streams it to TeX)."""
    nota = get_notation(notation)
    intros = environment().get_template("intros.tex").module
    names, sections = expand(what, model), []
    for i, name in enumerate(names):
        ctx = context(name, model, nota, placement="H", **options.get(name, {}))
        body = "\n".join(render(t, **ctx) for t in SECTIONS[name].templates)
        intro = getattr(intros, name, None)
        sections.append({"name": name, "title": SECTIONS[name].title,
                         "intro": Tex(str(intro(ctx)).strip()) if intro else None, "body": Tex(body)})
        if progress is not None:
            so_far = _document(model, title, sections)
            progress(so_far[:so_far.rindex("\\end{document}")],
                     not any(_has_longtable(n) for n in names[i + 1:]))
    if not sections:
        raise SymgptError("nothing to typeset: none of the requested sections is available")
    return _document(model, title, sections)


@lru_cache(maxsize=None)
def _has_longtable(name: str) -> bool:
    """Whether section *name*'s templates can set a longtable (their source says so)."""
    env = environment()
    return any("longtable" in env.loader.get_source(env, t)[0] for t in SECTIONS[name].templates)


def _document(model, title: str | None, sections: list) -> str:
    shown = Tex(tex_escape(title)) if title else Tex(tex_texttt(model.name) + ": parameters, shapes and costs")
    return render("document.tex", title=shown,
                  model=model.name, sections=sections, preamble=Tex(preamble()))


def document_head(model, title: str | None = None) -> str:
    """What ``document(model, ..., title=title)`` says before ``\\begin{document}`` (its preamble
    and title), known before any section is computed: TeX can load it while they are."""
    return _document(model, title, []).split("\\begin{document}", 1)[0]


class Rendered(str):
    """LaTeX that Jupyter renders as math (``_repr_latex_``); it is still a ``str``."""

    def _repr_latex_(self) -> str:
        return "\n".join(line for line in self.splitlines() if not line.lstrip().startswith("%"))


def derivation(model, notation=None) -> Rendered:
    """The grand-total derivation (``align*``), shown as math in a notebook::

        symgpt.documents.latex_doc.derivation(symgpt.load("gpt2-small"), "raschka")
    """
    return Rendered(fragment(model, "total", notation))

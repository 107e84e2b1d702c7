"""Report part: LaTeX for lecture notes -- a standalone document, its fragments for ``\\input``,
the preamble they need, and the PDF when a TeX engine is installed and ``pdf`` is true."""

from __future__ import annotations

from ...io import write_atomic

FOLDER = "latex"


def write(model, folder, pdf: bool = False, **options) -> list[str]:
    from ...notation import notation
    from ...render.latex import render
    from ...render.latex_build import build_pdf, tex_available
    from ..latex_doc import ALIASES, SECTIONS, context, document, preamble

    nota = notation("default")
    out = folder / FOLDER
    files = []

    def put(name, data):
        write_atomic(out / name, data)
        files.append(f"{FOLDER}/{name}")

    doc = document(model, "all", nota)
    put("report.tex", doc)
    put("preamble.tex", preamble())
    for name in ALIASES["all"]:
        ctx = context(name, model, nota)
        put(f"{name}.tex", "\n".join(render(t, **ctx) for t in SECTIONS[name].templates))
    put("report-raschka.tex", document(model, ("notation", "params", "breakdown"), notation("raschka"),
                                       title="Parameters in Raschka's notation"))
    if pdf and tex_available():
        put("report.pdf", build_pdf(doc, "report"))
    return files

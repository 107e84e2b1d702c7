"""Report part: LaTeX for lecture notes -- a standalone document, its fragments for ``\\input``,
the preamble they need, and the PDF when a TeX engine is installed and ``pdf`` is true."""

from __future__ import annotations

from ...core.io import write_atomic

FOLDER = "latex"
#: ``write`` takes ``running`` and ``later`` (the PDF is joined after the other parts)
DEFERS = True


def write(model, folder, pdf: bool = False, running=None, later=None, **options) -> list[str]:
    """The LaTeX files; with *pdf*, the PDF is started at once and, given *running* (an
    ``ExitStack`` that stops it on failure) and *later*, joined after the other parts."""
    from ...core.notation import notation
    from ...render.latex import render
    from ...external.pdflatex import PdfBuild, tex_available
    from ..latex_doc import SECTIONS, context, document, document_head, expand, preamble

    nota = notation("default")
    out = folder / FOLDER
    files = []

    def put(name, data):
        write_atomic(out / name, data)
        files.append(f"{FOLDER}/{name}")

    build = None
    if pdf and tex_available():  # TeX loads the preamble and sets each section while the next are computed
        build = PdfBuild(None, "report", head=document_head(model))
        if running is not None:
            running.enter_context(build)
    try:
        doc = document(model, "all", nota, progress=build.extend if build is not None else None)
        if build is not None:
            build.feed(doc)
        put("report.tex", doc)
        put("preamble.tex", preamble())
        for name in expand("all", model):
            ctx = context(name, model, nota)
            put(f"{name}.tex", "\n".join(render(t, **ctx) for t in SECTIONS[name].templates))
        put("report-raschka.tex", document(model, ("notation", "params", "breakdown"), notation("raschka"),
                                           title="Parameters in Raschka's notation"))
    except BaseException:
        if build is not None:
            build.close()
        raise
    if build is None:
        return files

    def finish() -> list[str]:
        with build:
            write_atomic(out / "report.pdf", build.result())
        return [f"{FOLDER}/report.pdf"]

    if later is None:  # on its own: join now
        return files + finish()
    later.append(finish)
    return files

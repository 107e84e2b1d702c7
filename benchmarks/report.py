"""``symgpt report gpt2-small`` end to end, ``--no-pdf`` and with the PDF, vs a bare
``python -c "import sympy"``."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .common import PY, med, met, ratio, say, secs, wall



def measure(opts) -> dict:
    say("report ...")
    tmp = Path(tempfile.mkdtemp(prefix="symgpt-bench-"))
    try:
        out = {"--no-pdf": wall([PY, "-m", "symgpt", "report", "gpt2-small", "-o", str(tmp / "r"), "--no-pdf"],
                                opts.runs)}
        if not opts.no_pdf:
            out["with PDF"] = wall([PY, "-m", "symgpt", "report", "gpt2-small", "-o", str(tmp / "p")],
                                   opts.heavy_runs)
            pdfs = sorted(p.name for p in (tmp / "p").rglob("*.pdf"))
            out["note"] = f"PDF files written: {', '.join(pdfs) or 'none (no TeX?)'}"
        else:
            out["note"] = "PDF not measured (--no-pdf)"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def rows(res, ctx) -> list[tuple]:
    sympy_s, rep = med(ctx["baseline"]["sympy"]), med(res["--no-pdf"])
    out = [("`symgpt report gpt2-small --no-pdf`", secs(rep), f"{secs(sympy_s)} (`python -c \"import sympy\"`)",
            ratio(rep, sympy_s), "a few ×", met(rep <= 5 * sympy_s))]
    if "with PDF" in res:
        pdf = med(res["with PDF"])
        out.append(("`symgpt report gpt2-small` (with PDF)", secs(pdf), secs(sympy_s), ratio(pdf, sympy_s),
                    "≤ 5× `import sympy`", met(pdf <= 5 * sympy_s)))
    return out


def details(res, ctx) -> list[str]:
    return [f"- Report: `symgpt report gpt2-small -o DIR --no-pdf` {secs(med(res['--no-pdf']))}"
            + (f"; with PDF {secs(med(res['with PDF']))}" if "with PDF" in res else "")
            + f". {res['note']}. The PDF (one pdflatex pass, started before the other parts are "
            "written) adds the difference between the two."]

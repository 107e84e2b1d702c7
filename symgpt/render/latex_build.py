"""Building a PDF from a generated document with latexmk (when a TeX engine is installed).

The build runs in a temporary folder with ``SOURCE_DATE_EPOCH`` fixed; the documents set
``\\pdfinfoomitdate`` and ``\\pdftrailerid{}``, so the PDF of the same source is the same bytes
on the same TeX installation.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import SymgptError

LATEXMK = ("latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error")


def tex_available() -> bool:
    return shutil.which("latexmk") is not None and shutil.which("pdflatex") is not None


def build_pdf(source: str, name: str = "document", timeout: int = 300) -> bytes:
    """The PDF of LaTeX *source*; a one-line SymgptError with TeX's first error if it fails."""
    if not tex_available():
        raise SymgptError("no TeX engine: install latexmk and pdflatex (scripts/setup.sh does)")
    with tempfile.TemporaryDirectory(prefix="symgpt-tex-") as tmp:
        tex = Path(tmp) / f"{name}.tex"
        tex.write_text(source, encoding="utf-8")
        env = {**os.environ, "SOURCE_DATE_EPOCH": "0", "FORCE_SOURCE_DATE": "1"}
        try:
            run = subprocess.run([*LATEXMK, tex.name], cwd=tmp, env=env, capture_output=True,
                                 text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise SymgptError(f"latexmk took more than {timeout} s on {name}.tex") from None
        pdf = Path(tmp) / f"{name}.pdf"
        if run.returncode != 0 or not pdf.exists():
            log = (Path(tmp) / f"{name}.log")
            text = log.read_text(errors="replace") if log.exists() else run.stdout
            first = next((line for line in text.splitlines() if line.startswith("!")), "see the log")
            raise SymgptError(f"LaTeX failed on {name}.tex: {first}")
        return pdf.read_bytes()

"""Building a PDF from a generated document with latexmk (when a TeX engine is installed).

The build runs in a temporary folder with ``SOURCE_DATE_EPOCH`` fixed and ``TZ=UTC``; the
documents set ``\\pdfinfoomitdate`` and ``\\pdftrailerid{}``, so the PDF of the same source is
the same bytes on the same TeX installation, in any time zone. TeX's caches and configuration
(``TEXMFVAR``, ``TEXMFCONFIG``, ``VARTEXFONTS``) point into the temporary folder: nothing is
written into the user's home. latexmk runs in its own process group, killed whole if symgpt
stops (an error, Ctrl-C, SIGTERM; on Linux also when symgpt itself is killed).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from ..errors import SymgptError

LATEXMK = ("latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error")
#: seconds one document may take to build
TIMEOUT = 300


def tex_available() -> bool:
    return shutil.which("latexmk") is not None and shutil.which("pdflatex") is not None


def tex_env(tmp: Path) -> dict:
    """The environment of a TeX run in *tmp*: fixed date and zone, caches inside *tmp*."""
    caches = {name: str(tmp / ".texmf" / name.lower())
              for name in ("TEXMFVAR", "TEXMFCONFIG", "VARTEXFONTS", "TEXMFCACHE")}
    return {**os.environ, "SOURCE_DATE_EPOCH": "0", "FORCE_SOURCE_DATE": "1", "TZ": "UTC",
            **caches}


def _die_with_parent() -> None:
    """In the child, before exec: be killed when symgpt dies (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def run_group(argv: list[str], cwd: Path, env: dict, timeout: float, what: str
              ) -> subprocess.CompletedProcess:
    """Run *argv* in a new process group; on a timeout, an error or a signal in symgpt, the
    whole group (latexmk and its pdflatex) is killed before this returns or raises."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", start_new_session=True,
                            preexec_fn=_die_with_parent)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise SymgptError(f"{what} took more than {timeout} s") from None
    except BaseException:
        _kill_group(proc)
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, "")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()


def build_pdf(source: str, name: str = "document", timeout: int = TIMEOUT) -> bytes:
    """The PDF of LaTeX *source*; a one-line SymgptError with TeX's first error if it fails."""
    if not tex_available():
        raise SymgptError("no TeX engine: install latexmk and pdflatex (scripts/setup.sh does)")
    with tempfile.TemporaryDirectory(prefix="symgpt-tex-") as tmp:
        tex = Path(tmp) / f"{name}.tex"
        tex.write_text(source, encoding="utf-8")
        run = run_group([*LATEXMK, tex.name], Path(tmp), tex_env(Path(tmp)), timeout,
                        f"latexmk on {name}.tex")
        pdf = Path(tmp) / f"{name}.pdf"
        if run.returncode != 0 or not pdf.exists():
            log = (Path(tmp) / f"{name}.log")
            text = log.read_text(errors="replace") if log.exists() else run.stdout
            first = next((line for line in text.splitlines() if line.startswith("!")), "see the log")
            raise SymgptError(f"LaTeX failed on {name}.tex: {first}")
        return pdf.read_bytes()

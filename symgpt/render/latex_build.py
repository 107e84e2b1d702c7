"""Building a PDF from a generated document with pdflatex (when a TeX engine is installed).

One pass where one suffices: the documents hold no cross-reference, so pdflatex runs once, and
again only if its log asks for a rerun (at most ``MAX_PASSES``). ``PdfBuild`` starts the build
at once and is joined later, so a report writes its other parts while TeX works.

The build runs in a temporary folder with ``SOURCE_DATE_EPOCH`` fixed and ``TZ=UTC``; the
documents set ``\\pdfinfoomitdate`` and ``\\pdftrailerid{}``, so the PDF of the same source is
the same bytes on the same TeX installation, in any time zone. TeX's caches and configuration
(``TEXMFVAR``, ``TEXMFCONFIG``, ``VARTEXFONTS``) point into the temporary folder: nothing is
written into the user's home. TeX runs in its own process group, killed whole if symgpt
stops (an error, Ctrl-C, SIGTERM; on Linux also when symgpt itself is killed); the build
folder a killed symgpt could not remove is removed by the next build.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from ..errors import SymgptError
from ..io import clean_dead

PDFLATEX = ("pdflatex", "-interaction=nonstopmode", "-halt-on-error")
#: passes at most (a log that still asks for a rerun after these is left as it is)
MAX_PASSES = 3
_RERUN = ("Rerun to get", "Label(s) may have changed", "There were undefined references")
#: seconds one document may take to build
TIMEOUT = 300


def tex_available() -> bool:
    return shutil.which("pdflatex") is not None


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


def start_group(argv: list[str], cwd: Path, env: dict) -> subprocess.Popen:
    """Start *argv* in a new process group that dies with symgpt (see ``run_group``)."""
    return subprocess.Popen([*argv], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", start_new_session=True,
                            preexec_fn=_die_with_parent)


def wait_group(proc: subprocess.Popen, timeout: float, what: str) -> tuple[int, str]:
    """(exit code, output) of *proc*, waited for; on a timeout, an error or a signal in symgpt, its whole group is killed
    before this returns or raises."""
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise SymgptError(f"{what} took more than {timeout} s") from None
    except BaseException:
        _kill_group(proc)
        raise
    return proc.returncode, out


def run_group(argv: list[str], cwd: Path, env: dict, timeout: float, what: str) -> tuple[int, str]:
    """(exit code, output) of *argv* run in a new process group; on a timeout, an error or a
    signal in symgpt, the whole group (TeX and its children) is killed before this returns or
    raises."""
    return wait_group(start_group(argv, cwd, env), timeout, what)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()


class PdfBuild:
    """The PDF of LaTeX *source*, built in the background from the moment this is made:
    ``result()`` joins it (the PDF's bytes, or a one-line SymgptError with TeX's first error);
    ``close()`` (or leaving a ``with`` block) kills whatever still runs and removes the
    temporary folder."""

    def __init__(self, source: str, name: str = "document", timeout: int = TIMEOUT):
        if not tex_available():
            raise SymgptError("no TeX engine: install pdflatex (scripts/setup.sh does)")
        self.name, self.deadline = name, time.monotonic() + timeout
        self.timeout = timeout
        clean_dead(tempfile.gettempdir(), "symgpt-tex-")  # what a killed build left behind
        self._tmp = tempfile.TemporaryDirectory(prefix=f"symgpt-tex-{os.getpid()}-")
        self.dir = Path(self._tmp.name)
        try:
            (self.dir / f"{name}.tex").write_text(source, encoding="utf-8")
            self.env = tex_env(self.dir)
            self.proc: subprocess.Popen | None = self._start()
        except BaseException:
            self._tmp.cleanup()
            raise

    def _start(self) -> subprocess.Popen:
        return start_group([*PDFLATEX, f"{self.name}.tex"], self.dir, self.env)

    def result(self) -> bytes:
        log = self.dir / f"{self.name}.log"
        for n in range(MAX_PASSES):
            proc = self.proc if n == 0 else self._start()
            self.proc = proc
            code, out = wait_group(proc, max(1.0, self.deadline - time.monotonic()),
                                   f"pdflatex on {self.name}.tex (its {self.timeout} s)")
            self.proc = None
            text = log.read_text(errors="replace") if log.exists() else out
            if code != 0 or not (self.dir / f"{self.name}.pdf").exists():
                first = next((line for line in text.splitlines() if line.startswith("!")), "see the log")
                raise SymgptError(f"LaTeX failed on {self.name}.tex: {first}")
            if not any(r in text for r in _RERUN):
                break
        return (self.dir / f"{self.name}.pdf").read_bytes()

    def close(self) -> None:
        if self.proc is not None:
            _kill_group(self.proc)
            self.proc = None
        self._tmp.cleanup()

    def __enter__(self) -> "PdfBuild":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def build_pdf(source: str, name: str = "document", timeout: int = TIMEOUT) -> bytes:
    """The PDF of LaTeX *source*; a one-line SymgptError with TeX's first error if it fails."""
    with PdfBuild(source, name, timeout) as build:
        return build.result()

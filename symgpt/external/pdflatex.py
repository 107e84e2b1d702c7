"""Building a PDF from a generated document with pdflatex (when a TeX engine is installed).

One pass where one suffices: the documents hold no cross-reference, so LaTeX's "Label(s) may
have changed" is no reason to run again for a document that reads no label back (no ``\\ref``,
``\\cite``, table of contents); any other request for a rerun is (at most ``MAX_PASSES``). A
longtable learns its column widths from the ``.aux`` of a previous pass; a document with one is
first set by a quick widths pass (``widths_source``: the document without its figures and the
graphics packages they load, in draft mode, no PDF), whose ``.aux`` the one full pass then
reads: the PDF of two full passes, for the price of one and a fraction. If the widths pass
fails or its widths differ, the full pass asks for a rerun and gets it. ``PdfBuild`` starts the
build at once and is joined later, so a report writes its other parts while TeX works. Given
only the document's *head* (what comes before ``\\begin{document}``), it starts the full pass
at once on a named pipe: TeX loads the preamble while the document is still being computed.
``extend(prefix)`` hands it the document as far as it is known (a section at a time), so TeX
sets the first sections while the later ones are computed; the widths pass runs as soon as a
prefix holds every longtable (``widths_complete``), and the full pass reads nothing past its
preamble until that pass is done. ``feed(source)`` gives the whole document: a source that does
not start with what was streamed (or with the head) is built from the start instead, and a
longtable after a prefix said to hold them all costs a rerun, never a wrong PDF.

The build runs in a temporary folder with ``SOURCE_DATE_EPOCH`` fixed and ``TZ=UTC``; the
documents set ``\\pdfinfoomitdate`` and ``\\pdftrailerid{}``, so the PDF of the same source is
the same bytes on the same TeX installation, in any time zone. TeX's caches and configuration
(``TEXMFVAR``, ``TEXMFCONFIG``, ``VARTEXFONTS``) point into the temporary folder: nothing is
written into the user's home. TeX runs in its own process group, killed whole if symgpt
stops (an error, Ctrl-C, SIGTERM; on Linux also when symgpt itself is killed); the build
folder a killed symgpt could not remove is removed by the next build.
"""

from __future__ import annotations

import errno
import fcntl
import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from ..core.errors import SymgptError
from ..core.io import clean_dead
from .processes import kill_group, start_group, wait_group

PDFLATEX = ("pdflatex", "-interaction=nonstopmode", "-halt-on-error")
#: pdflatex reading a named pipe: the first line is read once, as TeX's input, not parsed for %&
_STREAMED = (PDFLATEX[0], "-no-parse-first-line", *PDFLATEX[1:])
#: passes at most (a log that still asks for a rerun after these is left as it is)
MAX_PASSES = 3
_RERUN = ("Rerun", "There were undefined references")
#: LaTeX's warning when labels differ from the previous pass: a rerun changes nothing for a
#: document that reads none back (``_READS_LABELS``)
_LABELS_CHANGED = "LaTeX Warning: Label(s) may have changed. Rerun to get cross-references right."
_READS_LABELS = re.compile(r"\\(?:[A-Za-z]*ref|cite[A-Za-z]*|tableofcontents|listof[A-Za-z]+)(?![A-Za-z])")
#: what a widths pass leaves out: the graphics packages and the figures that use them
_GRAPHICS = re.compile(r"^\\(?:usepackage(?:\[[^]]*\])?\{(?:tikz|pgfplots)\}|pgfplotsset\{.*\})\s*$", re.M)
_FIGURE = re.compile(r"\\begin\{figure\}.*?\\end\{figure\}", re.S)
#: how a document ends (after its streamed prefix)
_END = "\\end{document}\n"
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


class PdfBuild:
    """The PDF of LaTeX *source*, built in the background from the moment this is made:
    ``result()`` joins it (the PDF's bytes, or a one-line SymgptError with TeX's first error);
    ``close()`` (or leaving a ``with`` block) kills whatever still runs and removes the
    temporary folder."""

    def __init__(self, source: str | None, name: str = "document", timeout: int = TIMEOUT,
                 head: str | None = None):
        if not tex_available():
            raise SymgptError("no TeX engine: install pdflatex (scripts/setup.sh does)")
        self.name, self.deadline = name, time.monotonic() + timeout
        self.timeout = timeout
        clean_dead(tempfile.gettempdir(), "symgpt-tex-")  # what a killed build left behind
        self._tmp = tempfile.TemporaryDirectory(prefix=f"symgpt-tex-{os.getpid()}-")
        self.dir = Path(self._tmp.name)
        self._writer = self._widths = self.proc = None
        self._closed = False
        try:
            self.env = tex_env(self.dir)
            if source is None:  # streamed: the preambles now (the widths pass's too), the rest with extend/feed
                self.head, self.source = head or "", None
                self._promised = self.head  # what the writer may have sent to TeX: the source starts with it
                self._queue: queue.SimpleQueue = queue.SimpleQueue()
                if not hasattr(os, "mkfifo"):  # no named pipes (Windows): it starts when fed
                    return
                os.mkfifo(self.dir / f"{name}.tex")
                os.mkfifo(self.dir / "widths.tex")
                self.proc = start_group([*_STREAMED, f"{name}.tex"], self.dir, self.env)
                self._widths = start_group([*_STREAMED, "-draftmode", "widths.tex"], self.dir, self.env)
                self._writer = threading.Thread(target=self._stream, args=(self.proc, self._widths), daemon=True)
                self._writer.start()
                return
            (self.dir / f"{name}.tex").write_text(source, encoding="utf-8")
            self.source, self.reads_labels = source, bool(_READS_LABELS.search(source))
            self.proc = self._start(first=True)
        except BaseException:
            self.close()
            raise

    def extend(self, prefix: str, widths_complete: bool = False) -> None:
        """The document (streamed) starts with *prefix*: the document so far, cut where a section
        ends (before its ``\\end{document}``). With *widths_complete*, no longtable comes after
        it. A prefix that does not continue the last one is ignored."""
        if self._writer is None or not prefix.startswith(self._promised):
            return
        self._promised = prefix
        self._queue.put(("part", prefix, widths_complete))

    def feed(self, source: str) -> None:
        """The whole document of a streamed build (see the module docstring)."""
        self.source, self.reads_labels = source, bool(_READS_LABELS.search(source))
        if self._writer is not None and source.startswith(self._promised):
            self._queue.put(("end", source, True))
            return
        self._stop_stream()  # another head, another prefix (or no pipes): build it from the start
        (self.dir / f"{self.name}.tex").write_text(source, encoding="utf-8")
        self.proc = self._start(first=True)

    def _open(self, name: str, proc: subprocess.Popen) -> int | None:
        """A descriptor writing into the pipe *name* once *proc* reads it (None if it stopped)."""
        while True:  # opening a pipe no one reads yet fails at once (ENXIO)
            try:
                fd = os.open(self.dir / name, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:
                if e.errno != errno.ENXIO or proc.poll() is not None or self._closed:
                    return None
                time.sleep(0.002)
                continue
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
            return fd

    def _stream(self, proc: subprocess.Popen, wproc: subprocess.Popen) -> None:
        """The writer of a streamed build: the heads into TeX's pipes; then, from the queue, the
        widths pass's rest once a prefix holds every longtable (its .aux handed on if it
        succeeded), then the document as far as it is known, part after part. Ends quietly if
        TeX stops: ``result`` reports TeX's failure."""
        try:
            whead = _GRAPHICS.sub("", self.head)
            wfd = self._open("widths.tex", wproc)
            with os.fdopen(wfd, "w", encoding="utf-8") if wfd is not None else open(os.devnull, "w") as wpipe:
                wpipe.write(whead)
                wpipe.flush()
                fd = self._open(f"{self.name}.tex", proc)
                if fd is None:
                    return
                with os.fdopen(fd, "w", encoding="utf-8") as pipe:
                    pipe.write(self.head)
                    pipe.flush()
                    sent, widths_done = len(self.head), False
                    while True:
                        kind, text, complete = self._queue.get()
                        if kind == "stop" or self._closed:
                            return
                        if not widths_done and complete:
                            widths_done = True
                            wproc = self._widths_pass(text if kind == "end" else text + _END, whead, wpipe,
                                                      wfd is not None, wproc)
                        if widths_done and len(text) > sent:
                            pipe.write(text[sent:])
                            pipe.flush()
                            sent = len(text)
                        if kind == "end":
                            return
        except (OSError, SymgptError):
            pass
        finally:
            kill_group(wproc)  # done, or not wanted (no longtable, TeX stopped)

    def _widths_pass(self, source: str, whead: str, wpipe, piped: bool, wproc: subprocess.Popen) -> subprocess.Popen:
        """Run the widths pass of *source* (its head already in *wpipe*); returns its process."""
        widths = widths_source(source)
        if widths is not None and widths.startswith(whead) and piped:
            wpipe.write(widths[len(whead):])
            wpipe.close()
            self._handed(wait_group(wproc, self._left(), "the widths pass")[0])
        elif widths is not None:  # another head: a widths pass from the file
            kill_group(wproc)
            (self.dir / "widths.tex").unlink()
            (self.dir / "widths.tex").write_text(widths, encoding="utf-8")
            self._widths = wproc = start_group([*PDFLATEX, "-draftmode", "widths.tex"], self.dir, self.env)
            self._handed(wait_group(wproc, self._left(), "the widths pass")[0])
        else:  # no longtable: no widths pass
            kill_group(wproc)
        return wproc

    def _left(self) -> float:
        return max(1.0, self.deadline - time.monotonic())

    def _handed(self, code: int) -> None:
        if code == 0 and not self._closed:  # the widths pass's .aux, handed on only if it succeeded
            shutil.copyfile(self.dir / "widths.aux", self.dir / f"{self.name}.aux")

    def _stop_stream(self) -> None:
        """Stop a streamed build's TeX and writer; its source becomes an ordinary file."""
        if self._writer is None:
            return
        if self.proc is not None:
            kill_group(self.proc)
            self.proc = None
        self._queue.put(("stop", "", False))
        if self._widths is not None:
            kill_group(self._widths)
        self._writer.join()
        self._writer = None
        for pipe in (f"{self.name}.tex", "widths.tex"):
            (self.dir / pipe).unlink(missing_ok=True)

    def _start(self, first: bool = False) -> subprocess.Popen:
        full = [*PDFLATEX, f"{self.name}.tex"]
        widths = widths_source(self.source) if first else None
        if widths is None:
            return start_group(full, self.dir, self.env)
        (self.dir / "widths.tex").write_text(widths, encoding="utf-8")
        # the widths pass, its .aux handed on only if it succeeded; then the full pass (one group)
        script = ('"$@" -draftmode widths.tex >/dev/null 2>&1 && cp widths.aux "$0.aux"; '
                  'exec "$@" "$0.tex"')
        return start_group(["sh", "-c", script, self.name, *PDFLATEX], self.dir, self.env)

    def result(self) -> bytes:
        log = self.dir / f"{self.name}.log"
        for n in range(MAX_PASSES):
            proc = self.proc if n == 0 else self._start()
            self.proc = proc
            code, out = wait_group(proc, max(1.0, self.deadline - time.monotonic()),
                                   f"pdflatex on {self.name}.tex (its {self.timeout} s)")
            self.proc = None
            if self._writer is not None:  # a streamed pass: its source, a file for any rerun
                self._writer.join()
                self._writer = None
                (self.dir / f"{self.name}.tex").unlink(missing_ok=True)
                (self.dir / f"{self.name}.tex").write_text(self.source, encoding="utf-8")
            text = log.read_text(errors="replace") if log.exists() else out
            if code != 0 or not (self.dir / f"{self.name}.pdf").exists():
                first = next((line for line in text.splitlines() if line.startswith("!")), "see the log")
                raise SymgptError(f"LaTeX failed on {self.name}.tex: {first}")
            if not asks_rerun(text, self.reads_labels):
                break
        return (self.dir / f"{self.name}.pdf").read_bytes()

    def close(self) -> None:
        self._closed = True
        if self._writer is not None:
            self._stop_stream()
        if self.proc is not None:
            kill_group(self.proc)
            self.proc = None
        self._tmp.cleanup()

    def __enter__(self) -> "PdfBuild":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def asks_rerun(log: str, reads_labels: bool) -> bool:
    """Whether TeX's *log* asks for another pass (labels changed only matter to a document that
    reads them back)."""
    if not reads_labels:
        log = log.replace(_LABELS_CHANGED, "")
    return any(r in log for r in _RERUN)


def widths_source(source: str) -> str | None:
    """The widths pass of *source* (see the module docstring), or None: no longtable."""
    if "\\begin{longtable}" not in source or "\\begin{document}" not in source:
        return None
    head, body = source.split("\\begin{document}", 1)
    return _GRAPHICS.sub("", head) + "\\begin{document}" + _FIGURE.sub("", body)


def build_pdf(source: str, name: str = "document", timeout: int = TIMEOUT) -> bytes:
    """The PDF of LaTeX *source*; a one-line SymgptError with TeX's first error if it fails."""
    with PdfBuild(source, name, timeout) as build:
        return build.result()

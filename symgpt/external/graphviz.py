"""Running Graphviz's ``dot``: DOT text in, SVG/PNG/PDF out, deterministically.

``dot`` is run as a subprocess (an argument list, no shell) with a timeout. Its SVG carries
XML comments (the Graphviz version, node names) that are removed so the output depends only on
the drawing; a PDF's creation date is replaced by a fixed one of the same length (so its
cross-reference offsets stay valid), and ``dot`` runs with ``TZ=UTC`` so that the date's zone
is the same everywhere.

Layout time grows much faster than the diagram (an unrolled Mixtral, 32 blocks of 8 experts,
takes minutes), so a diagram of more than MAX_BOXES boxes is refused before ``dot`` starts.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from ..core.errors import SymgptError

#: seconds Graphviz may take to lay out one diagram (a backstop: MAX_BOXES keeps it to seconds)
TIMEOUT = 60
#: boxes (nodes) Graphviz is asked to lay out: an unrolled GPT-2 small (12 blocks, 569 boxes)
#: or Mixtral with 8 blocks (555) take about a second; Mixtral with 12 blocks over a minute
MAX_BOXES = 600
_NODE = re.compile(r'^\s*"(?:[^"\\]|\\.)*" \[', re.M)
INSTALL_HINT = ("Graphviz's 'dot' program is not installed (or not on PATH): install it with "
                "'apt-get install graphviz' (Debian/Ubuntu) or 'brew install graphviz' (macOS), "
                "or ask for --format dot")
_COMMENT = re.compile(r"<!--.*?-->\n?", re.S)
_PDF_DATE = re.compile(rb"(/(?:CreationDate|ModDate) \(D:)\d{14}")


def dot_binary() -> str:
    """The path of Graphviz's ``dot``; a clear one-line error when it is missing."""
    found = shutil.which("dot")
    if not found:
        raise SymgptError(INSTALL_HINT)
    return found


def render(dot: str, fmt: str) -> bytes:
    """Lay out and render DOT text as ``svg``, ``png`` or ``pdf``."""
    if fmt not in ("svg", "png", "pdf"):
        raise SymgptError(f"Graphviz output format must be svg, png or pdf, got {fmt!r}")
    boxes = len(_NODE.findall(dot))
    if boxes > MAX_BOXES:
        raise SymgptError(f"the diagram has {boxes:,} boxes, more than the {MAX_BOXES} that Graphviz "
                          "lays out in seconds: draw it rolled (without --unroll), bind a smaller "
                          "repeat count, or ask for --format dot")
    exe = dot_binary()
    # SOURCE_DATE_EPOCH: honoured by newer cairo (see normalise_pdf); TZ: the date's zone
    env = {**os.environ, "SOURCE_DATE_EPOCH": "0", "TZ": "UTC"}
    device = "png:cairo" if fmt == "png" else "pdf:cairo" if fmt == "pdf" else "svg"
    try:
        done = subprocess.run([exe, f"-T{device}"], input=dot.encode("utf-8"), capture_output=True,
                              timeout=TIMEOUT, env=env, check=False)
    except subprocess.TimeoutExpired:
        raise SymgptError(f"Graphviz's dot took more than {TIMEOUT} s to lay out the diagram; "
                          "draw it rolled (without --unroll) or ask for --format dot") from None
    except OSError as e:
        raise SymgptError(f"cannot run Graphviz's dot ({exe}): {e.strerror or e}") from None
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SymgptError("Graphviz's dot failed: " + (err[0] if err else f"exit code {done.returncode}"))
    out = done.stdout
    if fmt == "svg":
        out = normalise_svg(out.decode("utf-8")).encode("utf-8")
    elif fmt == "pdf":
        out = normalise_pdf(out)
    return out


def normalise_svg(svg: str) -> str:
    """Drop XML comments (the Graphviz version line, node names) from Graphviz's SVG."""
    return _COMMENT.sub("", svg)


def normalise_pdf(pdf: bytes) -> bytes:
    """Replace the PDF's creation and modification dates by 1970-01-01 (same byte length)."""
    return _PDF_DATE.sub(rb"\g<1>19700101000000", pdf)


def render_svg(dot: str) -> str:
    return render(dot, "svg").decode("utf-8")

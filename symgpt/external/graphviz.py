"""Running Graphviz's ``dot``: DOT text in, SVG/PNG/PDF out, deterministically.

``dot`` is run as a subprocess (an argument list, no shell) with a timeout. Its SVG carries
XML comments (the Graphviz version, node names) that are removed so the output depends only on
the drawing; a PDF's creation date is replaced by a fixed one of the same length (so its
cross-reference offsets stay valid), and ``dot`` runs with ``TZ=UTC`` so that the date's zone
is the same everywhere.

Layout time is not the box count: it follows the width of the ranks ``dot`` lays out, boxes
plus the long edges passing through each rank (an unrolled GPT-2 XL, 1,113 boxes in a narrow
column, takes about a second; Mixtral with 12 blocks, 451 boxes but a rotary table feeding every
block, over a minute). ``layout_cost`` estimates that work from the DOT text; a diagram above
MAX_LAYOUT is refused before ``dot`` starts, and one above NOTICE_LAYOUT is announced.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from ..core.errors import SymgptError

#: seconds Graphviz may take to lay out one diagram (a backstop: MAX_LAYOUT keeps it to seconds)
TIMEOUT = 60
#: the most layout work (``layout_cost(...).units``) Graphviz is asked to do; measured (see
#: benchmarks/UNROLL.md): GPT-2 XL unrolled 11,316 in ~1 s, Mixtral L = 8 23,520 in ~2.4 s,
#: Mixtral L = 12 69,512 past the 60 s timeout
MAX_LAYOUT = 30_000
#: above this, ``symgpt graph`` says before the layout that it may take several seconds
#: (DeepSeek-V3 L = 8, 26,795: ~6 s; GPT-2 small L = 64, 15,076: ~2 s, not announced)
NOTICE_LAYOUT = 20_000
_NAMED = re.compile(r'^\s*"((?:[^"\\]|\\.)*)" \[', re.M)
_EDGE = re.compile(r'^\s*"((?:[^"\\]|\\.)*)" -> "((?:[^"\\]|\\.)*)"(?: \[(.*)\])?;\s*$', re.M)
INSTALL_HINT = ("Graphviz's 'dot' program is not installed (or not on PATH): install it with "
                "'apt-get install graphviz' (Debian/Ubuntu) or 'brew install graphviz' (macOS), "
                "or ask for --format dot")
_COMMENT = re.compile(r"<!--.*?-->\n?", re.S)
_PDF_DATE = re.compile(rb"(/(?:CreationDate|ModDate) \(D:)\d{14}")


@dataclass(frozen=True)
class LayoutCost:
    """What drives ``dot``'s layout time, read from the DOT text (no ``dot`` run).

    ``dot`` ranks the nodes (roughly: longest path from the sources, each source then placed
    just above its first consumer, as dot's edge-length minimisation does), puts a virtual node on
    every rank an edge passes through, then reorders each rank against its neighbours to reduce
    crossings, rank pair by rank pair: its work grows with the square of the ranks' widths.
    ``units`` is the sum over ranks of (real + virtual nodes)² plus the node count.
    """

    nodes: int
    virtual: int
    ranks: int
    widest: int
    units: int


def layout_cost(dot: str) -> LayoutCost:
    """Estimate ``dot``'s layout work for *dot* (see ``LayoutCost``)."""
    nodes = list(dict.fromkeys(_NAMED.findall(dot)))
    edges = [(a, b, "constraint=false" in (attrs or "")) for a, b, attrs in _EDGE.findall(dot)]
    known = dict.fromkeys(nodes)
    for a, b, _ in edges:
        known.setdefault(a)
        known.setdefault(b)
    succ = {n: [] for n in known}
    indeg = dict.fromkeys(known, 0)
    for a, b, free in edges:
        if not free and a != b:
            succ[a].append(b)
            indeg[b] += 1
    rank = dict.fromkeys(known, 0)
    sources = [n for n in known if indeg[n] == 0]
    ready = list(sources)
    while ready:  # longest path from the sources (Kahn's order); a cycle's nodes keep rank 0
        n = ready.pop()
        for m in succ[n]:
            rank[m] = max(rank[m], rank[n] + 1)
            indeg[m] -= 1
            if indeg[m] == 0:
                ready.append(m)
    for n in sources:  # dot shortens edges: a weight or input sits just above its first consumer
        if succ[n]:
            rank[n] = min(rank[m] for m in succ[n]) - 1
    depth = max(rank.values(), default=-1) + 1
    width = [0] * depth
    for n in known:
        width[rank[n]] += 1
    passing = [0] * (depth + 1)  # a difference array: +1 where an edge's span starts, -1 past it
    for a, b, _ in edges:
        lo, hi = sorted((rank[a], rank[b]))
        if hi - lo > 1:
            passing[lo + 1] += 1
            passing[hi] -= 1
    virtual, running = 0, 0
    for r in range(depth):
        running += passing[r]
        width[r] += running
        virtual += running
    return LayoutCost(len(known), virtual, depth, max(width, default=0),
                      sum(w * w for w in width) + len(known))


def describe(cost: LayoutCost) -> str:
    """One phrase: the estimate and what drives it."""
    return (f"layout estimate {cost.units:,} (the sum over its {cost.ranks:,} ranks of the squared "
            f"rank width: {cost.nodes:,} boxes plus {cost.virtual:,} passes of long edges through "
            f"ranks, up to {cost.widest} side by side)")


def check_layout(dot: str) -> LayoutCost:
    """Refuse (one line) DOT text whose layout estimate is above MAX_LAYOUT; its cost otherwise."""
    cost = layout_cost(dot)
    if cost.units > MAX_LAYOUT:
        raise SymgptError(f"the diagram is too wide for Graphviz to lay out in seconds: "
                          f"{describe(cost)}, above {MAX_LAYOUT:,}: draw it rolled (without --unroll), "
                          "bind a smaller L, or ask for --format dot")
    return cost


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
    check_layout(dot)
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

"""``symgpt report``: everything symgpt can produce for a model, written into one folder.

Each part (``symgpt.documents.reportparts.*``, listed in ``REPORT_PARTS``) writes its files into a
staging folder; the folder then replaces the report whole (``symgpt.core.io_folders.atomic_dir``). Any
error leaves the previous report untouched. A part with ``DEFERS = True`` may start slow work (the
PDF) and hand back a ``finish`` to be joined after the other parts (``later``); what it starts
is registered with ``running`` and stopped if anything fails. A part with ``PARALLEL = True``
is forked at its turn (``symgpt.external.forked``) and joined with them.
"""

from __future__ import annotations

import re
from contextlib import ExitStack
from pathlib import Path

from ..core.io import write_atomic
from ..core.io_folders import atomic_dir
from ..external.forked import start
from ..render.markdown import index_md
from . import html
from .reportparts import cluster, core, costs, graph, latex
from .workload import DEFAULT_B, report_model  # noqa: F401  (part of this module's API)

#: the parts of a report, in order: modules with ``write(model, folder, **options) -> [names]``
#: latex first: its PDF builds while the rest is written; html next, forked once the LaTeX has
#: imported (SymPy's simplify, jinja2) and built what the page shares with it
REPORT_PARTS = (latex, html, core, costs, cluster, graph)


def safe_name(name: str) -> str:
    """A folder name for a model: letters, digits, '.', '_' and '-' only."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "model"
    return s[:80]


def _writer(part, model, folder, options):
    """``part.write(model, folder, **options)`` as a list of names, to be called later."""
    return lambda: list(part.write(model, folder, **options))


def write_report(model, out_dir: Path | str, **options) -> list[Path]:
    """Write the report of *model* into *out_dir* (replaced whole); returns the files written."""
    model = report_model(model)
    out_dir = Path(out_dir)
    written: list[str] = []
    with atomic_dir(out_dir) as stage, ExitStack() as running:
        later: list = []  # finish() -> [names], called once every part has written
        for part in REPORT_PARTS:
            if getattr(part, "PARALLEL", False):
                later.append(start(_writer(part, model, stage, options), running,
                                   f"the {part.__name__.rsplit('.', 1)[-1]} part of the report"))
                continue
            deferred = {"running": running, "later": later} if getattr(part, "DEFERS", False) else {}
            written += part.write(model, stage, **deferred, **options)
        for finish in later:
            written += finish()
        write_atomic(stage / "index.md", index_md(model, sorted(written)))
        written.append("index.md")
    return [out_dir / w for w in sorted(written)]

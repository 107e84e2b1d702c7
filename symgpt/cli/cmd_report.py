"""symgpt report MODEL: everything symgpt produces for a model, in output/MODEL/."""

from __future__ import annotations

import gc
from contextlib import contextmanager

from .common import add_model, emit, load_model

HELP = "write the full report of a model (default folder: output/MODEL/)"


def add_arguments(p):
    add_model(p)
    p.add_argument("-o", "--output", metavar="DIR", help="the report folder (default: output/MODEL)")
    p.add_argument("--no-pdf", action="store_true", help="do not build the PDF even if TeX is installed")


def run(args) -> int:
    import sys
    from pathlib import Path

    import sys

    from ..documents.report import safe_name, write_report
    from ..core.io_folders import foreign_files, owned_files

    m = load_model(args)
    out = Path(args.output) if args.output else Path("output") / safe_name(m.name)
    kept = foreign_files(out) if owned_files(out) is not None else []
    with _few_collections():
        files = write_report(m, out, pdf=not args.no_pdf)
    if kept:
        shown = ", ".join(kept[:5]) + (f" and {len(kept) - 5} more" if len(kept) > 5 else "")
        print(f"symgpt: kept {len(kept)} file(s) in {out} that the report did not write: {shown}",
              file=sys.stderr)
    emit(f"wrote {len(files)} files to {out}/")
    for f in files:
        emit(f"  {f}")
    return 0


@contextmanager
def _few_collections():
    """A report makes a few hundred thousand short-lived SymPy objects and almost no cycles: the
    cyclic collector's ~200 young-generation passes over them cost about 5 % of its time and free
    nothing reference counting does not. What is imported so far is frozen (never scanned again)
    and the young generation collected only every 100,000 allocations, as mypy does for the
    same reason (``gc.set_threshold(200 * 1000, 30, 30)`` in mypy/main.py). Memory is freed by
    reference counting as before; only cycles wait longer. The settings are put back after."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(100_000, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()

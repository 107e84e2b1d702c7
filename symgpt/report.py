"""``symgpt report``: everything symgpt can produce for a model, written into one folder.

Each part (``symgpt.reportparts.*``) writes its files into a staging folder; the folder then
replaces the report whole (``symgpt.io.atomic_dir``). A part module that is not installed is
skipped; any error leaves the previous report untouched.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from .errors import SymgptError
from .io import atomic_dir, write_atomic

#: the parts of a report, in order
REPORT_PARTS = (
    "symgpt.reportparts.core",
    "symgpt.reportparts.costs",
    "symgpt.reportparts.latex",
    "symgpt.reportparts.graph",
)

#: the workload a report assumes unless B and T are set (the seeds' B = 8, T = T_max)
DEFAULT_B = 8


def report_model(model):
    """The model with B and its sequence lengths bound for a report (B = 8, each length -- T, or
    an encoder--decoder's T_enc and T_dec -- = T_max unless set)."""
    from .symbols import LENGTHS

    extra = {}
    if "B" not in model.sizes:
        extra["B"] = DEFAULT_B
    lengths = []
    for g in model.arch.stacks():
        for s in sorted(g.length.free_symbols if g.length is not None else (), key=str):
            if s.name in LENGTHS and s.name not in lengths:
                lengths.append(s.name)
    missing = [n for n in lengths if n not in model.sizes]
    if missing:
        if "T_max" not in model.sizes:
            shown = " and ".join(missing)
            example = " ".join(f"--set {n}=512" for n in missing)
            raise SymgptError(f"{model.name}: set {shown} (the sequence length{'s' if len(missing) > 1 else ''}) "
                              f"for a report, e.g. {example}")
        extra.update({n: int(model.sizes["T_max"]) for n in missing})
    return model.with_(**extra) if extra else model


def safe_name(name: str) -> str:
    """A folder name for a model: letters, digits, '.', '_' and '-' only."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "model"
    return s[:80]


def parts():
    for mod in REPORT_PARTS:
        try:
            yield importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise


def write_report(model, out_dir: Path | str, **options) -> list[Path]:
    """Write the report of *model* into *out_dir* (replaced whole); returns the files written."""
    model = report_model(model)
    out_dir = Path(out_dir)
    written: list[str] = []
    with atomic_dir(out_dir) as stage:
        for part in parts():
            written += part.write(model, stage, **options)
        from .render.markdown import index_md

        write_atomic(stage / "index.md", index_md(model, sorted(written)))
        written.append("index.md")
    return [out_dir / w for w in sorted(written)]

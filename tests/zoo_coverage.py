"""symgpt against every causal-LM type of a transformers release: the measure of its breadth.

The oracle is the table ``tests/oracles/zoo/transformers-<version>.json`` written by
``tests/oracles/zoo_build.py``: for each ``model_type`` of transformers'
``MODEL_FOR_CAUSAL_LM_MAPPING_NAMES``, the causal-LM class built from the default configuration
on the meta device, ``sum(p.numel() for p in model.parameters())`` and the ``FlopCounterMode``
total of one eager forward of B=1, T=8 token ids (``use_cache=False``). The configurations
themselves, as Hub ``config.json`` files, are ``tests/configs/zoo/<model_type>.json``. Nothing
here builds a torch model: the table is read, so the measure runs in seconds.

``classify(table)`` loads every stored config through ``symgpt.load`` and sorts it:

- ``exact``: symgpt's parameter count equals the table's;
- ``refused``: symgpt raised ``SymgptError`` (one line, kept as the reason);
- ``wrong``: a number that differs from the table's;
- ``crash``: any other exception (a bug: symgpt must refuse in one line, never crash);
- ``unbuilt``: transformers itself cannot build its default configuration (no oracle).

For the exact ones with a FLOPs entry, the default-convention forward FLOPs at the table's B, T
(``model.quantity("flops.forward")``; the default convention counts what FlopCounterMode counts:
matmuls, 2 FLOPs per multiply-add, attention without a causal discount) are compared likewise.
Used by ``tests/test_zoo.py`` and ``benchmarks/zoo.py``.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

TESTS = Path(__file__).resolve().parent
TABLE_DIR = TESTS / "oracles" / "zoo"
CONFIG_DIR = TESTS / "configs" / "zoo"
VERSION = "5.24.0"  # the transformers release CI pins
STATUSES = ("exact", "refused", "wrong", "known-wrong", "crash", "unbuilt")


def table_path(version: str = VERSION) -> Path:
    return TABLE_DIR / f"transformers-{version}.json"


def read_table(version: str = VERSION) -> dict:
    return json.loads(table_path(version).read_text())


@dataclass
class Row:
    model_type: str
    cls: str
    params: int | None            # the oracle's
    status: str
    reason: str = ""              # refusal / error / difference, one line
    symgpt_params: int | None = None
    flops: int | None = None      # the oracle's (None: not measured)
    flops_status: str = ""        # exact | refused | wrong | crash | no oracle | "" (params not exact)
    flops_reason: str = ""
    symgpt_flops: int | None = None
    family: str = ""
    notes: list[str] = field(default_factory=list)


def _short(exc: BaseException, path: Path | None = None) -> str:
    text = " ".join(str(exc).split())
    if path is not None:
        text = text.replace(f"{path}: ", "").replace(str(path), "<config>")
    text = re.sub(r"; supported: .*", "", text)
    return text[:200]


def _value(q) -> int:
    v = getattr(q, "value", q)
    return int(v)


def classify_one(model_type: str, entry: dict, known_wrong=frozenset(), config_dir: Path = CONFIG_DIR) -> Row:
    import symgpt
    from symgpt.core.errors import SymgptError

    row = Row(model_type, entry["class"], entry.get("params"), "unbuilt", flops=entry.get("flops_forward"))
    path = config_dir / f"{model_type}.json"
    if entry.get("params") is None:
        row.reason = "transformers: " + (entry.get("build_error") or "no parameter count")
        return row
    try:
        m = symgpt.load(path)
        row.family = m.family.name
        row.symgpt_params = _value(m.params)
        row.notes = [" ".join(str(n).split()) for n in (getattr(m, "notes", ()) or ())]
    except SymgptError as exc:
        row.status, row.reason = "refused", _short(exc, path)
        return row
    except Exception as exc:  # noqa: BLE001 - a crash is what is being measured
        row.status, row.reason = "crash", f"{type(exc).__name__}: {_short(exc, path)}"
        return row
    if row.symgpt_params != row.params:
        row.status = "known-wrong" if model_type in known_wrong else "wrong"
        row.reason = f"symgpt {row.symgpt_params:,} != transformers {row.params:,}"
        return row
    row.status = "exact"
    if row.flops is None:
        row.flops_status = "no oracle"
        row.flops_reason = entry.get("flops_error") or ""
        return row
    try:
        mf = symgpt.load(path, B=entry.get("B", 1), T=entry.get("T", 8))
        row.symgpt_flops = _value(mf.quantity("flops.forward"))
    except SymgptError as exc:
        row.flops_status, row.flops_reason = "refused", _short(exc, path)
        return row
    except Exception as exc:  # noqa: BLE001
        row.flops_status, row.flops_reason = "crash", f"{type(exc).__name__}: {_short(exc, path)}"
        return row
    if row.symgpt_flops == row.flops:
        row.flops_status = "exact"
    else:
        row.flops_status = "wrong"
        row.flops_reason = f"symgpt {row.symgpt_flops:,} != FlopCounterMode {row.flops:,}"
    return row


def classify(table: dict, known_wrong=frozenset(), config_dir: Path = CONFIG_DIR) -> list[Row]:
    B, T = table["forward"]["B"], table["forward"]["T"]
    return [classify_one(mt, {**entry, "B": B, "T": T}, known_wrong, config_dir)
            for mt, entry in sorted(table["types"].items())]


def counts(rows: list[Row]) -> dict[str, int]:
    out = {s: 0 for s in STATUSES}
    for r in rows:
        out[r.status] += 1
    return out


def flops_counts(rows: list[Row]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        if r.flops_status:
            out[r.flops_status] = out.get(r.flops_status, 0) + 1
    return out


def markdown(rows: list[Row]) -> str:
    """The coverage table: one line per type (type, class, transformers' count, status, reason)."""
    lines = ["| type | class | params (transformers) | status | forward FLOPs | reason |",
             "|---|---|---:|---|---|---|"]
    for r in rows:
        p = f"{r.params:,}" if r.params is not None else "–"
        why = r.reason or r.flops_reason
        lines.append(f"| {r.model_type} | {r.cls} | {p} | {r.status} | {r.flops_status or '–'} | "
                     f"{why.replace('|', '/')} |")
    return "\n".join(lines) + "\n"

"""symgpt against every image-text-to-text and speech-seq2seq type of a transformers release.

The oracle is the table ``tests/oracles/vlm_zoo/transformers-<version>.json`` written by
``tests/oracles/vlm_zoo_build.py``: for each ``model_type`` of transformers'
``MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES`` and ``MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES``,
the class that mapping names built from the default configuration on the meta device,
``sum(p.numel() for p in model.parameters())``. The configurations, as Hub ``config.json``
files, are ``tests/configs/vlm_zoo/<model_type>.json``. Nothing here builds a torch model.

Each type is sorted as the causal-LM zoo sorts it (``zoo_coverage.classify_one``): exact,
refused (one ``SymgptError`` line), wrong, crash, or unbuilt (transformers cannot build its own
default configuration: no oracle). Coverage is exact / built. Used by ``tests/test_vlm_zoo.py``
and ``benchmarks/vlm_zoo.py``.
"""
from __future__ import annotations

import json
from pathlib import Path

import zoo_coverage
from zoo_coverage import Row, counts  # noqa: F401 - re-exported for the test

TESTS = Path(__file__).resolve().parent
TABLE_DIR = TESTS / "oracles" / "vlm_zoo"
CONFIG_DIR = TESTS / "configs" / "vlm_zoo"
VERSION = "5.24.0"  # the transformers release CI pins
MAPPINGS = ("MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES", "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES")


def table_path(version: str = VERSION) -> Path:
    return TABLE_DIR / f"transformers-{version}.json"


def read_table(version: str = VERSION) -> dict:
    return json.loads(table_path(version).read_text())


def classify_one(model_type: str, entry: dict, known_wrong=frozenset(), config_dir: Path = CONFIG_DIR) -> Row:
    """One type, sorted as the causal-LM zoo sorts it, its config read from *config_dir*."""
    return zoo_coverage.classify_one(model_type, entry, known_wrong, config_dir)


def classify(table: dict, known_wrong=frozenset(), config_dir: Path = CONFIG_DIR) -> list[Row]:
    # parameters only: the table has no FLOPs (classify_one then reports "no oracle" for them)
    return [classify_one(mt, {**entry, "flops_forward": None}, known_wrong, config_dir)
            for mt, entry in sorted(table["types"].items())]


def coverage(rows: list[Row]) -> tuple[int, int]:
    """(exact, built): the measure is exact / built."""
    c = counts(rows)
    return c["exact"], len(rows) - c["unbuilt"]


def markdown(rows: list[Row], mapping_of: dict[str, str] | None = None) -> str:
    """One line per type: type, mapping, class, transformers' count, status, reason."""
    lines = ["| type | mapping | class | params (transformers) | status | reason |", "|---|---|---|---:|---|---|"]
    for r in rows:
        p = f"{r.params:,}" if r.params is not None else "–"
        m = (mapping_of or {}).get(r.model_type, "")
        m = "image-text-to-text" if "IMAGE" in m else "speech-seq2seq" if "SPEECH" in m else m
        lines.append(f"| {r.model_type} | {m} | {r.cls} | {p} | {r.status} | {(r.reason or '').replace('|', '/')} |")
    return "\n".join(lines) + "\n"

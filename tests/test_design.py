"""docs/DESIGN.md is the newcomer's map: every path and every dotted ``symgpt.`` name it cites in
backticks must exist, so the page cannot drift from the package again."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DESIGN = (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")
TICKED = re.findall(r"`([^`\n]+)`", DESIGN)

#: a cited file or folder: ends in .py or / (relative to the repository, or to symgpt/)
PATHS = sorted({t for t in TICKED if re.fullmatch(r"[\w./-]+(\.py|/)", t)})
#: a cited dotted name of the package: symgpt.a.b.NAME
NAMES = sorted({t for t in TICKED if re.fullmatch(r"symgpt(\.\w+)+", t)})


def _exists(path: str) -> bool:
    return any((base / path).exists() for base in (ROOT, ROOT / "symgpt"))


def _resolve(dotted: str):
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def test_the_page_cites_paths_and_names():
    assert len(PATHS) > 30 and len(NAMES) > 10


@pytest.mark.parametrize("path", PATHS)
def test_every_cited_path_exists(path):
    assert _exists(path), f"docs/DESIGN.md cites {path}, which does not exist"


@pytest.mark.parametrize("name", NAMES)
def test_every_cited_name_exists(name):
    _resolve(name)


def test_the_layer_diagram_names_every_package_of_the_table():
    from symgpt.core.import_layers import LAYERS

    for layer, packages in LAYERS:
        assert re.search(rf"^ {layer}\b", DESIGN, re.M), f"the diagram has no row for layer {layer}"
        for p in packages:
            short = p.removeprefix("symgpt.").replace(".", "/")
            assert short in ("version",) or f"{short}/" in DESIGN or f"{short}.py" in DESIGN, p


def test_the_checker_catches_a_missing_path_and_name():
    assert not _exists("symgpt/no_such_module.py")
    with pytest.raises((ModuleNotFoundError, AttributeError)):
        _resolve("symgpt.model.model.NO_SUCH_TABLE")

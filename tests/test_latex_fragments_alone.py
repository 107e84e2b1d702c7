"""Every LaTeX fragment (each section's templates, and `symgpt table`'s output) compiles on its
own in a bare article that loads exactly the packages its header names ``(needs a, b)``: a
reader who pastes it with those packages gets no ``Environment adjustbox undefined``. The
oracle is pdflatex itself; the fragment must also print its headline number."""

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import helpers
import symgpt
from symgpt.documents.latex_doc import SECTIONS, fragment
from symgpt.documents.report import report_model

ROOT = Path(__file__).resolve().parents[1]
NEEDS = re.compile(r"^% symgpt: .*?\(needs ([^)]*)\)\s*$", re.M)
EXTRA = {"pgfplots": r"\pgfplotsset{compat=1.18}"}


def pieces(text: str) -> list[tuple[list[str], str]]:
    """Split generated LaTeX at its ``% symgpt:`` header lines: (packages named, the piece)."""
    starts = [m.start() for m in re.finditer(r"^% symgpt: ", text, re.M)]
    assert starts and starts[0] == text.find("% symgpt: "), text[:200]
    out = []
    for a, b in zip(starts, [*starts[1:], len(text)]):
        piece = text[a:b]
        m = NEEDS.match(piece)
        out.append(([p.strip() for p in m.group(1).split(",")] if m else [], piece))
    return out


def alone(packages: list[str], body: str) -> str:
    lines = [r"\documentclass{article}"]
    lines += [rf"\usepackage{{{p}}}" + ("\n" + EXTRA[p] if p in EXTRA else "") for p in packages]
    return "\n".join([*lines, r"\begin{document}", body, r"\end{document}", ""])


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    m = report_model(symgpt.load("gpt2-small"))
    docs = []
    for name in SECTIONS:
        for i, (pkgs, piece) in enumerate(pieces(fragment(m, name))):
            docs.append((f"{name}{i}", pkgs, piece))
    table = subprocess.run([sys.executable, "-m", "symgpt", "table", "gpt2-small", "gpt2-medium",
                            "--columns", "L,d,params"], cwd=ROOT, capture_output=True, text=True, check=True)
    docs += [(f"table{i}", pkgs, piece) for i, (pkgs, piece) in enumerate(pieces(table.stdout))]
    base = tmp_path_factory.mktemp("alone")
    paths = []
    for name, pkgs, piece in docs:
        (base / name).mkdir()
        tex = base / name / f"{name}.tex"
        tex.write_text(alone(pkgs, piece))
        paths.append(tex)
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(helpers.compile_tex, paths))
    return {name: (pkgs, piece, res) for (name, pkgs, piece), res in zip(docs, results)}


def test_every_fragment_compiles_with_exactly_its_named_packages(compiled):
    assert len(compiled) >= len(SECTIONS) + 1
    failed = {name: res[1][-600:] for name, (pkgs, piece, res) in compiled.items() if res[0] != 0}
    assert not failed, failed


def test_headers_name_what_the_tables_use(compiled):
    # the bug: tables wrapped in adjustbox said "(needs booktabs)"
    for name, (pkgs, piece, _) in compiled.items():
        if r"\begin{adjustbox}" in piece:
            assert "adjustbox" in pkgs, name
        if r"\toprule" in piece:
            assert "booktabs" in pkgs, name


def test_a_compiled_fragment_shows_its_number(compiled):
    # GPT-2-small: 124,439,808 parameters (hand count in README / lecture note 7.3)
    words = re.sub(r"\s+", " ", compiled["total0"][2][2])
    assert "124,439,808" in words, words[:500]
    table = re.sub(r"\s+", " ", compiled["table0"][2][2])
    assert "124.4 M" in table and "354.8 M" in table, table  # 124,439,808 and 354,823,168

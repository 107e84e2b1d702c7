"""Every kind of generated LaTeX document compiles with latexmk (no errors), shows the expected
numbers in the PDF's text (pdftotext), and matches its golden source (tests/golden/latex_*.tex;
regenerate with SYMGPT_REGEN_GOLDEN=1). One latexmk call per document, two at a time."""

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import helpers
import symgpt
from symgpt.documents.latex_doc import document, preamble
from symgpt.documents.report import report_model

ROOT = Path(__file__).resolve().parents[1]
WEIRD = "my_model&v2%#$"
HF_SMALL = {"model_type": "gpt2", "n_layer": 2, "n_head": 4, "n_embd": 64, "vocab_size": 1000, "n_positions": 64}


def cli(*args, cwd=ROOT):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "symgpt", *args], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def compile_pdf(tex: Path) -> tuple[int, str, str]:
    return helpers.compile_tex(tex, layout=True)


def golden(name: str, text: str) -> None:
    helpers.golden(f"latex_{name}.tex", text)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Generate every kind of document, then compile them all (two latexmk at a time)."""
    assert shutil.which("latexmk") and shutil.which("pdftotext"), "TeX and poppler are required"
    base = tmp_path_factory.mktemp("latex")
    docs: dict[str, Path] = {}

    def put(name, text):
        d = base / name
        d.mkdir()
        (d / f"{name}.tex").write_text(text)
        docs[name] = d / f"{name}.tex"

    # 1. the full report document of GPT-2-small (lecture note 7.3's notation)
    put("gpt2small", document(report_model(symgpt.load("gpt2-small"))))
    # 2. lesson LM4-T5's parameters in lesson LM4-T5's notation (no Q/K/V biases)
    put("raschka", document(symgpt.load("gpt2-small", qkv_bias=False), ("notation", "params", "breakdown"), "raschka"))
    # 3. a model from a config file with a hostile name, in Kaplan's notation
    cfg = base / f"{WEIRD}.json"
    cfg.write_text(json.dumps(HF_SMALL))
    put("weird", document(report_model(symgpt.load(cfg)), ("notation", "shapes", "params", "breakdown"), "kaplan"))
    # 4. every fragment, written by the CLI in a user's notation, \input into the user's own notes
    prof = base / "course.txt"
    prof.write_text("# my course\nL = \\ell\nT = n\nT_max = n_{\\max}\nparams = P\n")
    frag = base / "fragments"
    frag.mkdir()
    (frag / "preamble.tex").write_text(preamble())
    cli("latex", "gpt2-medium", "--notation", str(prof), "-o", str(frag / "notes-part.tex"))
    (frag / "fragments.tex").write_text("\\documentclass{article}\n\\input{preamble}\n\\usepackage{float}\n"
                                        "\\begin{document}\n\\input{notes-part}\n\\end{document}\n")
    docs["fragments"] = frag / "fragments.tex"
    # 5. the scaling table, standalone, with quantity columns and a caption full of specials
    put("scaling", cli("table", "gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl", "gpt3-175b",
                       "--columns", "L,h,d,d_ff,T_max,params,flops.train", "--standalone",
                       "--caption", "Sizes & costs: 100% of #params_{x} ~ $5"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(docs, pool.map(compile_pdf, docs.values())))
    return docs, results


@pytest.mark.parametrize("name", ["gpt2small", "raschka", "weird", "fragments", "scaling"])
def test_compiles_without_errors(built, name):
    docs, results = built
    rc, log, text = results[name]
    errors = [line for line in log.splitlines() if line.startswith("!")]
    assert rc == 0 and not errors, errors[:3]
    assert "Undefined control sequence" not in log and "There were undefined references" not in log
    assert text.strip()


@pytest.mark.parametrize("name,expected", [
    ("gpt2small", ["124,439,808", "7,087,872", "85,054,464", "39,385,344", "38,597,376", "786,432",
                   "123,533,568", "124.4 M", "1.772 × 10", "6.324 × 10", "T = 6d = 4,608", "249 MB", "1.49 GB",
                   "feed-forward 45.5 %", "token embedding 31.0 %", "attention 22.8 %", "(8, 12, 1,024, 1,024)"]),
    ("raschka", ["124,412,160", "85,026,816", "2,360,064", "4,722,432", "163.0 M", "12N d", "feed-forward 45.5 %"]),
    ("weird", [WEIRD, "168,192"]),
    ("fragments", ["gpt2-medium", "354,823,168", "course profile", "gpt3-175b", "4,096"]),
    ("scaling", ["Sizes & costs: 100% of #params", "{x}", "$5", "124.4 M", "1.558 B", "174.6 B", "12,288"]),
])
def test_pdf_text(built, name, expected):
    _, results = built
    text = " ".join(results[name][2].split())
    for s in expected:
        assert s in text, s


@pytest.mark.parametrize("name", ["gpt2small", "raschka", "weird", "scaling"])
def test_golden_sources(built, name):
    docs, _ = built
    golden(name, docs[name].read_text())


def test_sources_are_deterministic():
    a = document(report_model(symgpt.load("gpt2-small")))
    b = document(report_model(symgpt.load("gpt2-small")))
    assert a == b and "\\today" not in a and "pdfinfoomitdate" in a

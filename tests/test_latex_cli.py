"""``symgpt latex``, ``symgpt table`` and the LaTeX part of ``symgpt report``: options, output
files, errors as one line; and regenerating the committed output/gpt2-small changes nothing."""

import filecmp
import json
from pathlib import Path

import pytest

from symgpt.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args,needles", [
    (["latex", "gpt2-small", "--what", "total"], [r"\begin{align*}", "124{,}439{,}808"]),
    (["latex", "gpt2-small", "--what", "blocks", "--notation", "raschka"], [r"\mathbf{7{,}087{,}872}"]),
    (["latex", "gpt2-small", "--what", "total", "--notation", "megatron"], [r"12 l h^{2}"]),
    (["latex", "gpt2", "--what", "total"], [r"12 L d^{2} + 13 L d + T_{\max} d + V d + 2 d"]),
    (["latex", "gpt2-small", "--what", "total", "--standalone"], [r"\documentclass", r"\end{document}"]),
    # lecture note 7.3 §5.1 exactly: 24*1024*768^2 + 4*1024^2*768 = 14,495,514,624 + 3,221,225,472
    (["latex", "gpt2-small", "--what", "flops", "--numbers", "exact"], ["&= 17{,}716{,}740{,}096."]),
    (["latex", "gpt2-small", "--what", "flops", "--digits", "3"], [r"&= 1.77 \times 10^{10}."]),
    # Kaplan counts Q.K^T only: 2T^2d per block instead of 4T^2d
    (["latex", "gpt2-small", "--what", "flops", "--convention", "kaplan"], [r"C_{\text{block}} &= 2 T^{2} d + 24 T d^{2}"]),
    (["latex", "gpt2-small", "--preamble"], [r"\usepackage{booktabs}", r"\usepackage{siunitx}"]),
    (["table", "gpt2-small", "gpt2-xl", "--format", "markdown"], ["| gpt2-xl | 48 | 25 | 1,600 | 6,400 | 1,024 | 1.558 B |"]),
    (["table", "gpt2-small", "--columns", "params", "--numbers", "exact"], [r"$124{,}439{,}808$"]),
    (["table", "gpt2-small", "--columns", "L,params", "--format", "csv"], ["model,L,params\r\ngpt2-small,12,124439808\r\n"]),
])
def test_commands(capsys, args, needles):
    code, out, err = run(capsys, *args)
    assert code == 0, err
    for n in needles:
        assert n in out


def test_csv_defuses_formulas_in_names(capsys, tmp_path):
    cfg = tmp_path / "=HYPERLINK(x).json"
    cfg.write_text(json.dumps({"model_type": "gpt2", "n_layer": 2, "n_head": 4, "n_embd": 64,
                               "vocab_size": 1000, "n_positions": 64}))
    code, out, err = run(capsys, "table", str(cfg), "--columns", "params", "--format", "csv")
    assert code == 0, err
    assert out.splitlines()[1].startswith("\"'=HYPERLINK(x)\",")


@pytest.mark.parametrize("args,message", [
    (["latex", "gpt2-small", "--what", "nope"], "invalid choice"),
    (["latex", "gpt2-small", "--notation", "nope"], "unknown notation 'nope'"),
    (["table", "gpt2-small", "--columns", "L,bogus"], "unknown column 'bogus'"),
    (["table", "gpt2-small", "--columns", ""], "empty column name"),
])
def test_errors_are_one_line(capsys, args, message):
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("symgpt: error: ") and message in err


def test_output_file(capsys, tmp_path):
    target = tmp_path / "sub" / "blocks.tex"
    code, out, _ = run(capsys, "latex", "gpt2-small", "--what", "blocks", "-o", str(target))
    assert code == 0 and target.read_text().startswith("% symgpt: parameters per block")
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".")]  # no temp file left


def test_report_is_unchanged(capsys, tmp_path):
    """A fresh report equals the committed output/gpt2-small (the PDF aside)."""
    fresh = tmp_path / "gpt2-small"
    code, _, err = run(capsys, "report", "gpt2-small", "-o", str(fresh), "--no-pdf")
    assert code == 0, err
    committed = ROOT / "output" / "gpt2-small"
    names = sorted(str(p.relative_to(committed)) for p in committed.rglob("*") if p.is_file() and p.suffix != ".pdf")
    made = sorted(str(p.relative_to(fresh)) for p in fresh.rglob("*") if p.is_file())
    assert made == names
    # graph.svg is laid out by Graphviz with the fonts of the machine that ran it: compare what
    # it says (titles and texts), not its coordinates; every file symgpt writes itself, byte for byte
    same = [n for n in names if n not in ("index.md", "graph.svg", "html/index.html", ".symgpt-files")]
    _, mismatch, errors = filecmp.cmpfiles(committed, fresh, same, shallow=False)
    assert not mismatch and not errors, mismatch + errors
    assert _svg_words(committed / "graph.svg") == _svg_words(fresh / "graph.svg")
    # the interactive page embeds that drawing: the rest of it byte for byte
    assert _page_without_graph(committed) == _page_without_graph(fresh)
    # the index and the list of written files name the PDF only when one was built
    for listing in ("index.md", ".symgpt-files"):
        no_pdf = [line for line in (committed / listing).read_text().splitlines() if ".pdf" not in line]
        assert (fresh / listing).read_text().splitlines() == no_pdf
    assert (fresh / "latex" / "report.tex").exists() and (fresh / "latex" / "blocks.tex").exists()


def _page_without_graph(folder):
    import re

    text = (folder / "html" / "index.html").read_text(encoding="utf-8")
    return re.sub(r'<div id="graph">.*?</svg></div>', "", text, count=1, flags=re.S)


def _svg_words(path):
    """The node titles and text lines of an SVG, in document order (layout-independent)."""
    import xml.etree.ElementTree as ET

    ns = "{http://www.w3.org/2000/svg}"
    root = ET.parse(path).getroot()
    return [(el.tag.replace(ns, ""), (el.text or "").strip())
            for el in root.iter() if el.tag in (ns + "title", ns + "text")]

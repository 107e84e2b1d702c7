"""Nothing symgpt prints, writes or draws cites documents its readers cannot look up (the
internal lecture notes the tests use as oracles: their names, section numbers, lesson codes,
or the internal reference file): CLI output and --help of every command, JSON, `check`, the
report's files (Markdown, JSON, LaTeX, SVG, DOT) and the committed report's PDF text."""

import re
import subprocess
from pathlib import Path

import pytest

import clirun
from symgpt.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
INTERNAL = re.compile(r"\bseeds?\b|seed ?00\d|§ ?[0-9]|conventions\.md|LM4-T\d", re.I)

COMMANDS_RUN = [
    ["--help"], *[[c, "--help"] for c in COMMANDS],
    ["models", "--notes"], ["params", "gpt2-small"], ["params", "gpt2-small", "--json"],
    ["params", "llama-70b", "--json"], ["check"], ["check", "--json"],
    ["flops", "gpt2-small", "--set", "B=8", "--set", "T=1024"],
    ["flops", "gpt2", "--convention", "kaplan", "--json"],
    ["memory", "gpt2-small", "--set", "B=8", "--set", "T=1024"],
    ["memory", "gpt2-small", "--set", "B=8", "--set", "T=1024", "--json"],
    ["time", "gpt2-small", "--set", "B=8", "--set", "T=1024", "--json"],
    ["time", "gpt2-small", "--set", "B=8", "--set", "T=1024"],
    ["rule", "gpt2-small", "params", "--as", "d"], ["rule", "gpt2-small", "params", "--as", "d", "--json"],
    ["latex", "gpt2-small", "--standalone", "--set", "B=8", "--set", "T=1024"],
    ["latex", "gpt2-small", "--what", "breakdown", "--notation", "raschka"],
    ["table", "gpt2-small", "llama-7b", "--format", "markdown"],
    ["graph", "gpt2-small", "--format", "dot"],
]


def test_the_source_tree_names_no_internal_document():
    # the issue's own check: nothing under symgpt/ or templates/ (tests may cite the notes)
    r = subprocess.run(["git", "grep", "-n", "-i", "-E", r"\bseeds?\b|§ ?[0-9]|conventions\.md", "--",
                        "symgpt", "templates"], cwd=ROOT, capture_output=True, text=True)
    assert r.stdout == "", r.stdout


@pytest.mark.parametrize("argv", COMMANDS_RUN, ids=" ".join)
def test_command_output_names_public_sources_only(argv):
    r = clirun.run(argv)
    assert r.returncode == 0, r.stderr
    hits = INTERNAL.findall(r.stdout + r.stderr)
    assert not hits, (hits, [line for line in r.stdout.splitlines() if INTERNAL.search(line)][:5])


def test_report_files_name_public_sources_only(tmp_path):
    r = clirun.run(["report", "gpt2-small", "--no-pdf", "-o", str(tmp_path / "r")])
    assert r.returncode == 0, r.stderr
    files = [p for p in (tmp_path / "r").rglob("*") if p.is_file()]
    assert len(files) > 10
    bad = {p.name: INTERNAL.findall(p.read_text(errors="replace")) for p in files}
    assert not {k: v for k, v in bad.items() if v}


def test_committed_report_pdf_names_public_sources_only():
    pdf = ROOT / "output" / "gpt2-small" / "latex" / "report.pdf"
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    assert "124,439,808" in text  # the PDF is the real report (GPT-2-small's parameter count)
    assert not INTERNAL.findall(text)

"""User text is escaped in every LaTeX, DOT, SVG, Markdown and CSV output. A model
is loaded from a config file whose name (hence the model's name) and one of whose field names
(which lands in the model's notes) are hostile; each printer's output is checked by what reads
it: pdflatex compiles it and prints the name literally, Graphviz draws the same graph as for a
benign name, the SVG parses with no script, Markdown tables keep their columns, CSV
round-trips."""

import csv
import io
import json
import re
import subprocess
import xml.etree.ElementTree as ET

import pytest

from attacks import check_cli, run_cli

CONFIG = {"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "vocab_size": 100,
          "n_positions": 32}

HOSTILE = [
    "my_model&v2%#$",
    r"\input{etc-passwd}\write18{touch pwned}",
    '"];evil[label="x',
    "<img src=x onerror=alert(1)><script>alert(1)<",
    "{{ 7*7 }}{% raw %}^^5c~",
    "=HYPERLINK(1)|@SUM(1)|+1",
    "line\nbreak\ttab",
    "[x](javascript:alert(1)) *bold* `code` # head",
]
BENIGN = "plain"


@pytest.fixture
def configs(tmp_path, monkeypatch):
    """name -> path of a config file named after it (plus a hostile field name)."""
    monkeypatch.chdir(tmp_path)
    out = {}
    for name in HOSTILE + [BENIGN]:
        cfg = dict(CONFIG)
        if name != BENIGN:
            cfg[name] = 1  # not understood: named in the model's notes
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(cfg))
        out[name] = "./" + path.name
    return out


def cli(*argv) -> str:
    r = run_cli(list(argv))
    check_cli(r, allow=(0,))
    return r.out


def flat(name: str) -> str:
    return " ".join(name.split())


# --- LaTeX ------------------------------------------------------------------------------------------
def test_latex_never_carries_raw_commands(configs):
    for name in HOSTILE:
        for out in (cli("latex", configs[name], "--what", "params", "--what", "shapes"),
                    cli("table", configs[name], "--format", "latex", "--caption", name),
                    cli("table", "gpt2-small", "--format", "latex", "--columns", "L,d,params",
                        "--caption", name)):
            for raw in (r"\input{", r"\write18", "{{ 7*7 }}", "{% raw %}", "^^5c", "\n" + "break"):
                assert raw not in out, (name, raw)


def test_latex_documents_compile_and_show_the_name_literally(configs, tmp_path):
    name = HOSTILE[0] + " " + HOSTILE[1]
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(CONFIG))
    doc = cli("table", str(path), "--format", "latex", "--standalone", "--caption", name,
              "--columns", "L,d,params")
    (tmp_path / "doc.tex").write_text(doc)
    r = subprocess.run(["pdflatex", "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error",
                        "doc.tex"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:]
    assert not (tmp_path / "pwned").exists()
    text = subprocess.run(["pdftotext", "doc.pdf", "-"], cwd=tmp_path, capture_output=True,
                          text=True).stdout
    squashed = "".join(text.split())
    assert "model&v2%#$" in squashed  # (pdftotext drops the underscore, a drawn rule in OT1)
    assert r"\input{etc-passwd}\write18{touchpwned}" in squashed


# --- DOT and SVG ------------------------------------------------------------------------------------
def _graph_shape(dot_text: str) -> tuple[int, int]:
    r = subprocess.run(["dot", "-Tjson"], input=dot_text, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-1000:]
    g = json.loads(r.stdout)
    return len(g.get("objects", [])), len(g.get("edges", []))


def test_dot_draws_the_same_graph_whatever_the_name(configs):
    reference = _graph_shape(cli("graph", configs[BENIGN]))
    for name in HOSTILE:
        text = cli("graph", configs[name])
        assert _graph_shape(text) == reference, name


def test_svg_parses_and_has_no_script(configs, tmp_path):
    for i, name in enumerate(HOSTILE):
        out = tmp_path / f"g{i}.svg"
        cli("graph", configs[name], "-o", str(out))
        root = ET.fromstring(out.read_bytes())
        for el in root.iter():
            tag = el.tag.rsplit("}", 1)[-1]
            assert tag not in ("script", "foreignObject", "img"), (name, tag)
            assert not any(a.lower().startswith("on") for a in el.attrib), (name, el.attrib)
        text = "".join(el.text or "" for el in root.iter())
        assert "".join(name.split()) in "".join(text.split()), name  # shown as data


# --- Markdown ---------------------------------------------------------------------------------------
def _md_tables_keep_their_columns(text: str, where: str) -> None:
    """Each table (a run of lines starting with '|') has one width: no name added a column."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    for rows in tables:
        widths = {len(re.split(r"(?<!\\)\|", r)) for r in rows}
        assert len(widths) == 1, f"{where}: table rows of different widths {widths}: {rows[:3]}"


def test_markdown_outputs_escape_names(configs, tmp_path):
    for i, name in enumerate(HOSTILE):
        out = cli("table", configs[name], "gpt2-small", "--format", "markdown", "--caption", name)
        _md_tables_keep_their_columns(out, name)
        folder = tmp_path / f"rep{i}"
        cli("report", configs[name], "-o", str(folder), "--no-pdf")
        for md in sorted(folder.glob("*.md")):
            text = md.read_text()
            _md_tables_keep_their_columns(text, f"{name}: {md.name}")
            for raw in ("<img", "<script", "](javascript:", "{{ 7*7 }}"):
                assert raw not in text, (name, md.name, raw)
        for tex in sorted(folder.rglob("*.tex")):
            text = tex.read_text()
            assert r"\write18" not in text and r"\input{etc" not in text, (name, tex.name)


# --- CSV --------------------------------------------------------------------------------------------
def test_csv_round_trips_and_defuses_formulas(configs):
    for name in HOSTILE:
        out = cli("table", configs[name], "gpt2-small", "--format", "csv", "--columns", "L,d,params")
        rows = list(csv.reader(io.StringIO(out)))
        assert [len(r) for r in rows] == [4, 4, 4], (name, rows)
        cell = rows[1][0]
        assert not cell.startswith(("=", "+", "-", "@")), (name, cell)
        assert cell.lstrip("'") == flat(name), (name, cell)


def test_sweep_csv_round_trips(configs):
    for name in HOSTILE:
        out = cli("sweep", configs[name], "--grid", "L=1:2:1", "--no-progress")
        rows = list(csv.reader(io.StringIO(out)))
        assert len({len(r) for r in rows}) == 1 and len(rows) == 3, (name, rows)
        for row in rows[1:]:
            for cell in row:
                assert not cell.startswith(("=", "+", "@")), (name, cell)

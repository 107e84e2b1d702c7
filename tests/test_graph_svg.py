"""The diagram through Graphviz: the SVG parsed back (nodes, the block cluster and its × L label,
tied weights, edge shapes against the shape trace), determinism across runs and hash seeds,
PNG/PDF output, the CLI, the report part, and the clear error when ``dot`` is missing."""

import hashlib
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import symgpt
from symgpt.cli import main
from symgpt.core.errors import SymgptError
from symgpt.families import family
from symgpt.model.model import Model
from symgpt.documents.diagrams import diagram

NS = {"s": "http://www.w3.org/2000/svg"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def groups(svg: str, cls: str) -> dict[str, list[str]]:
    """title -> the texts drawn in it, for every <g class=cls> of the SVG."""
    root = ET.fromstring(svg)
    found = {"node": {}, "edge": {}, "cluster": {}, "graph": {}}
    for g in root.iter("{http://www.w3.org/2000/svg}g"):
        if g.get("class") in found:
            title = g.find("s:title", NS).text
            found[g.get("class")][title] = [t.text or "" for t in g.iter("{http://www.w3.org/2000/svg}text")]
    # a data edge across a cluster border is drawn through a text node "src -> dst" that carries
    # its shape (edges src->mid, mid->dst): read it back as the one labelled edge it stands for
    for mid in [t for t in found["node"] if " -> " in t]:
        src, dst = mid.split(" -> ")
        assert found["edge"].pop(f"{src}->{mid}") == [] and found["edge"].pop(f"{mid}->{dst}") == [], mid
        found["edge"][f"{src}->{dst}"] = found["node"].pop(mid)
    return found[cls]


@pytest.fixture(scope="module")
def t3():
    m = symgpt.load("gpt2-small", B=1, T=3)
    return m, diagram(m).svg()


def test_svg_has_every_node(t3):
    m, svg = t3
    nodes = groups(svg, "node")
    assert set(nodes) == set(m.arch.order) | {"embedding/token.weight"}
    assert "tok_emb" in nodes["embedding/token"] and "logits" in nodes["lm_head"]


def test_svg_block_cluster_and_repeat_label(t3):
    _, svg = t3
    clusters = groups(svg, "cluster")
    assert list(clusters) == ["cluster_blocks"]
    label = " ".join(clusters["cluster_blocks"])
    assert "Transformer block" in label and "× L = 12" in label


def test_svg_edges_carry_the_traced_shapes(t3):
    m, svg = t3
    edges = groups(svg, "edge")
    trace = {t.name: "(" + ", ".join(str(int(x)) for x in t.shape) + ")" for t in m.shapes(B=1, T=3)}
    data = [(u, v) for u, v, a in m.graph.edges(data=True) if a["kind"] == "data"]
    assert len(data) == 32
    for u, v in data:
        assert edges[f"{u}->{v}"] == [trace[u]], (u, v)
    # the worked-example note at T = 3: scores per head (3, 3), 12 heads of 64, logits (3, 50257)
    assert edges["blocks/attention/scores->blocks/attention/scale"] == ["(1, 12, 3, 3)"]
    assert edges["blocks/attention/q_heads->blocks/attention/scores"] == ["(1, 12, 3, 64)"]
    assert edges["lm_head->loss"] == ["(1, 3, 50257)"]


def test_svg_tied_weight(t3):
    _, svg = t3
    edges = groups(svg, "edge")
    assert edges["embedding/token.weight->lm_head"] == ["same 50257×768 matrix"]
    assert edges["embedding/token.weight->embedding/token"] == ["weight"]
    root = ET.fromstring(svg)
    for g in root.iter("{http://www.w3.org/2000/svg}g"):
        if g.get("class") == "edge" and g.find("s:title", NS).text == "embedding/token.weight->lm_head":
            assert g.find("s:path", NS).get("stroke-dasharray")


def test_svg_escapes_user_text():
    evil = 'my_model&v2%#$"<b>{x}|y\\N\nz.json'
    m = Model(evil, family("gpt2"), sizes={"L": 2, "h": 2, "d": 8, "V": 11, "T_max": 5})
    texts = [t for ts in groups(diagram(m).svg(), "graph").values() for t in ts]
    assert 'my_model&v2%#$"<b>{x}|y\\N' in texts and "z.json" in texts


def test_svg_deterministic_and_comment_free(t3):
    m, svg = t3
    assert diagram(m).svg() == svg
    assert "<!--" not in svg and "graphviz version" not in svg.lower()


def _cli(*args, seed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": ROOT}
    done = subprocess.run([sys.executable, "-m", "symgpt", "graph", "gpt2-small", "--set", "B=1",
                           "--set", "T=3", *args], capture_output=True, env=env, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_deterministic_across_hash_seeds():
    svg = {_cli("--format", "svg", seed=s) for s in ("0", "4242")}
    dot = {_cli("--format", "dot", "--color-by", "flops", seed=s) for s in ("1", "977")}
    assert len(svg) == 1 and len(dot) == 1
    assert next(iter(svg)).startswith(b"<?xml")


def test_png_and_pdf(tmp_path):
    d = diagram(symgpt.load("gpt2-small", B=1, T=3))
    png = d.render("png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png == d.render("png")
    pdf = d.render("pdf")
    assert pdf.startswith(b"%PDF") and hashlib.sha256(pdf).digest() == hashlib.sha256(d.render("pdf")).digest()
    d.save(tmp_path / "g.pdf")
    assert (tmp_path / "g.pdf").read_bytes() == pdf


def test_notebook_repr(t3):
    m, svg = t3
    assert diagram(m)._repr_svg_() == svg


def test_cli_writes_files_and_prints_dot(tmp_path, capsys):
    assert main(["graph", "gpt2-small", "-o", str(tmp_path / "g.svg")]) == 0
    ET.fromstring((tmp_path / "g.svg").read_text())
    assert main(["graph", "gpt2-small", "-o", str(tmp_path / "g.gv")]) == 0
    assert (tmp_path / "g.gv").read_text().startswith("digraph symgpt {")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp files left
    capsys.readouterr()
    assert main(["graph", "gpt2-small", "--format", "dot", "--set", "T=3", "--set", "B=1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("digraph symgpt {") and "(1, 3, 768)" in out


@pytest.mark.parametrize("argv,message", [
    (["graph", "gpt2-small", "--format", "png"], "png is binary: give -o FILE"),
    (["graph", "gpt2-small", "-o", "x.txt"], "cannot tell the format of 'x.txt'"),
    (["graph", "gpt3-175b", "--unroll", "--format", "dot"], "96 copies is more than 64"),
    (["graph", "gpt2-small", "--color-by", "speed"], "invalid choice: 'speed'"),
])
def test_cli_errors_are_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_without_dot_on_path(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no dot anywhere
    d = diagram(symgpt.load("gpt2-small"))
    assert d.dot.startswith("digraph")  # DOT needs no Graphviz
    assert main(["graph", "gpt2-small", "--format", "dot"]) == 0
    assert capsys.readouterr().out.startswith("digraph symgpt {")
    with pytest.raises(SymgptError, match="apt-get install graphviz"):
        d.svg()
    assert main(["graph", "gpt2-small", "-o", str(tmp_path / "g.svg")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("symgpt: error: Graphviz's 'dot' program is not installed") and err.count("\n") == 1
    assert "apt-get install graphviz" in err and not (tmp_path / "g.svg").exists()


def test_dot_failure_is_one_clear_error():
    from symgpt.external.graphviz import render

    with pytest.raises(SymgptError, match="^Graphviz's dot failed: "):
        render("digraph { a -> }", "svg")


def test_report_part(tmp_path):
    from symgpt.documents.reportparts import graph

    m = symgpt.load("gpt2-small", B=8, T=1024)
    assert graph.write(m, tmp_path) == ["graph.dot", "graph.svg"]
    svg = (tmp_path / "graph.svg").read_text()
    assert "cluster_blocks" in groups(svg, "cluster")
    assert (tmp_path / "graph.dot").read_text() == diagram(m, color_by="flops").dot

"""`symgpt graph --unroll` and Graphviz's layout time: the estimate read from the DOT text (ranks by
longest path, long edges passing through ranks, sum of squared rank widths) against a graph worked
out by hand; the measured cases of benchmarks/UNROLL.md (GPT-2 XL unrolled laid out in about a
second; Mixtral at L = 12 ran past dot's 60 s timeout) accepted and refused; --help states the
same thresholds as the refusal."""

import subprocess
import sys

from symgpt.external.graphviz import MAX_LAYOUT, NOTICE_LAYOUT, layout_cost

HAND = """digraph g {
  node [shape=box];
  "a" [label=<a>];
  "b" [label=<b>];
  "c" [label=<c>];
  "d" [label=<d>];
  "a" -> "b" [label=<x>];
  "b" -> "c";
  "a" -> "c";
  "a" -> "d";
  "c" -> "d";
  "b" -> "d" [style=dashed, constraint=false];
  "d" -> "a" [constraint=false];
}
"""


def test_estimate_of_a_hand_built_graph():
    # by hand: ranks by longest path over the constraining edges: a 0, b 1, c 2, d 3 (the two
    # constraint=false edges do not rank, d -> a makes no cycle). Edges passing through a rank:
    # a->c rank 1; a->d ranks 1, 2; b->d rank 2; d->a ranks 1, 2: 6 passes.
    # Widths: 1, 1 + 3, 1 + 3, 1 -> 1 + 16 + 16 + 1 = 34, plus 4 nodes = 38.
    c = layout_cost(HAND)
    assert (c.nodes, c.virtual, c.ranks, c.widest, c.units) == (4, 6, 4, 4, 38)



def test_a_source_sits_above_its_first_consumer():
    # by hand: a -> b -> c -> d ranks 0..3; the weight w feeds only d, so dot draws it on rank 2
    # (a short edge), not on rank 0 with its edge passing ranks 1 and 2.
    # Widths 1, 1, 2, 1 -> 1 + 1 + 4 + 1 = 7, plus 5 nodes = 12; no passes.
    dot = 'digraph g {\n' + "".join(f'  "{n}" [label=<{n}>];\n' for n in "abcdw") + \
        '  "a" -> "b";\n  "b" -> "c";\n  "c" -> "d";\n  "w" -> "d";\n}\n'
    c = layout_cost(dot)
    assert (c.nodes, c.virtual, c.widest, c.units) == (5, 0, 2, 12)

def _graph(*args, cwd):
    return subprocess.run([sys.executable, "-m", "symgpt", "graph", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_gpt2_xl_unrolled_is_laid_out_without_notice(tmp_path):
    # measured: 1,113 boxes laid out by dot -Tsvg in about 1 s (benchmarks/UNROLL.md)
    done = _graph("gpt2-xl", "--unroll", "-o", "x.svg", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert (tmp_path / "x.svg").read_text().count('class="node"') == 1113


def test_mixtral_l12_unrolled_is_refused_in_one_line(tmp_path):
    # measured: dot -Tsvg ran past its 60 s timeout on this diagram; 3,468 edge passes through
    # ranks is what an independent count of dot's virtual nodes gave
    done = _graph("mixtral-8x7b", "--set", "L=12", "--unroll", "-o", "m.svg", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1
    line = done.stderr.strip()
    assert line.startswith("symgpt: error: the diagram is too wide for Graphviz to lay out in seconds")
    assert "layout estimate 69,512" in line and "451 boxes plus 3,468 passes" in line
    assert f"above {MAX_LAYOUT:,}" in line and "--format dot" in line
    assert not (tmp_path / "m.svg").exists()


def test_dot_text_is_never_refused(tmp_path):
    done = _graph("mixtral-8x7b", "--set", "L=12", "--unroll", "--format", "dot", "-o", "m.dot",
                  cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    assert layout_cost((tmp_path / "m.dot").read_text()).units > MAX_LAYOUT


def test_help_says_the_rule_the_refusal_applies(tmp_path):
    done = _graph("--help", cwd=tmp_path)
    text = " ".join(done.stdout.split())
    assert f"above {MAX_LAYOUT:,} is refused" in text
    assert f"above {NOTICE_LAYOUT:,} is announced" in text
    assert "not the box count" in text


def test_a_slow_layout_is_announced_first(tmp_path):
    # measured: Mixtral at L = 8 took about 2.4 s in dot -Tsvg (DeepSeek-V3 at L = 8, ~6 s)
    done = _graph("mixtral-8x7b", "--set", "L=8", "--unroll", "-o", "m.svg", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("symgpt: Graphviz may take several seconds")
    assert "layout estimate 23,520" in lines[0]
    assert (tmp_path / "m.svg").read_text().count('class="node"') == 303


def test_rolled_zamba2_is_not_announced():
    # measured: dot -Tsvg lays the rolled zamba2-2.7b out in about 0.9 s; its shared block's
    # weights feed uses far below them, which a longest-path ranking alone would put on rank 0
    import symgpt
    from symgpt.documents.diagrams import dot_text
    from symgpt.external.graphviz import check_layout

    assert check_layout(dot_text(symgpt.load("zamba2-2.7b"))).units <= NOTICE_LAYOUT

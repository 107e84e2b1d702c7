"""Every architecture draws the same way, because the diagram walks the op graph: a family
declared here with ``Builder`` (nested MoE experts inside the repeated block, odd labels), every
registered family, every preset and every HF config in tests/configs."""

import re
from pathlib import Path

import pytest

import symgpt
from symgpt import ops
from symgpt.families import families
from symgpt.families.base import Family
from symgpt.graph.arch import Builder
from symgpt.model.model import Model
from symgpt.families import presets
from symgpt.documents.diagrams import diagram, dot_text
from symgpt.render.dotview import build_view
from symgpt.core.symbols import B, E, L, T, V, d, d_ff, k

from test_graph import parse
from test_graph_svg import groups

PRESETS = presets()

CONFIGS = sorted((Path(__file__).parent / "configs").glob("*.json"))


def _tiny_moe(flags, bound):
    g = Builder("tiny-moe")
    ids = g.input("input_ids", (B, T))                                          # (B, T)
    x = g.op("embedding/token", ops.Embedding(V, d), ids, label="embed")        # (B, T, d)
    with g.repeat("blocks", L, label='block "<&>"'):
        n = g.op("norm", ops.RMSNorm(d), x, label="norm")                       # (B, T, d)
        with g.repeat("experts", E, active=k, label="expert"):
            u = g.op("up", ops.Linear(d, d_ff, bias=False), n, label="up")      # (B, T, d_ff)
            a = g.op("act", ops.GELU(), u, label='a"b\\c')                      # (B, T, d_ff)
            o = g.op("down", ops.Linear(d_ff, d, bias=False), a, label="down")  # (B, T, d)
        x = g.op("residual", ops.Add(), x, o, label="x + ffn")                  # (B, T, d)
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), x,
                  tie={"weight": g.param("embedding/token")}, label="logits")   # (B, T, V)
    return g.build(output=logits)


TINY = Family("tiny-moe", "test family: MoE FFN block, tied head", {}, ("L", "d", "V", "d_ff", "E", "k"),
              _tiny_moe)


def tiny(**sizes):
    base = {"L": 2, "d": 8, "V": 11, "d_ff": 16, "E": 4, "k": 2}
    return Model("tiny-moe", TINY, sizes={**base, **sizes})


def test_nested_groups_are_nested_clusters():
    dot = dot_text(tiny())
    assert re.search(r'\n  subgraph "cluster_blocks" \{\n(    .*\n)*    subgraph "cluster_blocks/experts" \{', dot)
    assert "× L = 2" in dot and "× E = 4, k = 2 active" in dot
    assert "block &quot;&lt;&amp;&gt;&quot;" in dot and "<&>" not in dot


def test_tiny_family_svg():
    m = tiny(B=1, T=5)
    svg = diagram(m).svg()
    clusters = groups(svg, "cluster")
    assert set(clusters) == {"cluster_blocks", "cluster_blocks/experts"}
    assert 'block "<&>"' in clusters["cluster_blocks"]
    nodes = groups(svg, "node")
    assert set(nodes) == set(m.arch.order) | {"embedding/token.weight"}
    assert 'a"b\\c' in nodes["blocks/experts/act"]
    assert groups(svg, "edge")["blocks/experts/up->blocks/experts/act"] == ["(1, 5, 16)"]
    assert groups(svg, "edge")["embedding/token.weight->lm_head"] == ["same 11×8 matrix"]


def test_tiny_family_params_and_shares():
    nodes, _ = parse(dot_text(tiny()))
    # one expert's up projection: d·d_ff = 128 parameters; all copies: L·E·128 = 1024 of
    # V·d + L·(d + 2·E·d·d_ff) = 88 + 2·(8 + 1024) = 2152 parameters
    assert "params 128 = 8×16 · 47.6 %" in nodes["blocks/experts/up"][0]


def test_unroll_keeps_nested_groups_rolled_inside_each_copy():
    m = tiny(L=3)
    view = build_view(m.arch, m.bindings, unroll=True)
    parents = {c.id: c.parent for c in view.clusters}
    assert parents == {**{f"cluster_blocks@{i}": None for i in (1, 2, 3)},
                       **{f"cluster_blocks/experts@{i}": f"cluster_blocks@{i}" for i in (1, 2, 3)}}
    edges = {(e.src, e.dst) for e in view.edges}
    assert ("blocks/residual@1", "blocks/norm@2") in edges and ("blocks/residual@2", "blocks/residual@3") in edges
    assert ("blocks/residual@3", "lm_head") in edges
    dot = dot_text(m, unroll=True)
    assert dot.count("× E = 4, k = 2 active") == 3


@pytest.mark.parametrize("name", sorted(families()))
def test_every_family_draws_from_its_graph(name):
    m = symgpt.load(name)
    dot = dot_text(m)
    nodes, edges = parse(dot)
    assert set(m.arch.order) <= set(nodes)
    drawn = {(s, t) for s, t, _, _ in edges}
    assert {(u, v) for u, v, a in m.graph.edges(data=True) if a["kind"] == "data"} <= drawn
    for g in m.arch.groups:
        assert f'subgraph "cluster_{g}"' in dot


@pytest.mark.parametrize("name", ["llama", "mixtral", "falcon", "gemma"])
def test_families_render_through_graphviz(name):
    m = symgpt.load(name)
    assert set(groups(diagram(m).svg(), "node")) >= set(m.arch.order)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_draws(name):
    assert dot_text(symgpt.load(name, B=1, T=4)).startswith("digraph symgpt {")


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_config_draws_rolled_and_unrolled(path):
    # enough layers that every stack has two (DeepSeek's dense layers, Gemma's full ones)
    f = symgpt.load(str(path)).flags
    layers = max(2, (f.get("dense_layers") or 0) + 2, 2 * (f.get("full_every") or 1))
    m = symgpt.load(str(path), B=1, T=4, L=layers)
    nodes, _ = parse(dot_text(m, color_by="flops"))
    assert set(m.arch.order) <= set(nodes)
    unrolled, _ = parse(dot_text(m, unroll=True))
    assert {n for n in unrolled if n.endswith("@2")}


def test_odd_node_names_get_plain_ids_and_escaped_tooltips():
    def build(flags, bound):
        g = Builder("odd")
        ids = g.input("input_ids", (B, T))                                        # (B, T)
        x = g.op('emb "x"\\', ops.Embedding(V, d), ids)                           # (B, T, d)
        return g.build(output=g.op("head", ops.Linear(d, V, bias=False, tag="lm_head"), x))

    m = Model("odd", Family("odd", "test", {}, ("d", "V"), build), sizes={"d": 4, "V": 5})
    dot = dot_text(m)
    assert re.search(r'"n1" \[label=<.*<B>emb &quot;x&quot;\\</B>', dot)
    assert 'tooltip="emb \\"x\\"\\\\"' in dot and '"n1" -> "head"' in dot
    assert set(groups(diagram(m).svg(), "node")) == {"input_ids", "n1", "head"}

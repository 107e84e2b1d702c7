"""symgpt's own directed graph (``symgpt.graph.digraph.DiGraph``, what an Arch holds) against networkx,
its independent oracle: for every family and every preset, ``to_networkx()`` has the same nodes,
edges, attributes and orders, and ancestors, descendants, breadth-first distances, degrees and
the DAG check agree with networkx's own algorithms -- on the real graphs and on random graphs
(hypothesis, cycles included). ``Model.graph`` stays a real ``networkx.DiGraph``; ``symgpt params``
derives without importing networkx (checked in a fresh interpreter through ``sys.modules``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import networkx as nx
import pytest
from hypothesis import given, settings, strategies as st

import symgpt
from symgpt.graph.digraph import DiGraph
from symgpt.families import families, presets

PRESETS = presets()


def _same_structure(g: DiGraph, n: nx.DiGraph) -> None:
    assert list(g) == list(n) == list(g.nodes) == list(n.nodes)
    assert len(g) == len(n) == g.number_of_nodes()
    assert list(g.nodes(data=True)) == list(n.nodes(data=True))
    assert list(g.nodes(data="kind")) == list(n.nodes(data="kind"))
    assert list(g.edges) == list(n.edges)
    assert list(g.edges(data=True)) == list(n.edges(data=True))
    assert g.number_of_edges() == n.number_of_edges() == len(g.edges)
    for u, v in n.edges:
        assert (u, v) in g.edges and g.has_edge(u, v)
        assert g.edges[u, v] == n.edges[u, v]
    for x in n:
        assert x in g and g.has_node(x)
        assert g.nodes[x] == n.nodes[x]
        assert list(g.successors(x)) == list(n.successors(x))
        assert list(g.predecessors(x)) == list(n.predecessors(x))
        assert g.out_degree(x) == n.out_degree(x) and g.in_degree(x) == n.in_degree(x)
        assert g.out_edges(x, data=True) == list(n.out_edges(x, data=True))
        assert g.in_edges(x) == list(n.in_edges(x))
        assert g.edges(x) == list(n.edges(x))
    assert "no such node" not in g and ("no", "edge") not in g.edges


def _same_answers(g: DiGraph, n: nx.DiGraph) -> None:
    assert g.is_dag() == nx.is_directed_acyclic_graph(n)
    for x in n:
        assert g.descendants(x) == nx.descendants(n, x)
        assert g.ancestors(x) == nx.ancestors(n, x)
        # the same distances in the same (breadth-first) order: attention_core takes the first
        # nearest node of a kind, so the order matters as much as the numbers
        assert list(g.distances(x).items()) == list(nx.single_source_shortest_path_length(n, x).items())
    order = g.topological_order()
    if order is None:
        assert not nx.is_directed_acyclic_graph(n)
    else:
        assert sorted(order, key=str) == sorted(n, key=str) and len(order) == len(n)
        where = {x: i for i, x in enumerate(order)}
        assert all(where[u] < where[v] for u, v in n.edges)


@pytest.mark.parametrize("name", sorted(families()))
def test_every_family_graph_matches_networkx(name):
    arch = symgpt.load(name).arch
    view = arch.networkx()
    assert isinstance(view, nx.DiGraph) and not isinstance(arch.graph, nx.DiGraph)
    _same_structure(arch.graph, view)
    _same_answers(arch.graph, view)
    assert nx.is_directed_acyclic_graph(view)
    # networkx's topological order and ours agree on which node comes first along every edge
    assert list(nx.topological_sort(view)) and arch.graph.topological_order() is not None


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_graph_matches_networkx(name):
    arch = symgpt.load(name).arch
    _same_structure(arch.graph, arch.networkx())


def test_model_graph_is_networkx_built_once_and_a_copy():
    m = symgpt.load("gpt2-small")
    g = m.graph
    assert isinstance(g, nx.DiGraph)
    assert m.graph is g and symgpt.load("gpt2-small").graph is g      # built once per graph
    assert nx.ancestors(g, "lm_head") == m.arch.graph.ancestors("lm_head")
    g.nodes["lm_head"]["scribble"] = 1                                  # the view is a copy:
    assert "scribble" not in m.arch.graph.nodes["lm_head"]             # the derivations' graph is untouched
    del g.nodes["lm_head"]["scribble"]


@st.composite
def _graphs(draw):
    """A random directed graph on up to 12 nodes (cycles and self-loops allowed), with edge
    attributes, declared in a random order."""
    size = draw(st.integers(0, 12))
    nodes = draw(st.permutations(range(size)))
    pairs = st.tuples(st.sampled_from(nodes), st.sampled_from(nodes)) if size else st.nothing()
    edges = draw(st.lists(pairs, max_size=30, unique=True)) if size else []
    dag = draw(st.booleans())
    if dag:  # keep the edges that go forward in the declared order: a DAG
        rank = {x: i for i, x in enumerate(nodes)}
        edges = [(u, v) for u, v in edges if rank[u] < rank[v]]
    return nodes, edges


@settings(max_examples=300, deadline=None)
@given(_graphs())
def test_random_graphs_match_networkx(graph):
    nodes, edges = graph
    g = DiGraph()
    n = nx.DiGraph()
    for x in nodes:
        g.add_node(x, name=f"n{x}")
        n.add_node(x, name=f"n{x}")
    for i, (u, v) in enumerate(edges):
        g.add_edge(u, v, slot=i)
        n.add_edge(u, v, slot=i)
    _same_structure(g, n)
    _same_answers(g, n)
    view = g.to_networkx()
    assert list(view.nodes(data=True)) == list(n.nodes(data=True))
    assert list(view.edges(data=True)) == list(n.edges(data=True))
    f = DiGraph.from_edges(nodes, edges)
    assert list(f.edges) == list(g.edges) and list(f) == list(g)


def test_a_cycle_is_found_and_an_edge_updates_its_attributes():
    g = DiGraph.from_edges("abc", [("a", "b"), ("b", "c")])
    assert g.is_dag() and g.topological_order() == ["a", "b", "c"]
    g.add_edge("c", "a")
    assert not g.is_dag() and g.topological_order() is None
    assert g.descendants("a") == {"b", "c"} and g.ancestors("a") == {"b", "c"}
    g.add_edge("a", "b", w=1)
    g.add_edge("a", "b", v=2)          # networkx: a second add updates the one edge
    assert g.edges["a", "b"] == {"w": 1, "v": 2} and g.number_of_edges() == 3
    with pytest.raises(KeyError):
        g.descendants("z")


_PROBE = """
import json, sys
from symgpt.cli import main
rc = main({argv!r})
print(json.dumps([rc, sorted(m for m in ('networkx', 'sympy') if m in sys.modules)]))
"""


@pytest.mark.parametrize("argv", [["params", "gpt2-small", "--no-cache"], ["params", "gpt2-small"],
                                  ["flops", "gpt2-small", "--set", "B=1", "--set", "T=1024"]])
def test_deriving_imports_no_networkx(argv, tmp_path):
    env = {**os.environ, "SYMGPT_CACHE_DIR": str(tmp_path)}            # an empty cache: a cold run
    out = subprocess.run([sys.executable, "-c", _PROBE.format(argv=argv)], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rc, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert rc == 0 and loaded == ["sympy"]           # derived with SymPy, without networkx

"""The directed graph an :class:`~symgpt.graph.arch.Arch` holds: a small class of symgpt's own.

It offers the part of ``networkx.DiGraph``'s interface the derivations use, with the same
meaning and the same iteration orders (nodes in insertion order; edges by source node, then by
insertion), and the few algorithms they need (ancestors, descendants, breadth-first distances,
a topological order). Importing networkx costs about a third of importing SymPy and nothing in a
derivation needs more than this, so the derivations never import it; ``to_networkx()`` gives the
same graph as a real ``networkx.DiGraph`` (what ``Model.graph`` returns), and the tests hold this
class to networkx's own algorithms.
"""

from __future__ import annotations

from collections import deque
from typing import Iterable, Iterator


class _Nodes:
    """``g.nodes``: ``g.nodes[n]`` is n's attribute dict; ``g.nodes(data=True)`` yields pairs."""

    __slots__ = ("_attrs",)

    def __init__(self, attrs: dict):
        self._attrs = attrs

    def __getitem__(self, n) -> dict:
        return self._attrs[n]

    def __contains__(self, n) -> bool:
        return n in self._attrs

    def __iter__(self) -> Iterator:
        return iter(self._attrs)

    def __len__(self) -> int:
        return len(self._attrs)

    def __call__(self, data=False, default=None):
        if data is False:
            return list(self._attrs)
        if data is True:
            return list(self._attrs.items())
        return [(n, a.get(data, default)) for n, a in self._attrs.items()]

    def data(self, data=True, default=None):
        return self(data, default)

    def items(self):
        return self._attrs.items()


class _Edges:
    """``g.edges``: ``g.edges[u, v]`` is the edge's attribute dict; ``g.edges(data=True)`` yields
    triples; ``g.edges(nbunch)`` only the edges out of those nodes."""

    __slots__ = ("_succ",)

    def __init__(self, succ: dict):
        self._succ = succ

    def __getitem__(self, uv) -> dict:
        u, v = uv
        return self._succ[u][v]

    def __contains__(self, uv) -> bool:
        try:
            u, v = uv
        except (TypeError, ValueError):
            return False
        return u in self._succ and v in self._succ[u]

    def __iter__(self) -> Iterator[tuple]:
        return ((u, v) for u, nbrs in self._succ.items() for v in nbrs)

    def __len__(self) -> int:
        return sum(len(nbrs) for nbrs in self._succ.values())

    def __call__(self, nbunch=None, data=False, default=None):
        if nbunch is None:
            sources = self._succ
        elif nbunch in self._succ:
            sources = (nbunch,)
        else:
            sources = [n for n in nbunch if n in self._succ]
        out = []
        for u in sources:
            for v, a in self._succ[u].items():
                out.append((u, v) if data is False else (u, v, a) if data is True else (u, v, a.get(data, default)))
        return out

    def data(self, data=True, default=None):
        return self(None, data, default)


class DiGraph:
    """A directed graph with attribute dicts on nodes and edges (no parallel edges)."""

    def __init__(self):
        self._node: dict = {}
        self._succ: dict = {}
        self._pred: dict = {}
        self._added: dict = {}      # (u, v) -> None, in the order the edges were first added
        self.graph: dict = {}       # graph attributes, as networkx has them
        self._nodes, self._edges = _Nodes(self._node), _Edges(self._succ)

    # --- building -----------------------------------------------------------------------------
    def add_node(self, node_for_adding, **attrs) -> None:   # networkx's names: any attribute name is free
        n = node_for_adding
        if n not in self._node:
            self._node[n] = {}
            self._succ[n] = {}
            self._pred[n] = {}
        self._node[n].update(attrs)

    def add_edge(self, u_of_edge, v_of_edge, **attrs) -> None:
        u, v = u_of_edge, v_of_edge
        for n in (u, v):
            if n not in self._node:
                self.add_node(n)
        a = self._succ[u].get(v)
        if a is None:
            a = self._succ[u][v] = self._pred[v][u] = {}
            self._added[u, v] = None
        a.update(attrs)

    # --- what it holds ------------------------------------------------------------------------
    @property
    def nodes(self) -> _Nodes:
        return self._nodes

    @property
    def edges(self) -> _Edges:
        return self._edges

    def __contains__(self, n) -> bool:
        try:
            return n in self._node
        except TypeError:
            return False

    def __iter__(self) -> Iterator:
        return iter(self._node)

    def __len__(self) -> int:
        return len(self._node)

    def has_node(self, n) -> bool:
        return n in self

    def has_edge(self, u, v) -> bool:
        return u in self._succ and v in self._succ[u]

    def number_of_nodes(self) -> int:
        return len(self._node)

    def number_of_edges(self) -> int:
        return len(self.edges)

    def successors(self, n) -> Iterator:
        return iter(self._succ[n])

    def predecessors(self, n) -> Iterator:
        return iter(self._pred[n])

    def out_edges(self, n, data=False) -> list:
        return [(n, v) if not data else (n, v, a) for v, a in self._succ[n].items()]

    def in_edges(self, n, data=False) -> list:
        return [(u, n) if not data else (u, n, a) for u, a in self._pred[n].items()]

    def out_degree(self, n) -> int:
        return len(self._succ[n])

    def in_degree(self, n) -> int:
        return len(self._pred[n])

    # --- algorithms -----------------------------------------------------------------------------
    def descendants(self, n) -> set:
        """Every node reachable from *n* (not *n* itself), as ``networkx.descendants``."""
        return self._reach(n, self._succ)

    def ancestors(self, n) -> set:
        """Every node from which *n* is reachable (not *n* itself), as ``networkx.ancestors``."""
        return self._reach(n, self._pred)

    def _reach(self, n, adj: dict) -> set:
        if n not in self._node:
            raise KeyError(f"node {n!r} is not in the graph")
        seen, todo = set(), [n]
        while todo:
            for m in adj[todo.pop()]:
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        seen.discard(n)
        return seen

    def distances(self, n) -> dict:
        """Node -> number of edges on a shortest path from *n*, for every node reachable from *n*
        (*n* included, at 0), in breadth-first order: ``networkx.single_source_shortest_path_length``."""
        if n not in self._node:
            raise KeyError(f"node {n!r} is not in the graph")
        out = {n: 0}
        queue = deque([n])
        while queue:
            u = queue.popleft()
            for v in self._succ[u]:
                if v not in out:
                    out[v] = out[u] + 1
                    queue.append(v)
        return out

    def topological_order(self) -> list | None:
        """The nodes, each after every node with an edge into it (Kahn's algorithm: ties in
        insertion order); None when the graph has a cycle."""
        indegree = {n: len(p) for n, p in self._pred.items()}
        ready = deque(n for n, k in indegree.items() if k == 0)
        out = []
        while ready:
            u = ready.popleft()
            out.append(u)
            for v in self._succ[u]:
                indegree[v] -= 1
                if indegree[v] == 0:
                    ready.append(v)
        return out if len(out) == len(self._node) else None

    def is_dag(self) -> bool:
        """Whether the graph has no directed cycle (``networkx.is_directed_acyclic_graph``)."""
        return self.topological_order() is not None

    # --- networkx, the public view --------------------------------------------------------------
    def to_networkx(self):
        """The same graph as a ``networkx.DiGraph`` (same nodes, edges, successor and predecessor
        orders; the attribute dicts are copies: changing the copy leaves this graph as it was)."""
        import networkx as nx

        g = nx.DiGraph()
        g.graph.update(self.graph)
        g.add_nodes_from((n, dict(a)) for n, a in self._node.items())
        g.add_edges_from((u, v, dict(self._succ[u][v])) for u, v in self._added)  # as added: same orders
        return g

    @classmethod
    def from_edges(cls, nodes: Iterable, edges: Iterable[tuple]) -> "DiGraph":
        """A graph of *nodes* (in order) and *edges* ``(u, v)`` (for tests and small uses)."""
        g = cls()
        for n in nodes:
            g.add_node(n)
        for u, v in edges:
            g.add_edge(u, v)
        return g

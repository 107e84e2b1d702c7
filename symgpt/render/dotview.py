"""What a diagram draws: the op graph as drawn nodes, edges and clusters (rolled or unrolled).

The drawing walks ``model.arch``. Rolled, every node is drawn once and a repeated group is one
cluster labelled with its repeat count. Unrolled, every top-level group whose repeat count is a
bound integer is drawn once per copy; the tensor a group carries from copy to copy (the
residual stream) is chained: copy i+1 reads what copy i wrote. Nested groups (MoE experts)
stay rolled inside each copy. Nothing here formats text or counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy

from ..core.symbols import as_expr

from ..core.errors import SymgptError
from ..graph.arch import Arch

#: the most copies ``--unroll`` draws per group (the diagram becomes unreadable and slow beyond)
MAX_UNROLL = 64

#: ops that move no data arithmetic; drawn as compact nodes
VIEW_KINDS = frozenset({"slice", "split_heads", "merge_heads", "repeat_kv"})

_SAFE_ID = re.compile(r"[A-Za-z0-9_./@-]+")


@dataclass(frozen=True)
class DrawnNode:
    """A node of the drawing: ``path`` is its arch node, ``copy`` its copy number (unrolled)."""

    id: str
    path: str
    kind: str            # input, op, view, param
    cluster: str | None  # id of the innermost cluster drawn around it
    copy: int | None = None


@dataclass(frozen=True)
class DrawnEdge:
    src: str
    dst: str
    kind: str            # data, param, tied
    shape: tuple = ()    # the tensor that flows (data edges) or the shared matrix (tied)
    role: str = ""       # the parameter's local name (param and tied edges)


@dataclass(frozen=True)
class Cluster:
    id: str
    group: str           # arch group path
    parent: str | None   # id of the enclosing cluster
    copy: int | None = None
    copies: int | None = None   # how many copies the unrolled view draws


@dataclass(frozen=True)
class View:
    nodes: tuple[DrawnNode, ...]
    edges: tuple[DrawnEdge, ...]
    clusters: tuple[Cluster, ...]
    unrolled: bool


def dot_id(path: str, index: int) -> str:
    """A DOT identifier for an arch path: the path itself when it is plain, else ``n<index>``."""
    return path if _SAFE_ID.fullmatch(path) else f"n{index}"


def drawn_params(arch: Arch) -> list[str]:
    """Parameter nodes drawn as nodes: those used by more than one op (tied weights)."""
    out = []
    for name, attrs in arch.ops():
        for pnode in attrs["params"].values():
            if arch.graph.out_degree(pnode) > 1 and arch.graph.nodes[pnode]["owner"] == name:
                out.append(pnode)
    return out


def _top(arch: Arch, group: str | None) -> str | None:
    chain = arch.group_chain(group)
    return chain[-1].name if chain else None


def _node_kind(attrs: dict) -> str:
    if attrs["kind"] == "op":
        return "view" if attrs["op"].kind in VIEW_KINDS else "op"
    return attrs["kind"]


def build_view(arch: Arch, bindings=None, unroll: bool = False) -> View:
    """The drawing of *arch*; *unroll* draws each copy of the top-level groups (sizes bound)."""
    names = [*arch.order, *drawn_params(arch)]
    ids = {n: dot_id(n, i) for i, n in enumerate(names)}
    counts = _unroll_counts(arch, bindings or {}) if unroll else {}
    carried = {g: _carried(arch, g) for g in counts}
    view = _Collector(arch, ids, counts)
    for n in names:
        view.add_node(n)
    for n in names:
        attrs = arch.graph.nodes[n]
        if attrs["kind"] == "param":
            for consumer in _consumers(arch, n):
                e = arch.graph.edges[n, consumer]
                kind = "tied" if e["tied"] else "param"
                view.add_edges(n, consumer, kind, arch.shape(n), e["role"], carried)
            continue
        for src in attrs["inputs"]:
            view.add_edges(src, n, "data", arch.shape(src), "", carried)
    return View(tuple(view.nodes), tuple(view.edges), tuple(view.cluster_list()), bool(counts))


def _consumers(arch: Arch, pnode: str) -> list[str]:
    order = {n: i for i, n in enumerate(arch.order)}
    return sorted(arch.graph.successors(pnode), key=lambda n: order[n])


def _unroll_counts(arch: Arch, bindings) -> dict[str, int]:
    counts = {}
    for g in arch.groups.values():
        if g.parent is not None:
            continue
        n = as_expr(g.repeat).xreplace(dict(bindings))
        if not n.is_Integer:
            raise SymgptError(f"cannot unroll {g.label or g.name}: its repeat count {g.repeat} is not "
                              f"bound (set it, e.g. --set {g.repeat}=12)")
        if int(n) > MAX_UNROLL:
            raise SymgptError(f"cannot unroll {g.label or g.name}: {int(n)} copies is more than "
                              f"{MAX_UNROLL}; draw it rolled (without --unroll)")
        counts[g.name] = int(n)
    if not counts:
        raise SymgptError(f"{arch.name} has no repeated group to unroll")
    return counts


def _inside(arch: Arch, node: str, group: str) -> bool:
    return any(g.name == group for g in arch.group_chain(arch.graph.nodes[node]["group"]))


def _carried(arch: Arch, group: str) -> tuple[str | None, str | None]:
    """(source outside, output inside) of the tensor a group passes from one copy to the next."""
    members = [n for n in arch.order if _inside(arch, n, group)]
    outs = sorted({u for u in members for v in arch.graph.successors(u)
                   if not _inside(arch, v, group)}, key=members.index)
    if len(outs) > 1:
        raise SymgptError(f"cannot unroll {group}: more than one tensor leaves it ({', '.join(outs)})")
    srcs = []
    for v in members:
        for u in arch.graph.nodes[v]["inputs"]:
            if not _inside(arch, u, group) and u not in srcs:
                srcs.append(u)
    if not outs:
        return None, None
    out_shape = arch.shape(outs[0])
    same = [u for u in srcs if len(arch.shape(u)) == len(out_shape)
            and all(sympy.expand(a - b) == 0 for a, b in zip(arch.shape(u), out_shape))]
    if len(same) > 1:
        raise SymgptError(f"cannot unroll {group}: which input is carried from copy to copy is "
                          f"ambiguous ({', '.join(same)})")
    return (same[0] if same else None), outs[0]


class _Collector:
    def __init__(self, arch: Arch, ids: dict[str, str], counts: dict[str, int]):
        self.arch, self.ids, self.counts = arch, ids, counts
        self.nodes: list[DrawnNode] = []
        self.edges: list[DrawnEdge] = []
        self.clusters: dict[str, Cluster] = {}

    def top(self, node: str) -> str | None:
        t = _top(self.arch, self.arch.graph.nodes[node]["group"])
        return t if t in self.counts else None

    def copies(self, node: str) -> list[int | None]:
        t = self.top(node)
        return list(range(1, self.counts[t] + 1)) if t else [None]

    def nid(self, node: str, copy: int | None) -> str:
        return self.ids[node] if copy is None else f"{self.ids[node]}@{copy}"

    def cluster(self, group: str | None, copy: int | None) -> str | None:
        if group is None:
            return None
        g = self.arch.groups[group]
        parent = self.cluster(g.parent, copy)
        cid = "cluster_" + (dot_id(group, list(self.arch.groups).index(group)))
        if copy is not None:
            cid += f"@{copy}"
        if cid not in self.clusters:
            top = g.parent is None and group in self.counts
            self.clusters[cid] = Cluster(cid, group, parent, copy, self.counts[group] if top else None)
        return cid

    def cluster_list(self) -> list[Cluster]:
        return list(self.clusters.values())

    def add_node(self, n: str) -> None:
        attrs = self.arch.graph.nodes[n]
        for c in self.copies(n):
            self.nodes.append(DrawnNode(self.nid(n, c), n, _node_kind(attrs), self.cluster(attrs["group"], c), c))

    def last(self, node: str) -> str:
        t = self.top(node)
        return self.nid(node, self.counts[t] if t else None)

    def add_edges(self, u: str, v: str, kind: str, shape, role: str, carried) -> None:
        tu, tv = self.top(u), self.top(v)
        if tv is None or tu == tv:
            for c in (self.copies(v) if tu == tv else [None]):
                src = self.nid(u, c) if tu == tv else self.last(u)
                self.edges.append(DrawnEdge(src, self.nid(v, c), kind, tuple(shape), role))
            return
        source, output = carried[tv]
        for c in self.copies(v):
            src = self.nid(output, c - 1) if (u == source and c > 1) else self.last(u)
            self.edges.append(DrawnEdge(src, self.nid(v, c), kind, tuple(shape), role))

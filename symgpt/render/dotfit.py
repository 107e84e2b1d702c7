"""Diagrams sized for a slide or a page (``symgpt graph --fit slide|page``).

A full diagram of GPT-2 is 669 × 1849 pt: shrunk to a slide its text is about 6 pt. The fitted
forms draw less, larger: the attention internals (head splits, Q·Kᵀ, mask, softmax, A·V, merge)
folded into one node, every other view (slices, reshapes) spliced out, nodes labelled with their
name and op only (no parameter or FLOP lines), the legend cut to the colour scale. A slide is
laid out in rows read left to right (before the stack, the stack, after it) for 16:9, a page top to bottom for A4's text width; ``FITS`` gives the
box and the smallest text each promises once the drawing is scaled into the box.
"""

from __future__ import annotations

from dataclasses import replace

from ..graph import roles as R
from .dotview import DrawnEdge, DrawnNode, View

#: fit -> (rankdir, box width and height in inches, smallest text in pt once scaled into it)
FITS = {"slide": ("TB", 10.0, 5.625, 9.0), "page": ("TB", 6.3, 9.2, 7.0)}

#: the roles folded into one "attention" node
ATTENTION_CORE = (R.QUERY_HEADS, R.KEY_HEADS, R.VALUE_HEADS, R.QUERY_ROTARY, R.KEY_ROTARY,
                  R.KEY_REPEAT, R.VALUE_REPEAT, R.SCORES, R.ALIBI, R.SCALE, R.MASK, R.SOFTMAX,
                  R.VALUES, R.MERGE)
CROSS_CORE = (R.CROSS_KEY_HEADS, R.CROSS_VALUE_HEADS, R.CROSS_SCORES, R.CROSS_VALUES)
FOLDED = "folded"
#: the most nodes a slide's row holds (a longer group continues on the next row)
ROW = 5


def fold(view: View, arch, shared: bool = True) -> View:
    """The view with the attention internals folded into one node per attention (and copy),
    and every other view node spliced out (its input wired straight to its consumers);
    without *shared*, no shared-matrix node (a tied head then reads as an ordinary linear)."""
    if not shared:
        drop = {n.id for n in view.nodes if n.kind == "param"}
        view = View(tuple(n for n in view.nodes if n.id not in drop),
                    tuple(e for e in view.edges if e.src not in drop), view.clusters, view.unrolled)
    groups: dict[str, str] = {}          # arch path -> name of the fold it joins
    for name, core in (("attention", ATTENTION_CORE), ("cross-attention", CROSS_CORE)):
        for role in core:
            for path in arch.find(role):
                groups[path] = name
    nodes, merged, seen, last = [], {}, {}, {}
    for n in view.nodes:
        key = (groups.get(n.path), n.cluster, n.copy)
        if key[0] is not None:
            last[key] = n.id
    for n in view.nodes:
        key = (groups.get(n.path), n.cluster, n.copy)
        if key[0] is not None:
            if key not in seen:
                fid = f"{n.cluster or 'top'}/{key[0]}" + (f"@{n.copy}" if n.copy is not None else "")
                seen[key] = DrawnNode(fid, key[0], FOLDED, n.cluster, n.copy)
            if last[key] == n.id:            # drawn where the folded work ends (A·V, merge)
                nodes.append(seen[key])
            merged[n.id] = seen[key].id
        elif n.kind == "view":
            merged[n.id] = None          # spliced: edges pass through it
        else:
            nodes.append(n)
    into: dict[str, list[DrawnEdge]] = {}
    for e in view.edges:
        into.setdefault(e.dst, []).append(e)

    def sources(node_id: str, depth=0) -> list[str]:
        """Where a spliced view's input comes from (through chains of views)."""
        out = []
        for e in into.get(node_id, []):
            m = merged.get(e.src, e.src)
            out += sources(e.src, depth + 1) if m is None and depth < 32 else [m]
        return out

    edges, done = [], set()
    for e in view.edges:
        dst = merged.get(e.dst, e.dst)
        if dst is None:
            continue
        src = merged.get(e.src, e.src)
        srcs = sources(e.src) if src is None else [src]
        for s in srcs:
            if s is None or s == dst or (s, dst) in done:
                continue
            done.add((s, dst))
            edges.append(replace(e, src=s, dst=dst))
    return View(tuple(nodes), tuple(edges), view.clusters, view.unrolled)


def rows(view: View) -> list[list[str]]:
    """A slide's rows, each read left to right: the nodes before the first repeated group, each
    top-level cluster's nodes, the nodes after; ids in forward order."""
    out: list[list[str]] = []
    tops = {c.id: (c.id if c.parent is None else None) for c in view.clusters}
    parent = {c.id: c.parent for c in view.clusters}

    def top(cid):
        while cid is not None and parent.get(cid) is not None:
            cid = parent[cid]
        return cid

    key_prev = object()
    for n in view.nodes:
        if n.kind == "param":
            continue
        key = top(n.cluster)
        if key != key_prev:
            out.append([])
            key_prev = key
        out[-1].append(n.id)
    del tops
    return [r[i:i + ROW] for r in out if r for i in range(0, len(r), ROW)]

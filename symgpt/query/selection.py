"""Picking what a query runs on: a model's quantity, restricted to parts, optionally per block.

``select(model, "flops.forward", part="blocks", per_block=True, per="sequence")`` is the
forward FLOPs of one block. A *part* is a path prefix of the breakdown (``blocks``,
``blocks/attention``, ``lm_head``) or several joined by commas
(``blocks/attention/scores,blocks/attention/values``): the sum of the entries under any of them.
"""

from __future__ import annotations

from typing import Iterable

import sympy

from ..errors import SymgptError
from ..quantity import Quantity, is_prefix


def short(text, limit: int = 60) -> str:
    """*text* quoted for a one-line message, shortened past *limit* characters."""
    text = str(text)
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def load_model(model, **overrides):
    """A Model from a Model or anything ``symgpt.load`` takes."""
    from ..model import Model, load

    if isinstance(model, Model) and not overrides:
        return model
    return load(model, **overrides)


def prefixes(part) -> list[str]:
    """``"a,b"`` or ``["a", "b"]`` -> ``["a", "b"]`` (each stripped; '/' at the ends dropped)."""
    items: Iterable = part.split(",") if isinstance(part, str) else part
    out = []
    for item in items:
        if not isinstance(item, str):
            raise SymgptError(f"a part is a path such as 'blocks', got {type(item).__name__}")
        item = item.strip(" \t").strip("/")
        if not item:
            raise SymgptError(f"empty path in part {short(part)}")
        if item not in out:
            out.append(item)
    if not out:
        raise SymgptError("empty part")
    return out


def restrict(q: Quantity, part) -> Quantity:
    """The entries of *q* under any of the prefixes of *part* (None: all of *q*)."""
    if part is None:
        return q
    wanted = prefixes(part)
    for p in wanted:
        if not any(is_prefix(p, path) for path in q.paths()):
            tops = ", ".join(q.top_level())
            raise SymgptError(f"{q.name} has no part {short(p)}; parts: {tops} "
                              f"(and their sub-paths, e.g. {q.paths()[0]!r})")
    kept = tuple((path, e) for path, e in q.breakdown if any(is_prefix(p, path) for p in wanted))
    if len(kept) == len(q.breakdown):
        return q
    return Quantity(f"{q.name}[{','.join(wanted)}]", kept, q.bindings, q.unit, q.convention, q.notes)


def per_block(q: Quantity, model) -> Quantity:
    """Every entry divided by the repeat count of the group it lies in (``blocks``: L).

    All entries must lie in one top-level repeated group (use ``part="blocks"``).
    """
    groups = model.arch.groups
    heads = {path.split("/")[0] for path in q.paths()}
    top = [g for g in groups.values() if g.parent is None]
    names = ", ".join(g.name for g in top) or "(none)"
    if len(heads) != 1 or next(iter(heads)) not in groups:
        raise SymgptError(f"per block needs a part inside one repeated group ({names}); "
                          f"{q.name} spans {', '.join(sorted(heads))}")
    g = groups[next(iter(heads))]
    kept = tuple((path, sympy.expand(e / g.repeat)) for path, e in q.breakdown)
    notes = (*q.notes, f"per block: divided by {g.repeat}, the number of {g.name}")
    return Quantity(f"{q.name} per block", kept, q.bindings, q.unit, q.convention, notes)


def select(model, name: str = "params", part=None, per_block_: bool = False,
           **options) -> Quantity:
    """The quantity *name* of *model* (with provider *options*), restricted to *part*."""
    m = load_model(model)
    q = m.quantity(name, **options)
    q = restrict(q, part)
    return per_block(q, m) if per_block_ else q


def unbind(q: Quantity, symbols) -> Quantity:
    """*q* with *symbols* unbound (a query that solves for T must not read T's value)."""
    drop = set(symbols)
    b = {s: v for s, v in q.bindings.items() if s not in drop}
    return Quantity(q.name, q.breakdown, b, q.unit, q.convention, q.notes)

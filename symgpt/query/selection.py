"""Picking what a query runs on: a model's quantity, restricted to parts, optionally per block.

``select(model, "flops.forward", roles=[roles.STACK], per_block_=True, per="sequence")`` is the
forward FLOPs of one layer. Code picks entries by *role* (``roles.HEAD``, ``roles.STACK``: every
entry inside a stack of layers; see ``symgpt.graph.roles``), so it works whatever a family names its
nodes. Users pick a *part*: a path prefix of the breakdown as the family names it (GPT-2:
``blocks``, ``blocks/attention``, ``lm_head``) or several joined by commas
(``blocks/attention/scores,blocks/attention/values``): the sum of the entries under any of them.
"""

from __future__ import annotations

from typing import Iterable

import sympy

from ..graph import roles as R
from ..core.errors import SymgptError, short
from ..derive.quantity import Quantity, is_prefix


def load_model(model, **overrides):
    """A Model from a Model or anything ``symgpt.load`` takes."""
    from ..model.model import Model, load

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


def entry_stack(arch, path: str) -> str | None:
    """The stack a breakdown entry lies in: its node's stack, or, for an entry that is no node of
    this graph (a dropout mask the memory convention adds, a checkpoint), the stack whose name
    its path starts with (a node declared in a group is named under it)."""
    if path in arch.graph and arch.graph.nodes[path]["kind"] != "param":
        return arch.stack_of(path)
    for g in arch.stacks():
        if is_prefix(g.name, path):
            return g.name
    return None


def _node_roles(arch, path: str) -> set[str]:
    """The roles an entry at *path* answers to: its node's role, the roles of the groups around
    it (``experts``), and ``stack`` plus the stack's name when it lies inside a stack."""
    out = set()
    if path in arch.graph and arch.graph.nodes[path]["kind"] != "param":
        a = arch.graph.nodes[path]
        out.update(r for r in (a.get("role"), *(g.role for g in arch.group_chain(a.get("group"))))
                   if r is not None)
    stack = entry_stack(arch, path)
    if stack is not None:
        out.update((R.STACK, stack))
    return out


def by_role(q: Quantity, model, wanted) -> Quantity:
    """The entries of *q* whose op has one of the roles *wanted* (``roles.HEAD``,
    ``roles.TOKEN_EMBEDDING``; ``roles.STACK``: every entry inside a stack of layers; a stack's
    name: every entry inside that stack; ``roles.EXPERTS``: every entry inside experts). A role
    the model has no entry for is an error."""
    arch = model.arch
    wanted = [wanted] if isinstance(wanted, str) else list(wanted)
    stacks = {g.name for g in arch.stacks()}
    for w in wanted:
        if w not in stacks:
            R.check(w, group=w in R.GROUP_ROLES)
    kept = tuple((p, e) for p, e in q.breakdown if _node_roles(arch, p) & set(wanted))
    for w in wanted:
        if not any(w in _node_roles(arch, p) for p, _ in q.breakdown):
            raise SymgptError(f"{q.name} of {model.name} has no entry with role {w!r}")
    if len(kept) == len(q.breakdown):
        return q
    return Quantity(f"{q.name}[{','.join(wanted)}]", kept, q.bindings, q.unit, q.convention, q.notes)


def per_block(q: Quantity, model) -> Quantity:
    """Every entry divided by the layer count of the stack it lies in (GPT-2's ``blocks``: L).

    All entries must lie in one stack (select its entries with ``roles=[roles.STACK]`` or a
    part inside it).
    """
    arch = model.arch
    stacks = arch.stacks()
    names = ", ".join(g.name for g in stacks) or "(none)"
    found = {entry_stack(arch, p) for p in q.paths()}
    if len(found) != 1 or None in found:
        heads = sorted({p.split("/")[0] for p in q.paths()})
        raise SymgptError(f"per block needs a part inside one stack of layers ({names}); "
                          f"{q.name} spans {', '.join(heads)}")
    g = arch.groups[next(iter(found))]
    kept = tuple((path, sympy.expand(e / g.repeat)) for path, e in q.breakdown)
    notes = (*q.notes, f"per block: divided by {g.repeat}, the number of {g.name}")
    return Quantity(f"{q.name} per block", kept, q.bindings, q.unit, q.convention, notes)


def stack_for(q: Quantity, model) -> str:
    """The name of the stack of layers *q*'s entries lie in: the model's one stack, or, with
    several (an encoder and a decoder), the one stack all of *q*'s entries inside stacks lie in;
    else an error naming the stacks."""
    arch = model.arch
    stacks = arch.stacks()
    if not stacks:
        raise SymgptError(f"{model.name} has no stack of layers")
    inside = {entry_stack(arch, p) for p in q.paths()}
    inside.discard(None)
    if len(stacks) > 1 and len(inside) != 1:
        raise SymgptError(f"{model.name} has {len(stacks)} stacks of layers "
                          f"({', '.join(g.name for g in stacks)}): pick one with a part inside it")
    return next(iter(inside)) if inside else stacks[0].name


def only_stack(q: Quantity, model) -> Quantity:
    """The entries of *q* inside the stack :func:`stack_for` names."""
    return by_role(q, model, [stack_for(q, model)])


def select(model, name: str = "params", part=None, per_block_: bool = False, roles=None,
           **options) -> Quantity:
    """The quantity *name* of *model* (with provider *options*), restricted to *part* (path
    prefixes, as a user types them) and to *roles* (see :func:`by_role`)."""
    m = load_model(model)
    q = m.quantity(name, **options)
    q = restrict(q, part)
    if roles:
        q = by_role(q, m, roles)
    return per_block(q, m) if per_block_ else q


def unbind(q: Quantity, symbols) -> Quantity:
    """*q* with *symbols* unbound (a query that solves for T must not read T's value)."""
    drop = set(symbols)
    b = {s: v for s, v in q.bindings.items() if s not in drop}
    return Quantity(q.name, q.breakdown, b, q.unit, q.convention, q.notes)

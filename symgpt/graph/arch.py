"""Architectures as graphs of symbolic ops.

An :class:`Arch` holds a directed graph (:class:`symgpt.graph.digraph.DiGraph`, the part of
``networkx.DiGraph`` the derivations use; ``Arch.networkx()`` is the same graph in networkx)
with three kinds of node:

* ``input``  -- data entering the model (``input_ids``), with its shape and dtype;
* ``op``     -- one op (a registered op definition) with its output shape;
* ``param``  -- one parameter tensor, owned by the op that declared it.

Edges carry the tensor that flows: ``shape`` and the consumer's input ``slot`` for data edges,
``role`` (``weight``, ``bias``) for parameter edges. Weight tying is an edge: a tied LM head
has an edge from the token embedding's ``weight`` node and owns no weight of its own. A block
whose weights several layers share (Zamba's shared transformer block) is declared once per use:
the first use owns the weights, every later use is declared inside ``Builder.shares(owner)`` and
ties each of its parameters to the op at the same path under the owner -- the parameters count
once, the FLOPs, activations and caches at every use.

A block repeated L times is held once: its nodes belong to a :class:`Group` with a symbolic
``repeat`` count (parameters and memory are multiplied by it) and an ``active`` count (compute is
multiplied by it; a mixture of E experts has repeat E and active k). Groups nest.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

import sympy

from . import roles as R
from .digraph import DiGraph
from ..core.errors import SymgptError
from ..core.symbols import T, as_expr  # noqa: F401  (re-exported)
from ..ops.base import Op, ParamSpec, Shape, check_registered, numel


@dataclass(frozen=True)
class Group:
    """A repeated subgraph: ``repeat`` copies exist, ``active`` of them run per token."""

    name: str
    repeat: sympy.Expr
    active: sympy.Expr
    parent: str | None = None
    label: str = ""
    #: the tensors each copy hands to the next (the residual stream), when declared; any other
    #: tensor made outside and read inside is the same in every copy (a rotary table)
    carry: tuple[str, ...] | None = None
    #: what the group is (``roles.STACK``: a stack of layers; ``roles.EXPERTS``)
    role: str | None = None
    #: a stack's sequence length (the symbol its tokens are counted in: T, or T_enc / T_dec)
    length: sympy.Expr | None = None


@dataclass(frozen=True)
class Constraint:
    """A condition on the symbols, checked whenever it can be decided.

    ``kind`` is ``integer`` (``expr`` must be a positive integer) or ``le`` (``expr`` <= 0).
    ``id`` names the constraint stably (``heads_divide_width``): a preset waives a constraint by
    its id (``Preset.waive``), never by its message's wording; None: it cannot be waived.
    """

    kind: str
    expr: sympy.Expr
    message: str
    id: str | None = None


@dataclass(eq=False)
class Arch:
    """A declared architecture: its op graph, groups, constraints and flags."""

    name: str
    graph: DiGraph
    groups: dict[str, Group]
    order: list[str]                 # op and input nodes in forward order
    constraints: list[Constraint] = field(default_factory=list)
    flags: dict = field(default_factory=dict)
    output: str = ""                 # the logits node
    loss: str = ""                   # the loss node ('' when the graph has none)

    def networkx(self):
        """The op graph as a ``networkx.DiGraph`` (built on first use, then kept: the public view
        of :attr:`graph`, which the derivations use)."""
        view = self.__dict__.get("_networkx")
        if view is None:
            view = self.__dict__["_networkx"] = self.graph.to_networkx()
        return view

    # --- navigation -------------------------------------------------------------------------
    def node(self, name: str) -> dict:
        try:
            return self.graph.nodes[name]
        except KeyError:
            raise SymgptError(f"no node {name!r} in {self.name}") from None

    def ops(self) -> Iterator[tuple[str, dict]]:
        """(name, attributes) of every op node, in forward order."""
        for n in self.order:
            a = self.graph.nodes[n]
            if a["kind"] == "op":
                yield n, a

    def inputs_of(self, name: str) -> list[str]:
        """The data inputs of an op node, in slot order."""
        return list(self.graph.nodes[name]["inputs"])

    def params_of(self, name: str) -> dict[str, str]:
        """The parameter nodes an op uses, by local name (tied ones included)."""
        return dict(self.graph.nodes[name]["params"])

    def group_chain(self, group: str | None) -> list[Group]:
        chain = []
        while group is not None:
            g = self.groups[group]
            chain.append(g)
            group = g.parent
        return chain

    def multiplicity(self, name: str) -> sympy.Expr:
        """How many copies of a node exist (product of the enclosing groups' repeats)."""
        return sympy.Mul(*[g.repeat for g in self.group_chain(self.graph.nodes[name]["group"])])

    def activity(self, name: str) -> sympy.Expr:
        """How many copies of a node run per forward pass (product of the ``active`` counts)."""
        return sympy.Mul(*[g.active for g in self.group_chain(self.graph.nodes[name]["group"])])

    def shape(self, name: str) -> Shape:
        return self.graph.nodes[name]["shape"]

    def input_shapes(self, name: str) -> tuple[Shape, ...]:
        return tuple(self.shape(i) for i in self.inputs_of(name))

    # --- roles: what each node is (see symgpt.graph.roles) ----------------------------------------
    def role(self, name: str) -> str | None:
        """The role of node *name* (``attention.q``, ``head``, ...), or None."""
        return self.node(name).get("role")

    def find(self, role: str, stack: str | None = None) -> list[str]:
        """Every op or input node with *role*, in forward order (inside *stack* only, if given)."""
        R.check(role)
        out = []
        for n in self.order:
            a = self.graph.nodes[n]
            if a.get("role") != role:
                continue
            if stack is not None and self.stack_of(n) != stack:
                continue
            out.append(n)
        return out

    def first(self, role: str, stack: str | None = None) -> str | None:
        """The first node with *role* in forward order, or None."""
        found = self.find(role, stack)
        return found[0] if found else None

    def stacks(self) -> list[Group]:
        """The stacks of layers (top-level repeated groups with role ``stack``), in forward order."""
        seen = []
        for n in self.order:
            g = self.graph.nodes[n].get("group")
            chain = self.group_chain(g)
            if chain and chain[-1].role == R.STACK and chain[-1] not in seen:
                seen.append(chain[-1])
        return seen

    def stack_of(self, name: str) -> str | None:
        """The name of the stack node *name* lies in, or None (embeddings, head)."""
        chain = self.group_chain(self.graph.nodes[name].get("group"))
        return chain[-1].name if chain and chain[-1].role == R.STACK else None

    def groups_with(self, role: str) -> list[Group]:
        """Every group with *role* (``roles.EXPERTS``), outermost first."""
        R.check(role, group=True)
        return [g for g in self.groups.values() if g.role == role]


class Builder:
    """Declares an architecture node by node. Paths nest under open groups.

    >>> g = Builder("tiny")
    >>> ids = g.input("input_ids", (B, T), dtype="int64")
    >>> x = g.op("embedding/token", Embedding(V, d), ids)
    >>> with g.repeat("blocks", L):
    ...     x = g.op("ffn/up", Linear(d, d_ff), x)
    """

    def __init__(self, name: str, declared_roles: bool = False):
        self.name = name
        #: every node must declare its role (the built-in families); otherwise a node that declares
        #: none gets the one GPT-2's path scheme gives it (``roles.infer``), or None
        self.declared_roles = declared_roles
        self.graph = DiGraph()
        self.groups: dict[str, Group] = {}
        self.order: list[str] = []
        self.constraints: list[Constraint] = []
        self._stack: list[str] = []
        #: (group path, owner path) while ops declared under the group use the owner's parameters
        self._share: tuple[str, str] | None = None

    # --- groups -----------------------------------------------------------------------------
    @contextmanager
    def repeat(self, name: str, count, active=None, label: str = "", carry=None, role: str | None = None,
               length=None):
        """Nodes declared inside belong to a group repeated *count* times (*active* run).

        *carry* names the tensor (or tensors) each copy hands to the next: the block input that
        the previous copy's output replaces (the residual stream). *role* says what the group is
        (``roles.STACK``, ``roles.EXPERTS``; left out, a top-level group is a stack and a nested
        group named ``experts`` holds experts, unless the builder has ``declared_roles``); *length* is a stack's sequence length (T)."""
        path = self._path(name)
        if path in self.groups:
            raise SymgptError(f"group {path!r} declared twice")
        parent = self._stack[-1] if self._stack else None
        count = as_expr(count)
        active = count if active is None else as_expr(active)
        if carry is not None:
            carry = (carry,) if isinstance(carry, str) else tuple(carry)
            for c in carry:
                if c not in self.graph:
                    raise SymgptError(f"group {path!r}: carried tensor {c!r} is not declared")
        if role is None and parent is None:
            role = R.STACK
        elif role is None and not self.declared_roles:
            role = R.EXPERTS if name.split("/")[-1] == "experts" else None
        R.check(role, group=True)
        if role == R.STACK and length is None:
            length = T
        length = None if length is None else as_expr(length)
        self.groups[path] = Group(path, count, active, parent, label or name, carry, role, length)
        self._stack.append(path)
        try:
            yield path
        finally:
            self._stack.pop()

    @contextmanager
    def shares(self, owner: str | None):
        """Ops declared inside tie each of their parameters to the op at the same path under
        *owner* (a group path): an op at ``{group}/{rel}``, the group being the innermost one open
        when the context began, uses ``{owner}/{rel}.{local}``, which must exist with as many
        elements. The weights count once (at the owner); FLOPs, activations and caches at every
        use. *owner* None: ops declared inside own their parameters again (a per-use adapter)."""
        here = self._stack[-1] if self._stack else ""
        if owner is not None and owner not in self.groups:
            raise SymgptError(f"{self.name}: shared block's owner {owner!r} is not a declared group")
        saved = self._share
        self._share = None if owner is None else (here, owner)
        try:
            yield
        finally:
            self._share = saved

    def _path(self, name: str) -> str:
        if not name or any(part == "" for part in name.split("/")):
            raise SymgptError(f"bad node name {name!r}")
        return f"{self._stack[-1]}/{name}" if self._stack else name

    def _add(self, path: str, **attrs) -> None:
        if path in self.graph:
            raise SymgptError(f"node {path!r} declared twice in {self.name}")
        self.graph.add_node(path, group=self._stack[-1] if self._stack else None, **attrs)

    # --- nodes ------------------------------------------------------------------------------
    def input(self, name: str, shape: Shape, dtype: str = "int64", label: str = "", role: str | None = None) -> str:
        path = self._path(name)
        role = self._role(path, role)
        self._add(path, kind="input", shape=tuple(as_expr(x) for x in shape), dtype=dtype, label=label or name,
                  inputs=(), params={},
                  role=R.check(role))
        self.order.append(path)
        return path

    def op(self, name: str, op: Op, *inputs: str, tie: dict[str, str] | None = None, label: str = "",
           role: str | None = None, cached: bool | None = None, no_grad: bool = False) -> str:
        """Add an op fed by *inputs*; ``tie={"weight": param_node}`` uses another op's parameter.

        *role* says what the op is (``roles.QUERY``, ``roles.HEAD``, ...); left out, it is read from
        GPT-2's path scheme (``attention/q`` is a query), or stays None -- unless the builder was
        made with ``declared_roles=True`` (every built-in family), where leaving it out raises. *cached* says whether an
        inference cache holds this tensor across decode steps (None: as its role says, see
        ``roles.CACHED``: the key and value heads). ``no_grad=True``: the op runs under
        ``torch.no_grad`` (DeepSeek Sparse Attention's indexer in transformers): its output carries
        no gradient, so it has no backward and keeps nothing for one."""
        check_registered(op)
        if op.arity is not None and len(inputs) != op.arity:
            raise SymgptError(f"{op.kind} takes {op.arity} input(s), got {len(inputs)}")
        path = self._path(name)
        for i in inputs:
            if i not in self.graph:
                raise SymgptError(f"{path}: input {i!r} is not declared")
        if len(set(inputs)) != len(inputs):
            raise SymgptError(f"{path}: the same tensor feeds two inputs")
        in_shapes = tuple(self.graph.nodes[i]["shape"] for i in inputs)
        try:
            out = tuple(as_expr(x) for x in op.shape(in_shapes))
            specs: tuple[ParamSpec, ...] = tuple(op.params(in_shapes))
        except SymgptError as e:
            raise e.with_context(f"{self.name}: {path}") from None
        tie = dict(tie or {})
        if self._share is not None and specs:  # a later use of a shared block: its owner's parameters
            here, owner = self._share
            rel = path[len(here) + 1:] if here and path.startswith(here + "/") else path
            for spec in specs:
                tie.setdefault(spec.name, f"{owner}/{rel}.{spec.name}")
        params: dict[str, str] = {}
        role = self._role(path, role)
        self._add(path, kind="op", op=op, shape=out, inputs=tuple(inputs), params=params, label=label or name,
                  role=R.check(role), cached=cached, **({"no_grad": True} if no_grad else {}))
        for slot, i in enumerate(inputs):
            self.graph.add_edge(i, path, kind="data", slot=slot, shape=self.graph.nodes[i]["shape"])
        for spec in specs:
            if spec.name in tie:
                src = tie.pop(spec.name)
                if src not in self.graph or self.graph.nodes[src]["kind"] != "param":
                    raise SymgptError(f"{path}: tied parameter {src!r} is not declared")
                if sympy.expand(numel(self.graph.nodes[src]["shape"]) - numel(spec.shape)) != 0:
                    raise SymgptError(f"{path}: cannot tie {spec.name} {spec.shape} to {src}")
                params[spec.name] = src
                self.graph.add_edge(src, path, kind="param", role=spec.name, tied=True, shape=spec.shape)
                continue
            pnode = f"{path}.{spec.name}"
            self._add(pnode, kind="param", shape=tuple(spec.shape), owner=path, local=spec.name)
            params[spec.name] = pnode
            self.graph.add_edge(pnode, path, kind="param", role=spec.name, tied=False, shape=spec.shape)
        if tie:
            raise SymgptError(f"{path}: {op.kind} has no parameter {sorted(tie)[0]!r} to tie")
        self.order.append(path)
        return path

    def _role(self, path: str, role: str | None) -> str | None:
        if role is not None:
            return role
        if self.declared_roles:
            raise SymgptError(f"{self.name}: node {path!r} declares no role (see symgpt.graph.roles)")
        return R.infer(path, list(self._stack))

    def param(self, op_path: str, local: str = "weight") -> str:
        """The parameter node *local* of the op at *op_path* (for tying)."""
        pnode = f"{op_path}.{local}"
        if pnode not in self.graph:
            raise SymgptError(f"{op_path} has no parameter {local!r}")
        return pnode

    def require(self, kind: str, expr, message: str, id: str | None = None) -> None:
        """Add a :class:`Constraint`; *id* is its stable name (what a preset waives)."""
        self.constraints.append(Constraint(kind, as_expr(expr), message, id))

    def build(self, output: str, loss: str = "", flags: dict | None = None) -> Arch:
        if self._stack:
            raise SymgptError(f"group {self._stack[-1]!r} is still open")
        if not self.graph.is_dag():
            raise SymgptError(f"{self.name}: the op graph has a cycle")
        return Arch(self.name, self.graph, self.groups, self.order, self.constraints,
                    dict(flags or {}), output, loss)

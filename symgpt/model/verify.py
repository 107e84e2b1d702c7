"""A model's op graph against the checkpoint itself: every tensor the checkpoint holds compared
with the graph's parameters -- shapes and count per role, the total, and the bytes at the
checkpoint's dtypes against ``memory.weights``.

The graph's side is ``symgpt.derive.params.parameter_list`` (each parameter's owner op, its role,
shape and copies, evaluated at the model's sizes); the checkpoint's is its safetensors headers
(``symgpt.model.checkpoint``), mapped to roles by ``symgpt.model.tensornames``. Shapes are
compared in the checkpoint's orientation: transformers' ``nn.Linear`` stores (out, in), the
transpose of the graph's (in, out) (GPT-2's ``Conv1D`` stores (in, out)).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..core.errors import SymgptError
from .checkpoint import DTYPE_BITS, Checkpoint
from .tensornames import Mapper, Slot, patterns

#: safetensors dtype -> the precision policy ``memory.weights`` prices it at
PRECISION_OF = {"F32": "fp32", "BF16": "bf16", "F16": "fp16"}


@dataclass
class Row:
    """One slot: what the graph has and what the checkpoint holds (shape -> count each)."""

    slot: Slot
    graph: Counter = field(default_factory=Counter)
    checkpoint: Counter = field(default_factory=Counter)
    names: list = field(default_factory=list)
    dtypes: Counter = field(default_factory=Counter)

    @property
    def ok(self) -> bool:
        return self.graph == self.checkpoint


@dataclass
class Result:
    model: object
    checkpoint: Checkpoint
    rows: list[Row]
    unmapped: list          # checkpoint tensors no rule maps
    tied: list              # (tensor, the slot it is a stored copy of)
    buffers: list           # non-parameter tensors
    graph_total: int
    checkpoint_total: int
    graph_bytes: int | None
    checkpoint_bytes: int
    bytes_note: str
    notes: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (all(r.ok for r in self.rows) and not self.unmapped and self.graph_total == self.checkpoint_total
                and (self.graph_bytes is None or self.graph_bytes == self.checkpoint_bytes)
                and not any(not ok for _, _, ok in self.tied))


def _stack(owner: str) -> str:
    head = owner.split("/", 1)[0]
    return head if head in ("encoder", "decoder") else ""


def _graph_slots(model, in_out: bool) -> tuple[dict[Slot, Counter], dict[Slot, int]]:
    """slot -> Counter{shape in the checkpoint's orientation: copies}, and slot -> elements per copy
    of each shape (for the bytes)."""
    from ..derive.params import parameter_list
    from ..ops.linear import Linear

    arch = model.arch
    slots: dict[Slot, Counter] = {}
    for e in parameter_list(arch):
        node = arch.graph.nodes[e.owner]
        role = node.get("role")
        if not role:
            raise SymgptError(f"{model.name}: op {e.owner} has no role; verify cannot place its parameters")
        shape = tuple(model.value(s) for s in e.shape)
        copies = model.value(e.copies)
        if any(v is None or not v.is_Integer for v in (*shape, copies)):
            raise SymgptError(f"{model.name}: verify needs every size bound (a config.json binds them all)")
        shape = tuple(int(v) for v in shape)
        if isinstance(node.get("op"), Linear) and len(shape) == 2 and not in_out:
            shape = shape[::-1]
        slots.setdefault(Slot(_stack(e.owner), role, e.local), Counter())[shape] += int(copies)
    return slots


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def compare(model, ckpt: Checkpoint) -> Result:
    """The comparison of *model*'s graph with the tensors of *ckpt*."""
    from .tensornames import IN_OUT

    mapper = Mapper(model.family.name)
    graph = _graph_slots(model, model.family.name in IN_OUT)
    rows = {slot: Row(slot, graph=c) for slot, c in graph.items()}
    unmapped, tied, buffers = [], [], []
    for t in ckpt.tensors:
        kind, slot = mapper.classify(t.name)
        if kind == "buffer":
            buffers.append(t)
        elif kind == "tied":
            owner = graph.get(slot, Counter())
            tied.append((t, slot, t.shape in owner))
        elif kind == "unmapped":
            unmapped.append(t)
        else:
            row = rows.setdefault(slot, Row(slot))
            row.checkpoint[t.shape] += 1
            row.dtypes[t.dtype] += 1
            row.names.append(t.name)
    params = [t for t in ckpt.tensors if t not in buffers and all(t is not x for x, _, _ in tied)]
    graph_total = sum(_numel(s) * n for c in graph.values() for s, n in c.items())
    ckpt_total = sum(t.numel for t in params)
    ckpt_bytes = sum(t.nbytes for t in params)
    dtypes = Counter(t.dtype for t in params)
    graph_bytes, note = None, ""
    if len(dtypes) == 1 and next(iter(dtypes)) in PRECISION_OF:
        precision = PRECISION_OF[next(iter(dtypes))]
        graph_bytes = int(model.quantity("memory.weights", precision=precision).value)
        note = f"memory.weights at {precision}"
    elif all(len(r.dtypes) == 1 for r in rows.values() if r.checkpoint):
        # mixed dtypes, one per role: the graph's elements of each role at that role's dtype
        graph_bytes = 0
        for r in rows.values():
            if r.dtypes:
                bits = DTYPE_BITS[next(iter(r.dtypes))]
                graph_bytes += sum(_numel(s) * n * bits for s, n in r.graph.items()) // 8
        note = ("each role at its checkpoint dtype (" + ", ".join(sorted(dtypes)) + "; memory.weights "
                "prices one precision)")
    else:
        note = "not compared: one role holds several dtypes (" + ", ".join(sorted(dtypes)) + ")"
    for row in rows.values():
        row.names = patterns(row.names)
    # the graph's slots in forward order, then what only the checkpoint holds
    return Result(model, ckpt, list(rows.values()), unmapped, tied, buffers,
                  graph_total, ckpt_total, graph_bytes, ckpt_bytes, note)

"""Parameter-efficient fine-tuning as a rewrite of the op graph: LoRA, DoRA and QLoRA.

:class:`FineTune` names the method, the rank, the target projections by role and what else is
trained. :func:`apply` returns the model with its graph rewritten the way the ``peft`` library
wraps a module (``peft.tuners.lora.layer.Linear``): every targeted linear layer keeps its frozen
base weight and gains ``lora_A`` (d_in -> r, no bias) and ``lora_B`` (r -> d_out, no bias), whose
output, scaled by alpha/r, is added to the base output (Hu et al. 2021, ΔW = B·A). Every base
parameter is marked frozen (peft's ``bias="none"``), so the derivations that walk the graph
(``derive.walk``) give a frozen linear no weight-gradient matmul and keep no input for one, while
the adapter keeps its input and the input gradients still flow.

* ``params.trainable`` and ``params.frozen``: r·(d_in + d_out) per targeted linear × its copies
  (DoRA, Liu et al. 2024: + one magnitude vector of d_out);
* ``flops.*`` and ``memory.*`` of the rewritten model: the adapter matmuls in forward and
  backward, no weight gradients for frozen weights; gradients and optimizer states for the
  trainable parameters only; the frozen weights at their storage bytes (``symgpt.derive.quantize``
  for QLoRA's NF4 and 8-bit bases).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from ..graph import roles as R
from ..graph.arch import Arch
from ..graph.digraph import DiGraph
from ..ops.base import numel
from ..ops.attention import Dropout
from ..ops.elementwise import Add, Scale
from ..ops.linear import Linear
from .quantity import Quantity

METHODS = ("full", "lora", "dora", "qlora")
#: target name -> the roles of the linear layers it adapts (a fused projection needs all its parts)
TARGETS = {"q": (R.QUERY, R.CROSS_QUERY), "k": (R.KEY, R.CROSS_KEY), "v": (R.VALUE, R.CROSS_VALUE),
           "o": (R.OUT, R.CROSS_OUT),  # an encoder--decoder's cross-attention too (peft matches by name)
           "gate": (R.FFN_GATE,), "up": (R.FFN_UP,), "down": (R.FFN_DOWN,)}
ALL_LINEAR = ("q", "k", "v", "o", "gate", "up", "down")
#: fused projections: role -> the target names it holds
FUSED = {R.QKV: ("q", "k", "v"), R.FFN_GATE_UP: ("gate", "up")}
#: families whose linear layers are transformers' ``Conv1D`` (weights stored (in, out)), as
#: ``model.tensornames.IN_OUT`` lists them: peft wraps such a weight in a new parameter
CONV1D_FAMILIES = frozenset({"gpt2"})
#: the frozen base's storage under each method (``derive.quantize``)
BASES = ("nf4", "int8")


@dataclass(frozen=True)
class FineTune:
    """What is trained: ``method`` (full | lora | dora | qlora), the adapter ``rank``, the
    ``targets`` (names of ``TARGETS``), ``alpha`` (the scale alpha/r: costs nothing),
    ``train`` (``embedding``, ``head``: trained whole as well) and, for QLoRA, the frozen
    ``base`` storage (nf4 | int8)."""

    method: str = "lora"
    rank: int = 8
    targets: tuple = ALL_LINEAR
    alpha: object = None
    train: tuple = ()
    base: str = "nf4"
    dropout: object = 0  # peft's lora_dropout: p > 0 puts a dropout on each adapter's input

    def __post_init__(self):
        if self.method not in METHODS:
            raise SymgptError(f"fine-tuning method takes one of {', '.join(METHODS)}, got {self.method!r}")
        if isinstance(self.rank, bool) or not isinstance(self.rank, int) or self.rank <= 0:
            raise SymgptError(f"the LoRA rank must be a positive integer, got {self.rank!r}")
        targets = tuple(dict.fromkeys(self.targets))
        for t in targets:
            if t not in TARGETS:
                raise SymgptError(f"unknown LoRA target {t!r}; targets: {', '.join(TARGETS)} or all-linear")
        if not targets:
            raise SymgptError("LoRA needs at least one target")
        object.__setattr__(self, "targets", targets)
        for t in self.train:
            if t not in ("embedding", "head"):
                raise SymgptError(f"--lora-train takes embedding and/or head, got {t!r}")
        p = None
        if isinstance(self.dropout, float):
            p = sympy.Rational(repr(self.dropout))  # 0.1 as written, not its binary approximation
        elif isinstance(self.dropout, (int, sympy.Rational)) and not isinstance(self.dropout, bool):
            p = sympy.Rational(self.dropout)
        if p is None or not 0 <= p < 1:
            raise SymgptError(f"the LoRA dropout must be a number in [0, 1), got {self.dropout!r}")
        object.__setattr__(self, "dropout", p)
        if self.base not in BASES:
            raise SymgptError(f"the QLoRA base takes one of {', '.join(BASES)}, got {self.base!r}")

    @classmethod
    def parse(cls, method: str, rank=None, targets: str | None = None, alpha=None, train: str | None = None,
              base: str | None = None, dropout=None) -> "FineTune":
        """From command-line text: ``targets`` as ``q,k,v`` or ``all-linear``."""
        names = ALL_LINEAR if targets in (None, "all-linear") else tuple(
            t.strip() for t in targets.split(","))
        if any(not t for t in names):
            raise SymgptError(f"--lora-targets takes names separated by commas, got {targets!r}")
        kw = {"method": method, "targets": names}
        if rank is not None:
            kw["rank"] = rank
        if alpha is not None:
            kw["alpha"] = alpha
        if train:
            kw["train"] = tuple(t.strip() for t in train.split(","))
        if base is not None:
            kw["base"] = base
        if dropout is not None:
            kw["dropout"] = dropout
        return cls(**kw)

    def describe(self) -> str:
        if self.method == "full":
            return "full fine-tuning: every parameter trained"
        what = {"lora": "LoRA (Hu et al. 2021)", "dora": "DoRA (Liu et al. 2024)",
                "qlora": f"QLoRA (Dettmers et al. 2023), frozen base in {self.base}"}[self.method]
        extra = f"; {' and '.join(self.train)} trained whole" if self.train else ""
        if self.dropout:
            extra += f"; dropout {self.dropout} on each adapter's input (its mask and dropped input kept)"
        if self.method != "qlora":
            stored = "frozen weights at the precision's weight bytes"
        elif self.base == "nf4":
            stored = ("every linear layer but the head stored in NF4: 4 + 8/64 + 32/(64·256) bits per weight "
                      "(blocks of 64, absmax double-quantized to 8 bits in blocks of 256, Dettmers et al. 2023 "
                      "Sec. 3; bitsandbytes' Params4bit), embeddings, norms, head and adapters at the precision's "
                      "weight bytes")
        else:
            stored = ("every linear layer but the head stored in int8 with one fp32 scale per output row "
                      "(LLM.int8, bitsandbytes' Int8Params): 8 + 32/d_in bits per weight; the rest at the "
                      "precision's weight bytes")
        return (f"{what}, rank {self.rank} on {','.join(self.targets)}: ΔW = B·A per targeted linear "
                f"(r·(d_in + d_out) parameters{', + d_out magnitude' if self.method == 'dora' else ''}), "
                f"every base parameter frozen (peft's bias='none'){extra}; alpha scales B·A and costs nothing; "
                f"{_DORA if self.method == 'dora' else ''}"
                f"{_DORA_DROPOUT if self.method == 'dora' and self.dropout else ''}"
                f"{stored}; gradients and optimizer states for the trainable parameters only; a frozen linear "
                "layer has no weight-gradient matmul and keeps no input for one")


_DORA = ("DoRA as peft runs it: each forward builds B·A by running the adapters on an identity matrix "
         "(2·(d_in²·r + d_in·r·d_out) FLOPs per adapted layer, no backward) and rescales the layer's output by "
         "m/‖W + s·B·A‖ (the norm detached, Liu et al. 2024 Sec. 4.3), keeping the base output (less its bias), "
         "the adapter's output, the norm, m/‖·‖ and m/‖·‖ − 1; that pass's temporaries (the d_in × d_in "
         "identity, B·A and W + s·B·A) are freed within the layer's forward and not counted; ")
_DORA_DROPOUT = ("with dropout, peft runs the base layer again on the dropped input, without its bias, and "
                 "rescales that output (2·d_in·d_out FLOPs per token forward, its input gradient backward; for "
                 "transformers' Conv1D layers (GPT-2) also the weight gradient of the new parameter peft wraps "
                 "the weight in, and the dropped input kept for it); ")


def targeted(arch: Arch, ft: FineTune) -> list[str]:
    """The linear layers *ft* adapts, in forward order; a one-line error where a target cannot be
    modelled (a fused projection asked for in part, a mixture's experts) or matches nothing."""
    want = {r for t in ft.targets for r in TARGETS[t]}
    out, found = [], set()
    for n, a in arch.ops():
        role = a.get("role")
        if a["op"].kind != "linear" or a.get("no_grad"):
            continue
        if role in FUSED:
            parts = set(FUSED[role]) & set(ft.targets)
            if not parts:
                continue
            if parts != set(FUSED[role]):
                raise SymgptError(f"{arch.name}: {n} is one fused projection of {','.join(FUSED[role])}: "
                                  f"target them together (peft adapts the fused module whole)")
            found |= parts
        elif role in want:
            found |= {t for t in ft.targets if role in TARGETS[t]}
        else:
            continue
        if any(g.role == R.EXPERTS for g in arch.group_chain(a["group"])):
            raise SymgptError(f"{arch.name}: LoRA on a mixture's experts ({n}) is not modelled (transformers "
                              "holds them as fused 3-D parameters, not linear layers peft targets); "
                              "target the attention projections")
        out.append(n)
    missing = [t for t in ft.targets if t not in found]
    if ft.targets == ALL_LINEAR and found:
        missing = []  # all-linear: every projection the model has (GPT-2 has no gate)
    if missing:
        raise SymgptError(f"{arch.name}: no linear layer for LoRA target {missing[0]!r} "
                          f"(targets this model has: {', '.join(sorted(found)) or 'none'})")
    return out


def _copy(arch: Arch) -> tuple[DiGraph, list[str]]:
    g = DiGraph()
    for n, a in arch.graph.nodes.data():
        g.add_node(n, **{k: (dict(v) if k == "params" else v) for k, v in a.items()})
    for u, v, a in arch.graph.edges.data():
        g.add_edge(u, v, **dict(a))
    return g, list(arch.order)


def rewrite(arch: Arch, ft: FineTune, fresh_weight: bool = False) -> Arch:
    """*arch* with each targeted linear adapted and every base parameter frozen (except the
    embedding or head when ``ft.train`` names them); *arch* itself is left unchanged.
    *fresh_weight*: the linear layers store their weights as (in, out) (transformers' ``Conv1D``),
    which DoRA with dropout wraps in a new parameter (``ops.dora.DoraBase``)."""
    if ft.method == "full":
        return arch
    nodes = targeted(arch, ft)
    g, order = _copy(arch)
    r = sympy.Integer(ft.rank)
    alpha = r if ft.alpha is None else sympy.Rational(ft.alpha)
    for n in nodes:
        a = g.nodes[n]
        x, op = a["inputs"][0], a["op"]
        consumers = [(v, dict(g.edges[n, v])) for v in list(g.successors(n))]
        group = a["group"]
        made = []

        def add(name, new_op, *ins, params=()):
            path = f"{n}/{name}"
            shapes = tuple(g.nodes[i]["shape"] for i in ins)
            g.add_node(path, kind="op", op=new_op, shape=tuple(new_op.shape(shapes)), inputs=tuple(ins),
                       params={}, label=name, role=None, cached=None, group=group)
            for slot, i in enumerate(ins):
                g.add_edge(i, path, kind="data", slot=slot, shape=g.nodes[i]["shape"])
            for local, shape in params:
                pnode = f"{path}.{local}"
                g.add_node(pnode, kind="param", shape=tuple(shape), owner=path, local=local, group=group)
                g.nodes[path]["params"][local] = pnode
                g.add_edge(pnode, path, kind="param", role=local, tied=False, shape=tuple(shape))
            made.append(path)
            return path

        if ft.dropout:  # each adapter has its own dropout module: its own mask and dropped input
            x = add("lora_dropout", Dropout(ft.dropout), x)
            g.nodes[x]["dropout_active"] = True  # in training whatever the model's own dropout
        lora_a = add("lora_A", Linear(op.n_in, r, bias=False), x, params=[("weight", (op.n_in, r))])
        lora_b = add("lora_B", Linear(r, op.n_out, bias=False), lora_a, params=[("weight", (r, op.n_out))])
        if ft.method == "dora":  # peft's DoraLinearLayer: m/‖W + s·B·A‖ rescales the base and adapter outputs
            from ..ops.dora import DoraNorm, DoraScale

            norm = add("lora_magnitude", DoraNorm(op.n_in, op.n_out, r), x, params=[("magnitude", (op.n_out,))])
            bias = bool(getattr(op, "bias", False))
            if ft.dropout:  # peft reruns the base layer (its weight, no bias) on the dropped input
                from ..ops.dora import DoraBase

                again = add("dora_base", DoraBase(op.n_in, op.n_out, fresh_weight), x)
                w = a["params"]["weight"]
                g.nodes[again]["params"]["weight"] = w
                g.add_edge(w, again, kind="param", role="weight", tied=True, shape=g.nodes[w]["shape"])
                total = add("dora_scale", DoraScale(alpha / r, bias, separate=True), n, again, lora_b, norm)
            else:
                total = add("dora_scale", DoraScale(alpha / r, bias), n, lora_b, norm)
        else:
            scaled = add("lora_scale", Scale(alpha / r), lora_b)
            total = add("lora_add", Add(), n, scaled)
        for v, e in consumers:
            _unlink(g, n, v)
            g.add_edge(total, v, **e)
            g.nodes[v]["inputs"] = tuple(total if i == n else i for i in g.nodes[v]["inputs"])
        at = order.index(n) + 1
        order[at:at] = made
    keep = set()
    for t in ft.train:
        role = R.TOKEN_EMBEDDING if t == "embedding" else R.HEAD
        for n in arch.find(role):
            keep |= set(g.nodes[n]["params"].values())
    quantized = _quantized(arch) if ft.method == "qlora" else frozenset()
    for n, a in list(g.nodes.data()):
        if a["kind"] == "param" and n not in keep and "/lora_" not in n:
            a["frozen"] = True
            if a["local"] == "weight" and a["owner"] in quantized:
                from .quantize import storage_bits

                a["storage_bits"] = storage_bits(ft.base, a["shape"])
    output = arch.output
    flags = {**arch.flags, "finetune": ft}
    return Arch(arch.name, g, dict(arch.groups), order, list(arch.constraints), flags, output, arch.loss)


def _quantized(arch: Arch) -> frozenset:
    """The linear layers a QLoRA base stores quantized: as bitsandbytes replaces every
    ``nn.Linear`` but the LM head (transformers' ``BitsAndBytesConfig`` skips the output
    embedding), every linear op but the head; a mixture's experts, which transformers holds as
    3-D parameters rather than linear layers, stay in 16 bits, as embeddings and norms do."""
    return frozenset(n for n, a in arch.ops() if a["op"].kind == "linear" and a.get("role") != R.HEAD
                     and not any(g.role == R.EXPERTS for g in arch.group_chain(a["group"])))


def _unlink(g: DiGraph, u, v) -> None:
    del g._succ[u][v]
    del g._pred[v][u]
    del g._added[u, v]


def apply(model, ft: FineTune):
    """*model* with its graph rewritten for *ft* (the model itself when ``ft.method`` is full)."""
    if ft.method == "full":
        return model
    m = model.with_()
    family = getattr(getattr(model, "family", None), "name", None)
    m.__dict__["arch"] = rewrite(model.arch, ft, fresh_weight=family in CONV1D_FAMILIES)
    m.notes = tuple(n for n in model.notes if n != ft.describe()) + (ft.describe(),)
    # a changed copy (a flag set by a derivation: dropout) stays fine-tuned
    m.__dict__["with_"] = lambda **changes: apply(type(model).with_(m, **changes), ft)
    m.__dict__["free"] = lambda *names: apply(type(model).free(m, *names), ft)
    return m


def _entries(model, frozen: bool):
    from .params import parameter_list

    arch = model.arch
    out: dict[str, sympy.Expr] = {}
    for e in parameter_list(arch):
        if bool(arch.graph.nodes[e.node].get("frozen")) == frozen:
            out[e.owner] = out.get(e.owner, sympy.Integer(0)) + e.total
    return tuple((k, sympy.expand(v)) for k, v in out.items())


def _note(model, frozen: bool) -> str:
    ft = model.arch.flags.get("finetune")
    if ft is None and model.arch.flags.get("freeze") is not None:  # a tower frozen (derive.freeze)
        from .freeze import params_note

        return params_note(model, frozen)
    if ft is None:
        return "full fine-tuning: every parameter trained, none frozen"
    if frozen:
        return ("frozen: every parameter of the base model (peft's bias='none' freezes biases too)"
                + (f", except the {' and '.join(ft.train)} trained whole" if ft.train else ""))
    return ("trainable: each targeted linear's lora_A (d_in × r) and lora_B (r × d_out)"
            + (" and DoRA's magnitude (d_out)" if ft.method == "dora" else "")
            + (f", and the {' and '.join(ft.train)}" if ft.train else "")
            + ", as peft sets requires_grad")


def trainable(model) -> Quantity:
    """The parameters that get a gradient under the model's fine-tuning (all of them without one)."""
    parts = _entries(model, False)
    return Quantity("params.trainable", parts or (("none", sympy.Integer(0)),), model.bindings, "parameters",
                    "", (_note(model, False),))


def frozen(model) -> Quantity:
    """The parameters held frozen (0 under full fine-tuning)."""
    parts = _entries(model, True)
    return Quantity("params.frozen", parts or (("none", sympy.Integer(0)),), model.bindings, "parameters",
                    "", (_note(model, True),))


__all__ = ["ALL_LINEAR", "FineTune", "METHODS", "TARGETS", "apply", "frozen", "rewrite", "targeted", "trainable"]

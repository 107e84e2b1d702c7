"""Memory in bytes, derived from the graph: model states, saved activations, logits, KV cache.

Bytes are exact integers (SymPy). ``symgpt.derive.units`` prints them in GB (10⁹) or GiB (2³⁰).

Options shared by every ``memory.*`` quantity: ``convention`` (``symgpt.conventions``),
``precision`` (fp32 | bf16 | fp16 | mixed-bf16 | mixed-fp16), ``optimizer`` (sgd | momentum |
adam | adamw | adam8bit), ``attention`` (eager | flash), ``dropout`` (bool), ``recompute``
(none | selective | full), ``zero`` (0-3) with ``dp`` (data-parallel ranks), ``tp`` (tensor-
parallel ranks) and ``sp`` (sequence parallelism). Values are per device.

* ``memory.weights``, ``memory.gradients``: parameters × bytes, by owner op path;
* ``memory.optimizer``: ``optimizer/master`` (fp32 copy under mixed precision), ``optimizer/m``,
  ``optimizer/v`` (or ``optimizer/momentum``);
* ``memory.activations``: every tensor each op saves for backward (``op.saved``), sized by
  dtype class, counted once when two ops save the same graph tensor, × the copies that run;
  keyed by the op that saves it (the first saver); ``checkpoints/<node>`` under full recompute;
* ``memory.logits``: the logits tensor; ``memory.kv_cache``: K and V of every layer for B·T
  tokens (inference); ``memory.total``: weights + gradients + optimizer + activations.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..conventions import Convention, check_choice
from ..errors import SymgptError
from ..ops.base import numel
from ..quantity import Quantity
from .flops import label, resolve
from .parallel import divisor_for_param, tp_region
from .walk import attention_core, checkpoints, context, loop_invariant, recomputed, top_group


@dataclass(frozen=True)
class Precision:
    """Bytes per element of each kind of state under a precision policy."""

    weight: int
    grad: int
    act: int
    master: int  # an fp32 master copy kept by the optimizer (mixed precision)
    state: int   # one optimizer moment


PRECISIONS = {
    "fp32": Precision(4, 4, 4, 0, 4),
    "bf16": Precision(2, 2, 2, 0, 2),
    "fp16": Precision(2, 2, 2, 0, 2),
    "mixed-bf16": Precision(2, 2, 2, 4, 4),
    "mixed-fp16": Precision(2, 2, 2, 4, 4),
}

#: optimizer -> its per-parameter states and the bytes of each (None: the policy's state bytes)
OPTIMIZERS = {
    "sgd": (),
    "momentum": (("momentum", None),),
    "adam": (("m", None), ("v", None)),
    "adamw": (("m", None), ("v", None)),
    "adam8bit": (("m", 1), ("v", 1)),
}


#: ZeRO stages (Rajbhandari et al. 2020): 0 none, 1 optimizer states, 2 + gradients, 3 + weights
ZERO_STAGES = (0, 1, 2, 3)


@dataclass(frozen=True)
class Setup:
    """Resolved options of one memory derivation."""

    model: object
    conv: Convention
    precision: str
    optimizer: str
    zero: int
    dp: int
    tp: int
    sp: bool

    @property
    def bytes(self) -> Precision:
        return PRECISIONS[self.precision]


def _int(name, v, lo, hi=None) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, sympy.Integer)) or v < lo or (hi is not None and v > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise SymgptError(f"{name} must be an integer {rng}, got {v!r}")
    return int(v)


def setup(model, convention=None, precision=None, optimizer="adamw", zero=0, dp=1, tp=1, sp=False,
          **overrides) -> Setup:
    conv = resolve(convention, **overrides)
    precision = precision or conv.precision
    check_choice("precision", precision, tuple(PRECISIONS))
    check_choice("optimizer", optimizer, tuple(OPTIMIZERS))
    zero = _int("zero", zero, ZERO_STAGES[0], ZERO_STAGES[-1])
    dp, tp = _int("dp", dp, 1), _int("tp", tp, 1)
    if sp and tp == 1:
        raise SymgptError("sequence parallelism (sp) shards along the tensor-parallel group: set tp > 1")
    heads = model.sizes.get("h")
    if tp > 1 and heads is not None and heads % tp:
        raise SymgptError(f"tp={tp} must divide the number of heads h={heads} "
                          "(tensor parallelism gives each rank whole heads)")
    if conv.dropout is not None and "dropout" in model.flags and model.flags["dropout"] != conv.dropout:
        model = model.with_(dropout=bool(conv.dropout))
    return Setup(model, conv, precision, optimizer, zero, dp, tp, bool(sp))


def _notes(s: Setup, what: str) -> tuple[str, ...]:
    par = []
    if s.zero:
        par.append(f"ZeRO stage {s.zero} over dp = {s.dp}")
    if s.tp > 1:
        par.append(f"tensor parallel tp = {s.tp}" + (" with sequence parallelism" if s.sp else ""))
    where = ("per device: " + ", ".join(par)) if par else "one device"
    return (f"{what}; bytes, {where}; precision {s.precision}, optimizer {s.optimizer}",
            f"convention {s.conv.name}: {s.conv.summary} [{s.conv.source}]")


def _q(s: Setup, name: str, breakdown, what: str) -> Quantity:
    return Quantity(name, tuple((p, sympy.expand(e)) for p, e in breakdown), s.model.bindings, "bytes",
                    label(s.conv, s.conv.name), _notes(s, what))


# --- model states ------------------------------------------------------------------------------
def _param_bytes(s: Setup, per_param: int, zero_from: int):
    """(owner path, bytes) of every parameter tensor, sharded by tp and (at ZeRO >= zero_from) dp."""
    from .params import parameter_list

    arch = s.model.arch
    out: dict[str, sympy.Expr] = {}
    dp = s.dp if s.zero >= zero_from else 1
    for e in parameter_list(arch):
        shard = divisor_for_param(arch, e.owner, e.local, s.tp) * dp
        out[e.owner] = out.get(e.owner, sympy.Integer(0)) + e.total * per_param / shard
    return list(out.items())


def weights(model, **options) -> Quantity:
    s = setup(model, **options)
    return _q(s, "memory.weights", _param_bytes(s, s.bytes.weight, 3), "model weights")


def gradients(model, **options) -> Quantity:
    s = setup(model, **options)
    return _q(s, "memory.gradients", _param_bytes(s, s.bytes.grad, 2), "gradients (one per parameter)")


def optimizer(model, **options) -> Quantity:
    s = setup(model, **options)
    n = sympy.Add(*[e for _, e in _param_bytes(s, 1, 1)])  # sharded parameter count
    parts = [("optimizer/master", s.bytes.master * n)] if s.bytes.master else []
    parts += [(f"optimizer/{state}", (s.bytes.state if b is None else b) * n) for state, b in OPTIMIZERS[s.optimizer]]
    what = f"optimizer state of {s.optimizer}" + (" with an fp32 master copy" if s.bytes.master else "")
    return _q(s, "memory.optimizer", parts or [("optimizer", sympy.Integer(0))], what)


# --- activations -------------------------------------------------------------------------------
def _dtype_bytes(s: Setup, item) -> int | None:
    conv, act = s.conv, s.bytes.act
    if item.role in ("mean", "rstd"):
        return {"fp32": 4, "act": act, "none": None}[conv.norm_stats]
    if item.role == "normed":  # an unfused RMSNorm's x·rstd
        return act if conv.rms_normed_saved else None
    if item.role == "causal_mask" and not conv.causal_mask_saved:
        return None
    if item.role == "mask" and item.dtype == "bool":
        return 1 if conv.dropout_mask == "bool" else act
    return {"act": act, "fp32": 4, "bool": 1, "int64": 8}[item.dtype]


def saved_list(model, **options):
    """Every saved tensor after de-duplication: (saver path, role, shape, bytes per element,
    copies, divisor, tensor key)."""
    s = setup(model, **options)
    return _saved(s)


def _saved(s: Setup):
    arch, conv = s.model.arch, s.conv
    dropout = bool(s.model.flags.get("dropout", False)) if conv.dropout is None else bool(conv.dropout)
    again = recomputed(arch, conv.recompute)
    core = attention_core(arch)
    region = tp_region(arch) if s.tp > 1 else frozenset()
    entries, seen = [], set()
    for node, a in arch.ops():
        if a["op"].kind == "cross_entropy" and not conv.loss_saved:
            continue
        ctx = context(arch, node, conv.attention, dropout)
        for item in a["op"].saved(arch.input_shapes(node), a["shape"], ctx):
            per = _dtype_bytes(s, item)
            if per is None:
                continue
            if item.shares.startswith("input"):
                tensor = _storage(arch, a["inputs"][int(item.shares[5:])], conv.attention)
            elif item.shares == "output":
                tensor = node
            else:
                tensor = f"{node}#{item.role}"
            producer = tensor.split("#")[0]
            if conv.recompute == "full" and node in again:
                continue  # the block is recomputed from its checkpointed input
            if conv.recompute == "selective" and producer in again:
                continue  # produced inside the attention core: recomputed
            if conv.attention == "flash" and node in core and a["op"].kind == "dropout":
                continue  # a fused kernel regenerates its dropout mask from the RNG state
            g = top_group(arch, node)
            copies = arch.activity(node)
            if item.shares.startswith("input") and loop_invariant(arch, producer, node):
                g, copies = None, arch.activity(producer)  # one tensor shared by every copy
            key = (tensor, g.name if g else None)
            if key in seen:
                continue
            seen.add(key)
            div = 1
            if s.tp > 1 and producer in region:
                div = s.tp
            elif s.sp and g is not None:
                div = s.tp
            elif s.tp > 1 and a["op"].kind == "cross_entropy" and item.role == "log_probs":
                div = s.tp  # vocabulary-parallel cross-entropy
            entries.append((node, item.role, tuple(item.shape), per, copies, div, tensor))
    if conv.recompute == "full":
        for c in checkpoints(arch):
            group = _reader_group(arch, c)
            div = s.tp if s.sp else 1
            entries.append((f"{group.name}/checkpoint", "block input", tuple(arch.shape(c)), s.bytes.act,
                            group.active, div, c))
    return entries


def _storage(arch, tensor: str, attention: str) -> str:
    """The graph tensor whose storage *tensor* is. A fused attention kernel writes its output in
    (B, T, h, d_head) layout, so merging the heads of it is a view, not a copy (PyTorch's SDPA);
    every other op output is its own storage."""
    a = arch.graph.nodes[tensor]
    if attention == "flash" and a["kind"] == "op" and a["op"].kind == "merge_heads":
        src = arch.graph.nodes[a["inputs"][0]]
        if src["kind"] == "op" and src["op"].kind == "matmul" and src["op"].tag == "attention_values":
            return a["inputs"][0]
    return tensor


def _reader_group(arch, node):
    """The outermost group that reads *node* (one checkpoint per copy of it)."""
    for n, a in arch.ops():
        if node in a["inputs"] and a["group"] is not None:
            return arch.group_chain(a["group"])[-1]
    raise SymgptError(f"{node} feeds no repeated group")


def activations(model, **options) -> Quantity:
    s = setup(model, **options)
    out: dict[str, sympy.Expr] = {}
    for node, _role, shape, per, copies, div, _t in _saved(s):
        out[node] = out.get(node, sympy.Integer(0)) + numel(shape) * per * copies / div
    what = (f"activations saved for backward ({s.conv.attention} attention, recompute={s.conv.recompute}, "
            f"dropout {'on' if s.model.flags.get('dropout') or s.conv.dropout else 'off'})")
    return _q(s, "memory.activations", list(out.items()), what)


def logits(model, **options) -> Quantity:
    s = setup(model, **options)
    arch = s.model.arch
    n = numel(arch.shape(arch.output))
    return _q(s, "memory.logits", [(arch.output, n * s.bytes.act / s.tp)],
              f"the logits tensor ({n} entries at {s.bytes.act} bytes)")


def kv_cache(model, **options) -> Quantity:
    """K and V of every attention layer for B sequences of T tokens (before any head repeat)."""
    s = setup(model, **options)
    arch = s.model.arch
    parts = []
    for node, a in arch.ops():
        op = a["op"]
        if op.kind == "matmul" and op.tag in ("attention_scores", "attention_values"):
            src = a["inputs"][1]
            while arch.graph.nodes[src]["kind"] == "op" and arch.graph.nodes[src]["op"].kind == "repeat_kv":
                src = arch.graph.nodes[src]["inputs"][0]
            shape = arch.shape(src)  # (B, h_kv, T, d_head)
            n = numel(shape)
            if op.window is not None:  # a sliding window keeps the last W positions only
                n = numel(shape) / shape[-2] * sympy.Min(shape[-2], op.window)
            parts.append((src, n * arch.activity(node) * s.bytes.act / s.tp))
    return _q(s, "memory.kv_cache", parts,
              "KV cache for inference: K and V of every layer, B·T tokens (Min(T, W) with a sliding window)")


def total(model, **options) -> Quantity:
    s = setup(model, **options)
    parts = [("weights", weights(model, **options).expr), ("gradients", gradients(model, **options).expr)]
    parts += list(optimizer(model, **options).breakdown)
    parts.append(("activations", activations(model, **options).expr))
    return _q(s, "memory.total", parts, "training memory: weights + gradients + optimizer + activations "
              "(transient buffers such as the logits themselves not counted)")


def three_term_estimate(model, precision="mixed-fp16") -> Quantity:
    """The textbook three-term activation estimate per block, × L, at the policy's activation
    bytes: the block input B·T·d, the attention scores B·h·T², the FFN hidden B·T·d_ff (4BTd).
    Not a derivation from the graph: the textbook estimate, to show beside the exact count."""
    from ..symbols import B, L, T, d, d_ff, h

    check_choice("precision", precision, tuple(PRECISIONS))
    act = PRECISIONS[precision].act
    ffn = d_ff if "d_ff" in model.sizes else 4 * d
    parts = (("BTd", B * T * d * L * act), ("BhT^2", B * h * T**2 * L * act), ("4BTd", B * T * ffn * L * act))
    return Quantity("memory.activations", parts, model.bindings, "bytes", "three-term estimate",
                    ("three named terms per block (block input, attention scores, FFN "
                     f"hidden) × L at {act} bytes; not the full list of saved tensors",))

"""Memory in bytes, derived from the graph: model states, saved activations, logits, KV cache.

Bytes are exact integers (SymPy). ``symgpt.derive.units`` prints them in GB (10⁹) or GiB (2³⁰).

Options shared by every ``memory.*`` quantity: ``convention`` (``symgpt.conventions``),
``precision`` (fp32 | bf16 | fp16 | mixed-bf16 | mixed-fp16), ``optimizer`` (sgd | momentum |
adam | adamw | adam8bit), ``attention`` (eager | flash), ``dropout`` (bool), ``recompute``
(none | selective | full), ``zero`` (0-3) with ``dp`` (data-parallel ranks), ``tp`` (tensor-
parallel ranks) and ``sp`` (sequence parallelism); ``pp``, ``vp``, ``microbatches``, ``schedule``,
``stage`` (first | last), ``cp``, ``ep`` (``symgpt.derive.layout``), ``distributed_optimizer``
(Megatron-LM's name for sharding the optimizer states over the data-parallel ranks: ZeRO-1) and
``offload`` (optimizer states and master copy in host memory, ZeRO-Offload). Values are per
device: under a pipeline, of the device holding the first (or last) stage.

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

from .. import roles as _roles
from ..conventions import Convention, check_choice
from ..errors import SymgptError
from ..ops.base import numel
from ..quantity import Quantity
from .flops import label, resolve
from .kvcache import cache_tensors
from .layout import Layout, check_model, layout
from .parallel import divisor_for_param, place, tp_region
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
    # Megatron-LM's bf16 training: gradients accumulated and all-reduced in fp32 (main_grad)
    "mixed-bf16-fp32grad": Precision(2, 4, 2, 4, 4),
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
    lay: Layout
    offload: bool = False

    @property
    def bytes(self) -> Precision:
        return PRECISIONS[self.precision]

    @property
    def dp(self):
        return self.lay.dp

    @property
    def tp(self):
        return self.lay.tp

    @property
    def sp(self) -> bool:
        return self.lay.sp


def _int(name, v, lo, hi=None) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, sympy.Integer)) or v < lo or (hi is not None and v > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise SymgptError(f"{name} must be an integer {rng}, got {v!r}")
    return int(v)


def setup(model, convention=None, precision=None, optimizer="adamw", zero=0, dp=1, tp=1, sp=False,
          pp=1, vp=1, cp=1, ep=1, microbatches=1, stage="first", schedule="1f1b",
          distributed_optimizer=False, offload=False, **overrides) -> Setup:
    conv = resolve(convention, **overrides)
    precision = precision or conv.precision
    check_choice("precision", precision, tuple(PRECISIONS))
    check_choice("optimizer", optimizer, tuple(OPTIMIZERS))
    zero = _int("zero", zero, ZERO_STAGES[0], ZERO_STAGES[-1])
    if distributed_optimizer:
        zero = max(zero, 1)  # Megatron-LM's distributed optimizer shards what ZeRO-1 shards
    lay = layout(dp=dp, tp=tp, pp=pp, vp=vp, cp=cp, ep=ep, microbatches=microbatches, sp=sp,
                 stage=stage, schedule=schedule)
    check_model(lay, model)
    if conv.dropout is not None and "dropout" in model.flags and model.flags["dropout"] != conv.dropout:
        model = model.with_(dropout=bool(conv.dropout))
    return Setup(model, conv, precision, optimizer, zero, lay, bool(offload))


def _notes(s: Setup, what: str) -> tuple[str, ...]:
    par = []
    if s.zero:
        over = f"dp = {s.dp}" if s.lay.cp == 1 else f"dp·cp = {s.lay.dp_group}"
        par.append(f"ZeRO stage {s.zero} over {over}")
    desc = s.lay.describe()
    if desc:
        par.append(desc)
    if s.offload:
        par.append("optimizer states offloaded to the host")
    where = ("per device: " + ", ".join(par)) if par else "one device"
    return (f"{what}; bytes, {where}; precision {s.precision}, optimizer {s.optimizer}",
            f"convention {s.conv.name}: {s.conv.summary} [{s.conv.source}]")


def _q(s: Setup, name: str, breakdown, what: str) -> Quantity:
    return Quantity(name, tuple((p, sympy.expand(e)) for p, e in breakdown), s.model.bindings, "bytes",
                    label(s.conv, s.conv.name), _notes(s, what))


# --- model states ------------------------------------------------------------------------------
def param_bytes(s: Setup, per_param: int, zero_from: int):
    """(owner path, bytes) of every parameter tensor this device holds: its stage's share (pp),
    sharded by tp, experts by ep, and (at ZeRO >= zero_from) over the data-parallel ranks that
    replicate it. A tied head on pp > 1 holds a copy of the embedding on the last stage."""
    from .params import parameter_list, tied_uses

    arch, lay = s.model.arch, s.lay
    out: dict[str, sympy.Expr] = {}
    for e in parameter_list(arch):
        where, expert = place(arch, e.owner)
        group = lay.expert_dp_group if expert else lay.dp_group
        shard = divisor_for_param(arch, e.owner, e.local, s.tp) * (lay.ep if expert else 1)
        if s.zero >= zero_from:
            shard = shard * group
        if lay.share(where) == 0:
            continue  # on another stage
        out[e.owner] = out.get(e.owner, sympy.Integer(0)) + e.total * per_param * lay.share(where) / shard
    for op, local, pnode in tied_uses(arch):
        if place(arch, op)[0] == "post" and lay.share("copy") != 0:
            owner = arch.graph.nodes[pnode]["owner"]
            shard = divisor_for_param(arch, owner, local, s.tp) * (lay.dp_group if s.zero >= zero_from else 1)
            n = numel(arch.graph.nodes[pnode]["shape"]) * arch.multiplicity(pnode)
            out[f"{op}/tied copy"] = n * per_param * lay.share("copy") / shard
    return list(out.items())


def weights(model, **options) -> Quantity:
    s = setup(model, **options)
    return _q(s, "memory.weights", param_bytes(s, s.bytes.weight, 3), "model weights")


def gradients(model, **options) -> Quantity:
    s = setup(model, **options)
    return _q(s, "memory.gradients", param_bytes(s, s.bytes.grad, 2), "gradients (one per parameter)")


def _optimizer_parts(s: Setup):
    n = sympy.Add(*[e for _, e in param_bytes(s, 1, 1)])  # sharded parameter count
    parts = [("optimizer/master", s.bytes.master * n)] if s.bytes.master else []
    parts += [(f"optimizer/{state}", (s.bytes.state if b is None else b) * n) for state, b in OPTIMIZERS[s.optimizer]]
    return parts or [("optimizer", sympy.Integer(0))]


def optimizer(model, **options) -> Quantity:
    s = setup(model, **options)
    what = f"optimizer state of {s.optimizer}" + (" with an fp32 master copy" if s.bytes.master else "")
    if s.offload:
        return _q(s, "memory.optimizer", [("optimizer (offloaded to the host)", sympy.Integer(0))],
                  what + ", offloaded to host memory (ZeRO-Offload, Ren et al. 2021): none on the device")
    return _q(s, "memory.optimizer", _optimizer_parts(s), what)


def host(model, **options) -> Quantity:
    """Host memory per device: the optimizer states moved there by ``offload`` (else 0)."""
    s = setup(model, **options)
    parts = _optimizer_parts(s) if s.offload else [("nothing offloaded", sympy.Integer(0))]
    return _q(s, "memory.host", parts, "host (CPU) memory per device: the offloaded optimizer "
              "states and fp32 master copy (ZeRO-Offload, Ren et al. 2021)")


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
    region = tp_region(arch)  # split tp ways (tp = 1: whole; tp may be a plan's symbol)
    entries, seen = [], set()
    for node, a in arch.ops():
        if a["op"].kind == "cross_entropy" and not conv.loss_saved:
            continue
        ctx = context(arch, node, conv.attention, dropout, conv.implementation)
        for item in a["op"].saved(arch.input_shapes(node), a["shape"], ctx):
            per = _dtype_bytes(s, item)
            if per is None:
                continue
            shape = tuple(item.shape)
            if item.shares.startswith("input"):
                tensor = _storage(arch, a["inputs"][int(item.shares[5:])], conv.attention)
                base = tensor
                if conv.implementation == "hf-eager":
                    base = _eager_base(arch, tensor, a["op"].kind == "matmul", s.model.bindings)
                if base != a["inputs"][int(item.shares[5:])]:  # a view keeps its whole source alive
                    tensor, shape = base, tuple(arch.shape(base))
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
                # one tensor shared by every copy: made once outside the group, or by the last
                # copy of another stack (an encoder's output, read by every decoder layer)
                g, copies = None, sympy.Integer(1)
            key = (tensor, g.name if g else None)
            if key in seen:
                continue
            seen.add(key)
            div = 1
            if producer in region:
                div = s.tp
            elif s.sp and g is not None:
                div = s.tp
            elif a["op"].kind == "cross_entropy" and item.role == "log_probs":
                div = s.tp  # vocabulary-parallel cross-entropy
            entries.append((node, item.role, shape, per, copies, div, tensor))
    if conv.recompute == "full":
        for c, name, invariant in checkpoints(arch):
            group = arch.groups[name]
            div = s.tp if s.sp else 1
            label = "shared block input" if invariant else "block input"
            entries.append((f"{group.name}/checkpoint", label, tuple(arch.shape(c)), s.bytes.act,
                            sympy.Integer(1) if invariant else group.active, div, c))
    return entries


def _storage(arch, tensor: str, attention: str) -> str:
    """The graph tensor whose storage *tensor* is. A view op marked ``view_of_input`` (the first
    token) shares its input's storage. A fused attention kernel writes its output in
    (B, T, h, d_head) layout, so merging the heads of it is a view, not a copy (PyTorch's SDPA);
    every other op output is its own storage."""
    a = arch.graph.nodes[tensor]
    if a["kind"] == "op" and getattr(a["op"], "view_of_input", False):
        return _storage(arch, a["inputs"][0], attention)  # BERT's pooler reads X[:, 0], a view of X
    if attention == "flash" and a["kind"] == "op" and a["op"].kind == "merge_heads":
        src = arch.graph.nodes[a["inputs"][0]]
        if src["kind"] == "op" and src["op"].kind == "matmul" and src["op"].tag == "attention_values":
            return a["inputs"][0]
    return tensor


def _eager_base(arch, tensor: str, matmul: bool, bindings) -> str:
    """The tensor whose storage eager PyTorch keeps when an op saves *tensor* (hf-eager).

    A slice (``torch.split``, ``chunk``, ``[..., a:b]``: a view) keeps its whole base alive. A
    batched matmul first reshapes a 4-d operand (B, heads, T, x) to (B·heads, T, x): a view only
    when B = 1 (the batch and head dimensions then merge without a copy), a copy of the operand
    otherwise -- so a sliced operand keeps its base at B = 1 only, and keys and values repeated
    from one head (``repeat_kv``, an expand with stride 0) stay the un-repeated tensor at B = 1."""
    from ..symbols import B, as_expr

    a = arch.graph.nodes[tensor]
    if matmul:
        if B not in bindings or bindings[B] != 1:
            return tensor
        if a["kind"] == "op" and a["op"].kind == "repeat_kv" \
                and as_expr(arch.shape(a["inputs"][0])[-3]).xreplace(bindings) == 1:
            return a["inputs"][0]
    while a["kind"] == "op" and a["op"].kind in ("slice", "split_heads"):
        tensor = a["inputs"][0]
        a = arch.graph.nodes[tensor]
    return tensor


def _reader_group(arch, node):
    """The outermost group that reads *node* (one checkpoint per copy of it)."""
    for n, a in arch.ops():
        if node in a["inputs"] and a["group"] is not None:
            return arch.group_chain(a["group"])[-1]
    raise SymgptError(f"{node} feeds no repeated group")


def stage_factor(s: Setup, node: str) -> sympy.Expr:
    """What a saved tensor of *node* weighs on this device: the micro-batches in flight of its
    stage (a stack's tensors: × 1/pp of the layers), over the context-parallel ranks."""
    arch, lay = s.model.arch, s.lay
    where = place(arch, node)[0] if node in arch.graph else "stack"  # a block's checkpoint
    f = lay.in_flight(where) if where == "stack" else lay.share(where) * lay.in_flight(where)
    return f / lay.cp


def activations(model, **options) -> Quantity:
    s = setup(model, **options)
    out: dict[str, sympy.Expr] = {}
    for node, _role, shape, per, copies, div, _t in _saved(s):
        f = stage_factor(s, node)
        if f != 0:  # (0: on another stage)
            out[node] = out.get(node, sympy.Integer(0)) + numel(shape) * per * copies / div * f
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
    """K and V of every attention layer a generating model keeps for B sequences
    (``kvcache.cache_tensors``, the tensors ``inference.kv_cache`` prices too), at the activation
    dtype, split tp ways by heads: each causal self-attention's keys and values over its stack's
    T (T_dec) tokens (Min(T, W) under a sliding window), each cross-attention's keys and values of
    the encoder's T_enc outputs (an encoder--decoder runs its encoder once per request), or an MLA
    layer's latent and shared rotary key (whole on every rank). A bidirectional encoder's
    attention is recomputed, never cached: BERT or ViT alone has no KV cache."""
    s = setup(model, **options)
    arch = s.model.arch
    cached = cache_tensors(arch)
    parts = [(c.node, c.elements * s.bytes.act / (s.tp if c.split else 1)) for c in cached]
    what = "KV cache for inference: K and V of every layer, B·T tokens (Min(T, W) with a sliding window)"
    if any(arch.role(c.node) in _roles.LATENT_CACHE for c in cached):
        what = ("KV cache for inference: the compressed latent and the shared rotary key of every layer "
                "(multi-latent attention), B·T tokens")
    elif arch.find(_roles.CROSS_SCORES):
        what = ("KV cache for inference: K and V of every decoder layer, B·T_dec tokens of its "
                "self-attention and B·T_enc encoder outputs of its cross-attention")
    elif not parts:
        what = "KV cache for inference: none (a bidirectional encoder recomputes its attention)"
    return _q(s, "memory.kv_cache", parts or [("kv_cache", sympy.Integer(0))], what)


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

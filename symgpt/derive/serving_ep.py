"""Serving a mixture of experts with expert parallelism (EP) and data-parallel attention, as
DeepSeek-V3 is deployed (DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Sec. 3.4): an instance
of ``ep`` devices runs the attention as ``dp`` data-parallel ranks of ``tp`` tensor-parallel
devices (tp · dp = ep) and splits the routed experts over all ``ep`` devices.

Per device (:func:`weights`):

* attention, token table and LM head: split by tensor parallelism within a DP rank (the rules of
  ``derive.tensor_parallel``: an MLA layer's down-projections and latent whole on every device),
  replicated over the DP ranks;
* routed experts: ``E + R`` expert slots (``R`` redundant copies of high-load experts, the
  report's 32 in prefill) over ``ep`` devices, (E + R) / ep slots each, one slot an expert's
  weights (EP not dividing the slots is refused);
* dense FFN layers, shared experts and the router: whole on every device ("1-way Tensor
  Parallelism for the dense MLPs in shallow layers", Sec. 3.4.1; the shared expert run by every
  device on its own tokens). The report's decode deployment instead hosts the shared expert on
  the 64 devices of redundant experts and routes it as a ninth expert (Sec. 3.4.2): not modelled,
  so the weights here are an upper bound by the shared experts' size on every other device.

The KV cache of a DP rank's sequences is held by its ``tp`` devices as tensor parallelism holds
it (``derive.serving.paged`` at ``chips = tp``: KV heads split, an MLA latent whole on each), so
the sequences that fit are those of one device's budget, per DP rank, ``dp`` times per instance.

A decode step (:func:`decode_step`) of ``b`` sequences per DP rank on the busiest device under
balanced routing (every expert slot receives the same share of the token copies, the default of
every MoE answer; all devices alike but for the sequence-parallel remainder): the attention side
priced at ``chips = tp`` for ``b`` sequences, with its all-reduce over the NVLink; under
sequence parallelism the device holds ceil(b / tp) of its rank's tokens and runs the dense FFN,
shared experts and router on them whole; its expert slots receive k · b · dp / ep = k · b / tp
token copies; each op a roofline max(FLOPs / peak, bytes / bandwidth). Per MoE layer it
dispatches ceil(b / tp) · k token copies of d elements at the dispatch precision (FP8 with a
float32 scale per 1x128 tile in DeepSeek-V3, Sec. 3.3.2--3.3.3: "we quantize the activation
before MoE up-projections into FP8 and then apply dispatch components"; the combine stays in
BF16) and returns k · b / tp expert outputs in the combine; every copy is counted, a device's own
included (an upper bound by 1/ep of them). The step is the sum, no overlap (the report overlaps
two micro-batches: an upper bound). ``imbalance`` X prices a busiest device whose expert slots
receive X times the balanced share (``derive.moe_load``'s X): X times their work and its
combine, its own tokens' dispatch unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from ..core.symbols import B, BW_link, BW_mem, F_peak, as_expr
from ..graph import roles
from ..ops.base import numel
from .inference import op_bytes, op_flops, param_bytes, split, weight_copies
from .mla_absorbed import absorb
from .inference_setup import device_memory, setup
from .inference_time import ALL_REDUCE
from .quantity import Quantity
from .shortcuts import expanded
from .step import step
from .tensor_parallel import place

#: bits a dispatched and a combined element travel in (DeepSeek-V3 Sec. 3.3: FP8 dispatch, BF16 combine)
DISPATCH_BITS, COMBINE_BITS = 8, 16
#: the dispatch precisions priced: FP8 (with its tile scales) or BF16
DISPATCH_CHOICES = (8, 16)
#: elements per float32 scale of an FP8 activation (1x128 tiles, DeepSeek-V3 Sec. 3.3.2)
TILE = 128

#: the all-to-all's link, by name
LINKS = {"nvlink": "the NVLink (the instance within one node)",
         "network": "the scale-out network, one NIC per device (the instance spans nodes)",
         "given": "the link of --ep-bandwidth"}

SOURCE = "DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Sec. 3.4 (Inference and Deployment)"
PARTS = ("attention, embedding and head", "dense FFN, shared experts and router", "routed experts",
         "norms and the rest")


@dataclass(frozen=True)
class Deployment:
    """An expert-parallel instance: ``ep`` devices, attention as ``dp`` ranks of ``tp`` devices,
    ``redundant`` extra expert slots; checked against the model's experts by :func:`deployment`."""

    ep: int
    dp: int
    tp: int
    redundant: int = 0
    experts: int = 0           # the routed experts E
    link: str = ""             # "nvlink" or "network": the all-to-all's link
    imbalance: sympy.Rational = sympy.Integer(1)   # token copies the busiest device receives / the balanced share

    @property
    def slots(self) -> int:
        """Expert slots on each device: (E + R) / ep."""
        return (self.experts + self.redundant) // self.ep


def _experts(model) -> int:
    arch = model.arch
    groups = arch.groups_with(roles.EXPERTS)
    if not groups:
        raise SymgptError(f"{model.name} has no routed experts: expert parallelism needs a mixture of experts")
    counts = {as_expr(g.repeat).xreplace(model.bindings) for g in groups}
    if len(counts) != 1 or not next(iter(counts)).is_Integer:
        raise SymgptError(f"{model.name}: the routed experts are not one bound number: bind E")
    return int(next(iter(counts)))


def deployment(model, ep: int, dp: int, tp: int, redundant: int = 0, node_size: int | None = None,
               imbalance=1) -> Deployment:
    """The instance, or one line saying why the split is impossible."""
    for name, v, low in (("--ep", ep, 1), ("--dp-attention", dp, 1), ("--chips", tp, 1),
                         ("--redundant-experts", redundant, 0)):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise SymgptError(f"{name} is an integer >= {low}, got {v!r}")
    if tp * dp != ep:
        raise SymgptError(f"--ep {ep} must be the instance's devices, --chips (TP) x --dp-attention: "
                          f"{tp} x {dp} = {tp * dp}")
    E = _experts(model)
    if (E + redundant) % ep:
        raise SymgptError(f"--ep {ep} does not divide the {E} routed experts" +
                          (f" + {redundant} redundant" if redundant else "") +
                          f" of {model.name}: each device holds whole experts (--redundant-experts R makes E + R "
                          "slots)")
    link = "nvlink" if node_size is None or ep <= node_size else "network"
    x = sympy.Rational(imbalance)
    if not 1 <= x <= ep:
        raise SymgptError(f"--imbalance is the busiest device's token copies over the balanced share, in [1, {ep}] "
                          f"(--ep), got {imbalance}")
    return Deployment(ep, dp, tp, redundant, E, link, x)


def _kind(arch, node) -> str:
    """Which of :data:`PARTS` op *node* belongs to."""
    if place(arch, node)[1]:
        return PARTS[2]
    part = roles.part_of(arch.role(node))
    if part == "ffn":
        return PARTS[1]
    if part in ("attention", "embedding", "head") or split(arch, node):
        return PARTS[0]
    return PARTS[3]


def _share(d: Deployment, kind: str, s, arch, node, e):
    """Of *e* (the op's whole amount), what one device holds."""
    if kind == PARTS[2]:
        return e * sympy.Rational(d.slots, d.experts)
    if kind == PARTS[1]:
        return e
    return e / d.tp if d.tp > 1 and split(arch, node) else e


def _options(d: Deployment, options) -> dict:
    out = dict(options)
    out.pop("chips", None)
    if d.tp > 1:
        out["chips"] = d.tp
    return out


def _shared(arch) -> bool:
    """Whether the model has shared experts beside its routed ones."""
    return any(a.get("role") == roles.SHARED_ADD for _, a in arch.ops())


def _notes(d: Deployment, s, extra=()) -> tuple[str, ...]:
    out = [f"expert parallelism ({SOURCE}): {d.ep} devices; attention data-parallel over {d.dp} ranks of "
           f"{d.tp} tensor-parallel devices; {d.experts} routed experts + {d.redundant} redundant slots, "
           f"{d.slots} per device",
           "per device: attention, token table and LM head split by TP within a DP rank (an MLA latent whole), "
           "replicated over DP ranks; routed experts split by EP; dense FFN layers, shared experts and router "
           "whole on every device (Sec. 3.4.1: 1-way TP for the dense MLPs)" + (
               "; the report's decode deployment hosts the shared expert on the redundant experts' devices as a "
               "ninth routed expert (Sec. 3.4.2): not modelled, the shared experts counted on every device (an "
               "upper bound on its weights)" if _shared(s.model.arch) else ""),
           "bytes: " + ", ".join(s.labels)]
    if s.device is not None:
        out.append(f"hardware {s.device.title} [{s.device.source}]")
    return tuple(out) + tuple(extra)


def _q(s, name, parts, unit, notes):
    return Quantity(name, tuple(parts), s.bindings, unit, "vllm-paged", notes)


def weight_parts(model, d: Deployment, **options):
    """(part, bytes one device holds) for each of :data:`PARTS`."""
    opts = _options(d, options)
    s = setup(model, **opts)
    arch = model.arch
    sums = {k: sympy.Integer(0) for k in PARTS}
    for n, a in arch.ops():
        e = sympy.Integer(0)
        for _, pnode in arch.params_of(n).items():
            if arch.graph.nodes[pnode]["owner"] != n:
                continue  # a tied weight is stored once, by its owner
            e += numel(arch.graph.nodes[pnode]["shape"]) * arch.multiplicity(pnode) * param_bytes(s, arch, pnode)
        kind = _kind(arch, n)
        sums[kind] += _share(d, kind, s, arch, n, e)
    return s, [(k, expanded(v.xreplace(s.bindings))) for k, v in sums.items() if v != 0]


def weights(model, d: Deployment, **options) -> Quantity:
    s, parts = weight_parts(model, d, **options)
    return _q(s, "serving.ep.weights", parts, "bytes", _notes(d, s, ["weights held on one device"]))


def kv_budget(model, d: Deployment, utilization, workspace_tokens: int, **options) -> Quantity:
    """utilization · device memory - the device's weights (:func:`weights`) - the workspace."""
    from .serving import budget_parts

    opts = _options(d, options)
    s, wparts = weight_parts(model, d, **options)
    if device_memory(s, opts.get("device_memory")) is None:
        raise SymgptError("serving capacity needs the device's memory: give --hardware NAME or --device-memory BYTES")
    parts = budget_parts(model, utilization, workspace_tokens, **opts)
    parts = [p for p in parts if p[0] != "weights"]
    parts.insert(1, ("weights", -sympy.Add(*[e for _, e in wparts])))
    return _q(s, "serving.ep.kv_budget", parts, "bytes", _notes(d, s, [
        f"memory for the KV cache on each device: {sympy.Rational(utilization)} of its memory less the weights it "
        f"holds under expert parallelism and the workspace (the largest activation of a prefill of "
        f"{workspace_tokens} tokens at TP {d.tp}, a lower bound)"]))


def max_sequences(model, d: Deployment, utilization, workspace_tokens: int, block: int, **options):
    """(per DP rank, per instance): floor(budget / bytes per sequence) and dp times it."""
    from .serving import paged

    budget_q = kv_budget(model, d, utilization, workspace_tokens, **options)
    s = setup(model, **_options(d, options))
    p = paged(model, block, **_options(d, options))
    budget = budget_q.expr.xreplace(s.bindings)
    per = sympy.Add(*[e for _, e in p.sequence_parts()]).xreplace(s.bindings)
    if budget.is_number and budget < 0:
        raise SymgptError(f"the weights a device holds and the workspace do not fit in the memory this utilization "
                          f"leaves ({sympy.ceiling(-budget)} bytes short): no sequence fits (more --ep, fewer "
                          "--weight-bits or --fp8)")
    rank = sympy.floor(budget / per)
    note = [f"sequences of T tokens one DP rank holds: floor(KV budget of a device / bytes per sequence on a device, "
            f"its cache held as TP {d.tp} holds it); the instance: {d.dp} DP ranks times it"]
    return (_q(s, "serving.ep.max_sequences_per_rank", [("sequences", rank)], "sequences", _notes(d, s, note)),
            _q(s, "serving.ep.max_sequences", [("sequences", d.dp * rank)], "sequences", _notes(d, s, note)))


def moe_layers(arch) -> sympy.Expr:
    """MoE layers: the copies of the router."""
    return sympy.Add(*[arch.multiplicity(n) for n, a in arch.ops() if a.get("role") == roles.ROUTER])


def _hidden(arch) -> sympy.Expr:
    """d: the width of the token a router reads (what is dispatched)."""
    n = next(n for n, a in arch.ops() if a.get("role") == roles.ROUTER)
    return arch.shape(arch.graph.nodes[n]["inputs"][0])[-1]


def k_active(arch) -> sympy.Expr:
    g = arch.groups_with(roles.EXPERTS)[0]
    return g.active


def all_to_all(model, d: Deployment, batch: int, dispatch_bits: int = DISPATCH_BITS, **options) -> Quantity:
    """Bytes one device sends per decode step: dispatch (its ceil(b/tp) tokens x k copies x d at
    the dispatch precision, FP8 with float32 tile scales) and combine (its k·b/tp received copies
    x d in BF16), over every MoE layer."""
    if dispatch_bits not in DISPATCH_CHOICES:
        raise SymgptError(f"the dispatch bits are one of {', '.join(map(str, DISPATCH_CHOICES))}, got {dispatch_bits!r}")
    s = setup(model, **_options(d, options))
    arch = model.arch
    b = _batch(batch)
    layers, dd, k = moe_layers(arch), _hidden(arch), k_active(arch)
    own = sympy.ceiling(sympy.Rational(b, d.tp))
    received = sympy.Rational(b, d.tp) * k * d.imbalance
    parts = [("dispatch", layers * own * k * dd * sympy.Rational(dispatch_bits, 8))]
    if dispatch_bits < 16:
        parts.append(("dispatch scales", layers * own * k * sympy.ceiling(dd / TILE) * 4))
    parts.append(("combine", layers * received * dd * sympy.Rational(COMBINE_BITS, 8)))
    parts = [(p, e.xreplace(s.bindings)) for p, e in parts]
    return _q(s, "serving.ep.all_to_all_bytes", parts, "bytes", _notes(d, s, [
        f"all-to-all bytes one device sends per decode step, {b} sequences per DP rank: dispatch = MoE layers x "
        f"ceil(b/TP) tokens x k x d at {dispatch_bits} bits" + (f" + a float32 scale per {TILE} elements" if
                                                              dispatch_bits < 16 else "") +
        "; combine = MoE layers x k·b/TP received copies" + (f" x {d.imbalance} (--imbalance)" if d.imbalance != 1
                                                               else "") +
        f" x d at {COMBINE_BITS} bits (DeepSeek-V3 Sec. 3.3: FP8 dispatch, BF16 combine); every copy counted, a "
        "device's own included"]))


def _batch(batch) -> int:
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise SymgptError(f"the batch per DP rank is an integer >= 1, got {batch!r}")
    return batch


def _roof(f, by):
    return sympy.Max(f / F_peak, by / BW_mem)


def decode_step(model, d: Deployment, batch: int, a2a_bandwidth, dispatch_bits: int = DISPATCH_BITS,
                **options) -> Quantity:
    """Seconds of one decode step on the busiest device (see the module's docstring)."""
    b = _batch(batch)
    opts = _options(d, options)
    s_tp = setup(model, **opts)
    s_1 = setup(model, **{k: v for k, v in opts.items() if k != "chips"})
    arch = model.arch
    if F_peak not in s_tp.bindings or BW_mem not in s_tp.bindings:
        raise SymgptError("step times need the device: give --hardware NAME (or --peak and --bandwidth)")
    if d.tp > 1 and BW_link not in s_tp.bindings:
        raise SymgptError("tensor parallelism needs the link bandwidth: give --link-bandwidth or a profile")
    st = absorb(s_tp, arch, step(arch, "decode"))  # an MLA layer in the form the options ask
    own = sympy.ceiling(sympy.Rational(b, d.tp))        # the device's tokens under sequence parallelism
    per_dev = sympy.Rational(b, d.tp) * d.imbalance     # token copies the device's slots receive, over k
    sums = {k: sympy.Integer(0) for k in ("attention side (TP)", "dense FFN, shared experts and router",
                                          "routed experts", "TP all-reduce", "all-to-all")}
    for o in st.ops:
        kind = _kind(arch, o.node)
        if kind == PARTS[2]:
            f = op_flops(s_1, arch, st, o).xreplace({B: per_dev})
            w = sympy.Add(*[numel(arch.graph.nodes[p]["shape"]) * param_bytes(s_1, arch, p)
                            for p in arch.params_of(o.node).values()])
            moved = (op_bytes(s_1, arch, st, o) - w * weight_copies(arch, o.node, B)).xreplace({B: per_dev})
            mult = arch.multiplicity(o.node) / _experts(model)     # layers of experts
            by = moved + w * mult * sympy.Min(d.slots, k_active(arch) * per_dev)
            key = "routed experts"
        elif kind == PARTS[1]:
            f, by = (op_flops(s_1, arch, st, o).xreplace({B: own}), op_bytes(s_1, arch, st, o).xreplace({B: own}))
            key = "dense FFN, shared experts and router"
        else:
            f, by = op_flops(s_tp, arch, st, o).xreplace({B: b}), op_bytes(s_tp, arch, st, o).xreplace({B: b})
            key = "attention side (TP)"
            if d.tp > 1 and arch.role(o.node) in ALL_REDUCE:
                size = numel(o.written) * s_tp.act * arch.activity(o.node)
                sums["TP all-reduce"] += 2 * sympy.Rational(d.tp - 1, d.tp) * size.xreplace({B: b}) / BW_link
        if f != 0 or by != 0:
            sums[key] += _roof(f, by)
    a2a = all_to_all(model, d, b, dispatch_bits, **options)
    sums["all-to-all"] = a2a.expr / a2a_bandwidth
    parts = [(k, v.xreplace(s_tp.bindings)) for k, v in sums.items() if v != 0]
    return _q(s_tp, "serving.ep.decode_step", parts, "s", _notes(d, s_tp, [
        f"one decode step, {b} sequences per DP rank, on the busiest device " + (
            "under balanced routing (every expert slot receives k·b/TP / slots copies; every device alike but for "
            if d.imbalance == 1 else
            f"receiving {d.imbalance} times the balanced share of token copies (--imbalance; its slots equally "
            "loaded among themselves; besides, ") + f"the sequence-parallel remainder: the one "
        f"with ceil(b/TP) = {own} tokens): each op a roofline max(FLOPs / peak, bytes / bandwidth), the attention "
        f"side at TP {d.tp} over b sequences, the dense FFN, shared experts and router whole on its {own} tokens, "
        f"its {d.slots} expert slots on {'' if d.imbalance == 1 else str(d.imbalance) + ' x '}k·b/TP token copies "
        f"(weights read: Min(slots, copies)); the all-to-all over "
        f"{LINKS.get(d.link, d.link)} at "
        f"{a2a_bandwidth} bytes/s; summed, no overlap (the report overlaps two micro-batches: an upper bound)"]))

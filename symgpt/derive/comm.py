"""Communication: the bytes each device sends per training step, by parallel dimension.

Every collective is priced as its ring (bandwidth-optimal) implementation sends it: over n ranks,
an all-reduce of S bytes sends 2(n − 1)/n · S from each rank, an all-gather or reduce-scatter
(S the whole tensor) (n − 1)/n · S, an all-to-all (n − 1)/n of what a rank holds. Sizes come from
the graph (the tensors a collective moves) and the precision policy (``memory.setup``: the same
options as ``memory.*``). A step is ``microbatches`` micro-batches of B sequences.

* ``comm.dp``: the gradient all-reduce over the dp·cp ranks that replicate a parameter (experts:
  over dp·cp/ep), once per step (ZeRO-0); ZeRO-1/2 and the distributed optimizer: reduce-scatter
  of gradients + all-gather of the updated weights; ZeRO-3: the weights all-gathered for forward
  and again for backward and the gradients reduce-scattered, every micro-batch (Rajbhandari et
  al. 2019 Sec. 7: 2Ψ and 3Ψ elements at large n);
* ``comm.tp``: Megatron-LM's tensor parallel (Shoeybi et al. 2019): one all-reduce after each
  row-parallel linear in forward (again when full recomputation reruns it), one per column-parallel
  input in backward (and per replicated tensor a split op reads: MLA's shared rotary key, whose
  gradient each rank sums over its own heads only; a replicated MLA down-projection's input needs
  none), the vocabulary-parallel embedding's and LM head's, and the three (B·T fp32) of the
  vocabulary-parallel cross-entropy; with sequence parallelism (Korthikanti et al. 2022
  Sec. 4.2.2) each all-reduce is an all-gather + reduce-scatter pair: the same bytes;
* ``comm.pp``: the activation sent to the next stage in forward and its gradient sent back, per
  micro-batch and chunk boundary (/tp under sequence parallelism: the tensor is split), and a
  tied embedding's gradient all-reduced between the first and last stage; DualPipe (DeepSeek-V3
  report, Sec. 3.2.1): m/2 micro-batches each way from an end rank, and each stage's gradient
  summed over its two copies (ranks r and pp − 1 − r);
* ``comm.ep``: the token dispatch and combine all-to-alls of each MoE layer, forward and backward
  (balanced routing: k copies of each token, (ep − 1)/ep of them leave the rank);
* ``comm.cp``: ring attention (context parallel): each rank's K and V passed around the ring,
  cp − 1 times forward, and K, V with their gradients in backward;
* ``comm.total``: their sum.
"""

from __future__ import annotations

import sympy

from ..graph import roles
from ..ops.base import numel
from .quantity import Quantity
from .flops import label
from .layout import several
from .memory import param_bytes, setup
from .memory_states import zero3_quantized
from .tensor_parallel import linear_roles, place, replicated, tp_region
from .walk import has_frozen

DIMS = ("dp", "tp", "pp", "ep", "cp")


def ring(n) -> sympy.Expr:
    """(n − 1)/n: the share of a gathered or scattered tensor a rank sends on a ring."""
    return 1 - sympy.Integer(1) / n


def _q(s, name, parts, what) -> Quantity:
    parts = [(p, sympy.expand(e)) for p, e in parts]
    parts = [(p, e) for p, e in parts if e != 0] or [("none", sympy.Integer(0))]  # 0: another stage
    notes = (f"{what}; bytes each device sends per step ({s.lay.describe() or 'one device'}; "
             f"precision {s.precision}; ring collectives)",
             f"convention {s.conv.name}: {s.conv.summary} [{s.conv.source}]")
    routing = s.lay.routing_note(s.model.arch)  # MoE load imbalance: the routing priced
    notes += (routing,) if routing else ()
    notes += (DUALPIPE_NOTE,) if dualpipe(s.lay) else ()
    frozen3 = s.zero >= 3 and s.lay.dp_group != 1 and has_frozen(s.model.arch) and name in ("comm.dp", "comm.total")
    notes += (ZERO3_FROZEN_NOTE,) if frozen3 else ()
    return Quantity(name, tuple(parts), s.model.bindings, "bytes", label(s.conv, s.conv.name), notes)


def _share(s, node) -> sympy.Expr:
    """The fraction of op *node*'s work this device does per micro-batch of the step (its stage's
    share; DualPipe: each of its two stages sees half the micro-batches, m/2 from each end)."""
    share = s.lay.share(place(s.model.arch, node)[0])
    return share / 2 if dualpipe(s.lay) else share


def _params(s):
    """(dense, expert) parameters on this device before any ZeRO sharding; of a fine-tuned graph,
    the trainable ones only (a frozen parameter has no gradient to sum and is never updated)."""
    arch = s.model.arch
    dense = expert = sympy.Integer(0)
    for owner, n in param_bytes(s, 1, 4, trainable_only=has_frozen(arch)):
        if owner in arch.graph and place(arch, owner)[1]:
            expert += n
        else:
            dense += n
    return dense, expert


def dp_parts(s):
    lay, b, m = s.lay, s.bytes, s.lay.microbatches
    _frozen_base(s, "dp")
    dense, expert = _params(s)
    gathered = _stored(s) if s.zero >= 3 and has_frozen(s.model.arch) else (0, 0)  # ZeRO-3 of a frozen base
    out = []
    for what, n, group, w in (("", dense, lay.dp_group, gathered[0]), ("experts ", expert, lay.expert_dp_group,
                                                                       gathered[1])):
        if (n == 0 and w == 0) or group == 1:
            continue
        r = ring(group)
        if s.zero == 0:
            out.append((f"dp/{what}gradient all-reduce", 2 * r * n * b.grad))
        elif s.zero < 3:
            out.append((f"dp/{what}gradient reduce-scatter", r * n * b.grad))
            out.append((f"dp/{what}weight all-gather", r * n * b.weight))
        elif has_frozen(s.model.arch):  # ZeRO-3 of a fine-tuned graph: every weight gathered, as stored
            out.append((f"dp/{what}weight all-gather (forward, frozen and trainable)", m * r * w))
            out.append((f"dp/{what}weight all-gather (backward, frozen and trainable)", m * r * w))
            if n != 0:
                out.append((f"dp/{what}gradient reduce-scatter (trainable)", m * r * n * b.grad))
        else:
            out.append((f"dp/{what}weight all-gather (forward)", m * r * n * b.weight))
            out.append((f"dp/{what}weight all-gather (backward)", m * r * n * b.weight))
            out.append((f"dp/{what}gradient reduce-scatter", m * r * n * b.grad))
    return out


ZERO3_FROZEN_NOTE = ("ZeRO-3 of a frozen base: every weight, frozen ones included, sharded over the data-parallel "
                     "ranks and all-gathered for forward and again for backward each micro-batch, as the ZeRO paper's "
                     "stage 3 gathers every parameter (Rajbhandari et al. 2019, Sec. 7.2.2); the trainable gradients "
                     "alone reduce-scattered. Not modelled: PyTorch FSDP keeps its root unit (embeddings, final norm, "
                     "head) gathered from forward through backward, and DeepSpeed gathers no weight in backward for a "
                     "module whose output needs no gradient (a frozen embedding): those weights are counted in the "
                     "backward all-gather here")


def _stored(s):
    """(dense, expert) bytes of every weight on this device before ZeRO sharding, frozen ones included,
    each at the bytes it is stored in (QLoRA's base: its quantized bits): what ZeRO-3 gathers."""
    arch = s.model.arch
    dense = expert = sympy.Integer(0)
    for owner, n in param_bytes(s, s.bytes.weight, 4, stored=True):
        if owner in arch.graph and place(arch, owner)[1]:
            expert += n
        else:
            dense += n
    return dense, expert


def tp_parts(s):
    arch, lay, act = s.model.arch, s.lay, s.bytes.act
    t, m = lay.tp, lay.microbatches
    if t == 1:
        return []
    ar = 2 * ring(t) * m / lay.cp  # an all-reduce (or AG + RS pair) per micro-batch, T/cp tokens
    forward = 2 if s.conv.recompute == "full" else 1
    kind = "all-gather + reduce-scatter" if s.sp else "all-reduce"
    out, seen = [], set()
    for node, r in linear_roles(arch).items():
        a = arch.graph.nodes[node]
        if r == "row":
            size = numel(a["shape"]) * arch.activity(node) * act * _share(s, node)
            out.append((f"tp/{node} {kind} (forward)", forward * ar * size))
        elif a["inputs"][0] not in seen:
            src = a["inputs"][0]
            seen.add(src)
            size = numel(arch.shape(src)) * arch.activity(src) * act * _share(s, src)
            out.append((f"tp/{src} {kind} (backward)", ar * size))
    region = tp_region(arch)
    for node, a in arch.ops():  # a replicated tensor read inside the region (MLA's shared rotary key)
        if replicated(arch, node) and node not in seen and any(
                v in region and linear_roles(arch).get(v) != "column" for v in arch.graph.successors(node)):
            seen.add(node)
            size = numel(a["shape"]) * arch.activity(node) * act * _share(s, node)
            out.append((f"tp/{node} {kind} (backward)", ar * size))
    emb, head = arch.first(roles.TOKEN_EMBEDDING), arch.first(roles.HEAD)
    one = ring(t) * m / lay.cp
    if emb is not None:  # vocabulary-parallel lookup: partial rows summed (reduce-scattered with SP)
        size = numel(arch.shape(emb)) * act * _share(s, emb)
        out.append((f"tp/{emb} {'reduce-scatter' if s.sp else 'all-reduce'} (forward)", (1 if s.sp else 2) * one * size))
    if head is not None:  # column-parallel over the vocabulary: its input's gradient summed
        src = arch.graph.nodes[head]["inputs"][0]
        size = numel(arch.shape(src)) * act * _share(s, head)
        out.append((f"tp/{head} {kind} (forward and backward)" if s.sp else f"tp/{head} all-reduce (backward)",
                    2 * one * size))
    if arch.loss:  # vocabulary-parallel cross-entropy: max, sum of exp, target logit (fp32 each)
        tokens = numel(arch.shape(arch.output)[:-1])
        out.append((f"tp/{arch.loss} all-reduces (3 × fp32 per token)", 3 * 2 * one * tokens * 4 * _share(s, arch.loss)))
    return out


def _boundary(arch, g):
    """The tensor one copy of stack *g* hands to the next (its carry, else its first input); None
    for a stack held and not run (a vision or audio tower counted in parameters only: no op of it
    reads a tensor, so nothing crosses a stage boundary)."""
    if g.carry:
        return arch.shape(g.carry[0])
    for n, a in arch.ops():
        if arch.stack_of(n) == g.name and a["inputs"]:
            return arch.shape(a["inputs"][0])
    return None


def pp_parts(s):
    arch, lay, act = s.model.arch, s.lay, s.bytes.act
    p, v, m = lay.pp, lay.vp, lay.microbatches
    if p == 1:
        return []
    multi = several(p)
    first = lay.stage == "first"
    fwd, bwd = (v, v - 1) if first else (v - 1, v)
    if dualpipe(lay):  # an end rank: m/2 micro-batches leave its first stage forward, m/2 its last backward
        fwd = bwd = sympy.Rational(1, 2)
    out = []
    for g in arch.stacks():
        boundary = _boundary(arch, g)
        if boundary is None:
            continue
        size = numel(boundary) * act / lay.cp / (lay.tp if s.sp else 1)
        out.append((f"pp/{g.name} activations sent forward", multi * fwd * m * size))
        out.append((f"pp/{g.name} gradients sent backward", multi * bwd * m * size))
    if dualpipe(lay):
        return out + _dualpipe_copies(s)
    from .params import tied_uses

    for op, local, pnode in tied_uses(arch):
        if arch.graph.nodes[pnode].get("frozen"):
            continue  # fine-tuning: a frozen tied weight has no gradient to sum
        if place(arch, op)[0] == "post":  # first and last stage sum the tied weight's gradient
            n = numel(arch.graph.nodes[pnode]["shape"]) / lay.tp
            out.append((f"pp/{op} tied gradient all-reduce (first and last stage)", multi * 2 * ring(2) * n * s.bytes.grad))
    return out


def dualpipe(lay) -> bool:
    """Whether *lay* runs DualPipe over more than one stage (rank r holds stage r and pp − 1 − r)."""
    return lay.schedule == "dualpipe" and lay.pp != 1


def _dualpipe_copies(s):
    """DualPipe: every stage's parameters sit on two ranks (r and pp − 1 − r), whose gradients are
    summed once a step, as DeepSeek's public example sums them (each rank adds its partner's copy):
    an all-reduce over the two ranks (ring of 2: each sends one copy) after the data-parallel
    reduction, so on the full gradients under ZeRO-0 and on this rank's shard (1/(dp·cp); experts
    1/(dp·cp/ep)) after the reduce-scatter under ZeRO-1 and ZeRO-2. A tied embedding and head sit
    on both end ranks as one matrix: summed with the rest (no separate tied all-reduce)."""
    from ..core.errors import SymgptError

    if s.zero >= 3:
        raise SymgptError("dualpipe under ZeRO-3: the weights gathered for two stages' copies every micro-batch "
                          "are not priced; use --zero 0, 1 or 2")
    lay, b = s.lay, s.bytes
    dense, expert = _params(s)
    n = sympy.Integer(0)
    for count, group in ((dense, lay.dp_group), (expert, lay.expert_dp_group)):
        n += count if s.zero == 0 else count / group
    if n == 0:
        return []
    return [("pp/gradient all-reduce of each stage's two copies (rank r and pp − 1 − r)", 2 * ring(2) * n * b.grad)]


DUALPIPE_NOTE = ("DualPipe (DeepSeek-V3 report, arXiv 2412.19437, Sec. 3.2.1): rank r holds stage r and stage "
                 "pp − 1 − r; an end rank sends m/2 micro-batches' activations forward (its first stage) and m/2 "
                 "gradients backward (its last stage); a middle rank (0 < r < pp − 1) sends m of each, twice the "
                 "end rank's activations and gradients sent, with its two middle stages' own collectives: not "
                 "priced (this answer and the step time are an end rank's, which holds the embedding and head; a "
                 "middle rank's step may be the longer); each stage's gradient is summed over its two copies by an "
                 "all-reduce between ranks r and pp − 1 − r (as DeepSeek's public example sums them), after the "
                 "data-parallel reduction (ZeRO-1/2: on this rank's shard); DualPipe's overlap of computation with "
                 "its all-to-all and point-to-point communication is not modelled: every byte is counted")


def ep_parts(s):
    arch, lay, act = s.model.arch, s.lay, s.bytes.act
    if lay.ep == 1:
        return []
    _frozen_base(s, "ep")
    passes = 6 if s.conv.recompute == "full" else 4  # dispatch, combine; forward (again), backward
    out = []
    for g in arch.groups_with(roles.EXPERTS):
        node = next(n for n in arch.order if arch.graph.nodes[n].get("group") == g.name)
        src = arch.graph.nodes[node]["inputs"][0]
        routed = numel(arch.shape(src)) * arch.activity(node) * act * _share(s, node) / lay.cp
        # the busiest rank sends its own tokens (dispatch) and what its experts made (combine): half the
        # passes at the balanced share, half at its load (MoE load imbalance, derive.moe_load)
        sent = passes if lay.expert_load == 1 else sympy.Rational(passes, 2) * (1 + lay.expert_load)
        out.append((f"ep/{g.name} all-to-all (dispatch and combine, forward and backward)",
                    sent * ring(lay.ep) * lay.microbatches * routed))
    return out


def cp_parts(s):
    arch, lay, act = s.model.arch, s.lay, s.bytes.act
    c = lay.cp
    if c == 1:
        return []
    _frozen_base(s, "cp")
    passes = 4 if s.conv.recompute == "full" else 3  # K,V forward (again); K,V and dK,dV backward
    out = []
    for node in arch.find(roles.KEY_HEADS) + arch.find(roles.VALUE_HEADS):
        local = numel(arch.shape(node)) * arch.activity(node) * act * _share(s, node) / (c * lay.tp)
        out.append((f"cp/{node} ring exchange", passes * (c - 1) * lay.microbatches * local))
    return out


# --- fine-tuning (derive.finetune): what a frozen base changes in the collectives ------------------
def _frozen_base(s, dim: str) -> None:
    """One line where a frozen base's collectives are not modelled: expert and context parallelism
    (which backward exchanges a frozen layer still needs depends on where the adapters sit). ZeRO-3
    of a frozen base is priced (``ZERO3_FROZEN_NOTE``), a quantized one refused (``zero3_quantized``)."""
    if not has_frozen(s.model.arch):
        return
    from ..core.errors import SymgptError

    if dim == "dp":
        zero3_quantized(s)

    if dim in ("ep", "cp"):
        raise SymgptError(f"{'expert' if dim == 'ep' else 'context'} parallelism with a frozen base is not modelled "
                          f"(which backward exchanges a frozen layer still needs depends on where the adapters "
                          f"sit); use --{dim} 1")


PARTS = {"dp": dp_parts, "tp": tp_parts, "pp": pp_parts, "ep": ep_parts, "cp": cp_parts}
WHAT = {"dp": "data-parallel gradient (and ZeRO weight) collectives",
        "tp": "tensor-parallel all-reduces (sequence parallel: all-gather/reduce-scatter pairs)",
        "pp": "pipeline point-to-point activations and gradients",
        "ep": "expert-parallel all-to-alls", "cp": "context-parallel ring exchange of K and V"}


def provider(dim):
    def provide(model, **options) -> Quantity:
        s = setup(model, **options)
        return _q(s, f"comm.{dim}", PARTS[dim](s), WHAT[dim])
    return provide


def total(model, **options) -> Quantity:
    s = setup(model, **options)
    parts = [p for dim in DIMS for p in PARTS[dim](s)]
    return _q(s, "comm.total", parts, "all communication")


#: the collectives the parts above are named by (``collective`` reads a part's name back)
COLLECTIVES = ("all-reduce", "reduce-scatter", "all-gather", "all-gather + reduce-scatter", "all-to-all",
               "point-to-point", "ring exchange")


def collective(path: str) -> str:
    """The collective a part of ``comm.*`` (``dp/gradient all-reduce``, ``pp/blocks activations
    sent forward``, ...) is sent by: one of ``COLLECTIVES``."""
    for words, kind in (("all-gather + reduce-scatter", "all-gather + reduce-scatter"), ("all-to-all", "all-to-all"),
                        ("ring exchange", "ring exchange"), ("reduce-scatter", "reduce-scatter"),
                        ("all-gather", "all-gather"), ("all-reduce", "all-reduce"), (" sent ", "point-to-point")):
        if words in path:
            return kind
    raise ValueError(f"no collective in {path!r}")

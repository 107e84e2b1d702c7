"""Inference cost from the op graph: the FLOPs and bytes of a prefill and of one decode step,
the KV cache, the weights, and the memory a device holds.

A step's ops come from ``derive.step`` (the graph at a query length against a key length); this
module prices each op under a convention (``inference_setup``):

* FLOPs: the op's forward Work, priced by the ``default`` FLOP convention (2 per multiply-add,
  matmuls only; ``causal`` halves the prefill's attention, never a decode step's), times the
  copies that run;
* bytes (``default``): every weight that enters the op is read once per step (of the token table
  only the rows looked up, of a position table the rows used; experts: the copies the step's
  tokens can reach, Min(E, k·B·q)); the op reads its inputs and writes its output (a view moves
  nothing; the KV cache is read whole and written for the new tokens, at the KV dtype);
  ``attention=flash`` keeps the attention core's intermediates out of memory.
* ``scaling-book``: 2 FLOPs per parameter per token; every parameter read; the KV cache.

Quantities: ``inference.prefill.flops|bytes``, ``inference.decode.flops|bytes``,
``inference.kv_cache``, ``inference.state`` (recurrent layers: ``derive.recurrent``),
``inference.weights``, ``inference.memory``; times are in
``inference_time``.
"""

from __future__ import annotations

import sympy

from ..graph import roles
from ..graph.arch import Arch
from ..ops.base import numel
from .quantity import Quantity
from ..core.symbols import B
from .flops import resolve, work_flops
from .inference_setup import Setup, device_memory, setup
from .kvcache import cache_tensors
from .mla_absorbed import absorb
from .recurrent import check_options, element_bytes, is_recurrent, recurrent_ops, state_owners, state_tensors
from .recurrent import STATE_NOTE, state_notes
from .recurrent import notes as recurrent_notes
from .tensor_parallel import replicated
from .shortcuts import expanded
from .step import VIEWS, OpStep, Step, step
from .walk import attention_core

_DTYPE_BYTES = {"int64": 8, "int32": 4}


# --- tensor parallelism ------------------------------------------------------------------------
def split(arch: Arch, node: str) -> bool:
    """Whether tensor parallelism splits *node* across devices (heads of self- and
    cross-attention, FFN columns, vocabulary); an MLA layer's down-projections, latent norms and
    shared rotary key are replicated on every device (``parallel.replicated``)."""
    role = arch.role(node)
    if replicated(arch, node):
        return False
    return roles.part_of(role) in ("attention", "cross_attention", "ffn", "head") or role == roles.TOKEN_EMBEDDING


def _per_device(s: Setup, arch: Arch, node: str, expr):
    return expr / s.chips if s.chips > 1 and split(arch, node) else expr


# --- parameters --------------------------------------------------------------------------------
def quantized(arch: Arch, pnode: str) -> bool:
    """Whether a parameter is stored at the quantized weight dtype: the weights of the dense
    matmuls (Q/K/V, projections, FFN, experts); the token table, LM head, norms, biases and
    position tables keep the activation dtype, as GPTQ, AWQ and bitsandbytes leave them."""
    a = arch.graph.nodes[pnode]
    op = arch.graph.nodes[a["owner"]]["op"]
    return op.kind == "linear" and a["local"] == "weight" and op.tag in ("dense", "router")


def param_bytes(s: Setup, arch: Arch, pnode: str):
    if s.convention == "scaling-book":
        return s.weight
    return s.weight if quantized(arch, pnode) else s.act


def weight_copies(arch: Arch, node: str, tokens) -> sympy.Expr:
    """Copies of *node*'s weights a step reads: every layer; of E experts (k active per token),
    the ones the step's *tokens* can reach, Min(E, k·tokens)."""
    out = sympy.Integer(1)
    for g in arch.group_chain(arch.graph.nodes[node]["group"]):
        out *= g.repeat if g.active == g.repeat else sympy.Min(g.repeat, g.active * tokens)
    return out


# --- one op ------------------------------------------------------------------------------------
def _work(st: Step, o: OpStep):
    """The op's work in a step: a recurrent layer's decode step by its ``decode`` rule (one state
    update), every other op's by its forward rule at the step's shapes."""
    if st.phase == "decode" and is_recurrent(o.op):
        return o.op.decode(o.inputs, o.written)
    return o.op.forward(o.inputs, o.written)


def op_flops(s: Setup, arch: Arch, st: Step, o: OpStep) -> sympy.Expr:
    conv = resolve("default", causal_halving=s.causal and st.phase == "prefill")
    f = sympy.Add(*[work_flops(conv, w) for w in _work(st, o)])
    return _per_device(s, arch, o.node, f * arch.activity(o.node))


def _fused(s: Setup, arch: Arch) -> frozenset:
    return attention_core(arch) if s.attention == "flash" else frozenset()


def op_bytes(s: Setup, arch: Arch, st: Step, o: OpStep) -> sympy.Expr:
    """Bytes one op moves in a step (all its copies; per device)."""
    g = arch.graph
    tokens = B * st.query
    weights = sympy.Integer(0)
    for local, pnode in arch.params_of(o.node).items():
        shape = g.nodes[pnode]["shape"]
        if o.op.kind == "embedding":
            n = numel(o.inputs[0]) * o.op.dim        # the rows looked up
        elif o.op.kind == "position_embedding":
            n = numel(o.output)                       # the rows used
        else:
            n = numel(shape)
        weights += n * param_bytes(s, arch, pnode)
    weights *= weight_copies(arch, o.node, tokens)
    fused = _fused(s, arch)
    moved = sympy.Integer(0)
    view = o.op.kind in VIEWS
    if view and not o.cached:
        return sympy.Integer(0)
    if view:  # a view the cache holds: the new positions are copied into the cache
        moved = numel(o.written) * (s.act + s.kv)
    else:
        for i, src in enumerate(arch.inputs_of(o.node)):
            if o.node in fused and src in fused:
                continue
            a = g.nodes[src]
            if a["kind"] == "input":
                if o.op.kind == "embedding":
                    moved += o.stored[i] * _DTYPE_BYTES.get(a.get("dtype"), 8)
                continue
            moved += o.stored[i] * (s.kv if o.from_cache[i] else s.act)
        if not (o.node in fused and all(v in fused for v in g.successors(o.node))):
            moved += numel(o.written) * (s.kv if o.cached else s.act)
        if is_recurrent(o.op):  # its state: written by a prefill, read and written by a decode step
            ins = tuple(arch.shape(i) for i in arch.inputs_of(o.node))
            held = sympy.Add(*[numel(tuple(shape)) * element_bytes(dt, s.kv) for _, shape, dt in o.op.carried(ins)])
            if o.node in state_owners(arch):
                moved += held * (2 if st.phase == "decode" else 1)
            elif st.phase == "decode":  # a state another op holds (RWKV's shared token shift): read only
                moved += held
    return _per_device(s, arch, o.node, weights + moved * arch.activity(o.node))


def priced_ops(s: Setup, arch: Arch, st: Step):
    """(op, FLOPs, bytes) of each op of a step that computes or moves anything (a roofline's points)."""
    st = absorb(s, arch, st)  # an MLA decode step in the form the options ask (mla_absorbed)
    for o in st.ops:
        f, b = op_flops(s, arch, st, o), op_bytes(s, arch, st, o)
        if f != 0 or b != 0:
            yield o, f, b


# --- quantities --------------------------------------------------------------------------------
def _step(model, phase) -> Step:
    return step(model.arch, phase)


def inference_quantity(s: Setup, name, parts, unit, what) -> Quantity:
    check_options(s)
    kept = tuple((p, expanded(e)) if not e.has(sympy.Min, sympy.Max) else (p, e) for p, e in parts)
    kept = tuple((p, e) for p, e in kept if e != 0)
    return Quantity(name, kept, s.bindings, unit, s.convention, s.notes(what) + recurrent_notes(s.model.arch, name))


def _book_tokens(st: Step):
    return B * st.query


def _book_flops(s: Setup, model, st: Step):
    per = 2 * _book_tokens(st) / s.chips
    return [(p, e * per) for p, e in model.params.breakdown]


def _what(st: Step) -> str:
    n = st.query if st.phase == "prefill" else st.past
    if st.phase == "prefill":
        return f"prefill of B prompts of {n} tokens"
    return f"one decode step: B sequences whose cache holds {n} tokens (the new token attends to {n} + 1)"


def phase_flops(model, phase, **options) -> Quantity:
    s = setup(model, **options)
    st = absorb(s, model.arch, _step(model, phase))
    arch = model.arch
    if s.convention == "scaling-book":
        parts = _book_flops(s, model, st)
    else:
        parts = [(o.node, op_flops(s, arch, st, o)) for o in st.ops]
    return inference_quantity(s, f"inference.{phase}.flops", parts, "FLOPs", _what(st))


def book_weight_bytes(s: Setup, model):
    return [(p, e * s.weight / s.chips) for p, e in model.params.breakdown]


def phase_bytes(model, phase, **options) -> Quantity:
    s = setup(model, **options)
    st = absorb(s, model.arch, _step(model, phase))
    arch = model.arch
    if s.convention == "scaling-book":
        parts = book_weight_bytes(s, model) + [("kv_cache", kv_cache(model, **options).expr)]
    else:
        parts = [(o.node, op_bytes(s, arch, st, o)) for o in st.ops]
    return inference_quantity(s, f"inference.{phase}.bytes", parts, "bytes", _what(st) + ": bytes read and written")


def kv_cache(model, **options) -> Quantity:
    """The cache for B sequences of T tokens (``kvcache.cache_tensors``) at the KV dtype, per device."""
    s = setup(model, **options)
    parts = [(c.node, c.elements * s.kv / (s.chips if c.split else 1)) for c in cache_tensors(model.arch)]
    return inference_quantity(s, "inference.kv_cache", parts, "bytes",
              "KV cache: the tensors the cache holds (by role: keys and values of every layer) for B "
              "sequences of T tokens")


def state(model, **options) -> Quantity:
    """The recurrent layers' state for B sequences at the KV dtype, constant in T
    (``recurrent.state_tensors``); none for a model without recurrent layers."""
    s = setup(model, **options)
    check_options(s)
    parts = [(p, e * element_bytes(dt, s.kv)) for p, e, dt in state_tensors(model.arch)]
    what = ("recurrent state: the conv state (at the KV-cache width) and the SSM / delta-rule state (fp32) of "
            "every recurrent layer for B sequences, constant in T (transformers' LinearAttentionLayer "
            "conv_states and recurrent_states)")
    if parts and state_notes(model.arch)[0] != STATE_NOTE:  # ops that say what they keep (state_note)
        what = "recurrent state: every state tensor of every recurrent layer for B sequences, constant in T"
    if not parts:
        what = "recurrent state: none (no recurrent layer; a Transformer keeps a KV cache)"
        parts = [("state", sympy.Integer(0))]
    return inference_quantity(s, "inference.state", parts, "bytes", what)


def weights(model, **options) -> Quantity:
    """Bytes of the weights on each device (every parameter once, at its dtype)."""
    s = setup(model, **options)
    arch = model.arch
    if s.convention == "scaling-book":
        parts = book_weight_bytes(s, model)
    else:
        parts = []
        for n in arch.order:
            a = arch.graph.nodes[n]
            if a["kind"] != "op":
                continue
            e = sympy.Integer(0)
            for local, pnode in arch.params_of(n).items():
                if arch.graph.nodes[pnode]["owner"] != n:
                    continue  # a tied weight is stored once, by its owner
                e += numel(arch.graph.nodes[pnode]["shape"]) * arch.multiplicity(pnode) * param_bytes(s, arch, pnode)
            parts.append((n, _per_device(s, arch, n, e)))
    return inference_quantity(s, "inference.weights", parts, "bytes", "weights held on each device")


def largest_activation(s: Setup, model, at: dict | None = None) -> sympy.Expr:
    """The largest tensor a prefill of B prompts of T tokens makes (per device); *at* binds sizes
    in each tensor first (the same value as binding them in the Max, without SymPy comparing the
    symbolic sizes pairwise)."""
    arch = model.arch
    sizes = []
    for o in step(arch, "prefill").ops:
        if o.op.kind in VIEWS or o.node in _fused(s, arch):
            continue
        e = sympy.expand(_per_device(s, arch, o.node, numel(o.output) * s.act))
        if at is not None:
            e = e.xreplace(at)
        if e not in sizes:
            sizes.append(e)
    return sympy.Max(*sizes) if sizes else sympy.Integer(0)


def memory(model, **options) -> Quantity:
    """Weights + the KV cache of B sequences of T tokens + the largest transient activation."""
    s = setup(model, **options)
    parts = [("weights", weights(model, **options).expr), ("kv_cache", kv_cache(model, **options).expr)]
    if recurrent_ops(model.arch):  # the recurrent layers' state, beside the attention layers' KV cache
        parts.append(("state", sympy.Add(*[e * element_bytes(dt, s.kv) for _, e, dt in state_tensors(model.arch)])))
    if s.convention == "scaling-book":  # "our activation footprint is negligible"
        what = "inference memory per device: weights + KV cache (B sequences of T tokens)"
    else:
        parts.append(("activation", largest_activation(s, model)))
        what = ("inference memory per device: weights + KV cache (B sequences of T tokens) + the largest "
                "activation of a prefill (transient; freed op by op)")
    if recurrent_ops(model.arch):
        what = what.replace("+ KV cache (B sequences of T tokens)",
                            "+ KV cache (B sequences of T tokens) + recurrent state (B sequences)")
    q = inference_quantity(s, "inference.memory", parts, "bytes", what)
    cap = device_memory(s, options.get("device_memory"))
    if cap is not None:
        v = q.value
        verdict = "" if v is None else (" -- it fits" if v <= cap else " -- it does NOT fit")
        q = Quantity(q.name, q.breakdown, q.bindings, q.unit, q.convention,
                     q.notes + (f"device memory {cap} bytes{verdict}",))
    return q


def prefill_flops(model, **options) -> Quantity:
    return phase_flops(model, "prefill", **options)


def decode_flops(model, **options) -> Quantity:
    return phase_flops(model, "decode", **options)


def prefill_bytes(model, **options) -> Quantity:
    return phase_bytes(model, "prefill", **options)


def decode_bytes(model, **options) -> Quantity:
    return phase_bytes(model, "decode", **options)

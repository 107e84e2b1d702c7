"""Activations in bytes: ``memory.activations`` (every tensor each op saves for backward, sized by
dtype class, counted once when two ops save the same storage, × the copies that run, per device
under tp, sp, pp and cp; block inputs under full recompute), ``memory.logits``, and the textbook
three-term estimate shown beside the exact count.
"""

from __future__ import annotations

import sympy

from ..core.symbols import as_expr
from ..core.conventions import check_choice
from ..ops.base import numel
from .quantity import Quantity
from .memory_kernels import KERNELS, check as kernels_check, saved as kernel_saved
from .memory_setup import PRECISIONS, Setup, memory_quantity, setup
from .tensor_parallel import place, tp_region
from .walk import (attention_core, checkpoints, context, has_frozen, loop_invariant, needs_grad, recomputed,
                   top_group, variants)


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
    if conv.implementation in KERNELS:  # a named kernel library (derive.memory_kernels)
        kernels_check(s.model, conv.implementation)
    entries, seen = [], set()
    for node, a in arch.ops():
        if a["op"].kind == "cross_entropy" and not conv.loss_saved:
            continue
        if a.get("no_grad"):
            continue  # run under torch.no_grad: autograd records nothing
        for steady, share in variants(arch, node):
            _saved_op(s, node, steady, share, (dropout, again, core, region), (entries, seen))
    if conv.recompute == "full":
        for c, name, invariant in checkpoints(arch):
            if has_frozen(arch) and not _stack_trains(arch, name):
                continue  # a frozen stack (a frozen tower): autograd records nothing, no checkpoint is kept
            group = arch.groups[name]
            div = s.tp if s.sp else 1
            label = "shared block input" if invariant else "block input"
            entries.append((f"{group.name}/checkpoint", label, tuple(arch.shape(c)), s.bytes.act,
                            sympy.Integer(1) if invariant else group.active, div, c))
    if s.bytes.gemm_input:  # a low-precision recipe: linear inputs cached in the GEMM's format
        entries = [_gemm_cached(s, e) for e in entries]
    return entries


def _saved_op(s: Setup, node, steady, share, walked, out) -> None:
    """The tensors op *node* saves, appended to the entries of *out* (entries, keys seen):
    *share* of its copies, in the *steady* variant of ``walk.needs_grad``; a fine-tuned graph's op
    through which no gradient flows saves nothing (autograd records no node for it). *walked*:
    (dropout on, recomputed ops, attention core, tensor-parallel region)."""
    arch, conv = s.model.arch, s.conv
    a = arch.graph.nodes[node]
    dropout, again, core, region = walked
    entries, seen = out
    if has_frozen(arch) and not needs_grad(arch, steady)[node]:
        return
    library = conv.implementation in KERNELS  # a kernel library: its Functions' lists, fused elsewhere
    ctx = context(arch, node, conv.attention, dropout or bool(a.get("dropout_active")),
                  "fused" if library else conv.implementation, steady=steady)
    items = kernel_saved(arch, node, a, arch.input_shapes(node), conv.implementation,
                         s.model.flags) if library else None
    for item in a["op"].saved(arch.input_shapes(node), a["shape"], ctx) if items is None else items:
        per = _dtype_bytes(s, item)
        if per is None:
            continue
        if item.role == "gathered_input" and has_frozen(arch) and _experts_frozen(arch):
            continue  # the gathered token is kept by the expert's first linear, for its weight gradient
        shape = tuple(item.shape)
        if item.role == "targets" and _labels_padded(s, arch):
            shape = (*shape[:-1], shape[-1] + 1)  # the padded (1, T + 1) labels the view keeps
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
        copies = arch.activity(node) * share
        if item.shares.startswith("input") and not item.per_copy and loop_invariant(arch, producer, node):
            # one tensor shared by every copy: made once outside the group, or by the last
            # copy of another stack (an encoder's output, read by every decoder layer)
            g, copies = None, sympy.Integer(1)
        key = (tensor, g.name if g else None) + (("first",) if g is not None and share != 1 and not steady else ())
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


def _stack_trains(arch, name: str) -> bool:
    """Whether a gradient flows through any op of the top-level group *name*."""
    grads = needs_grad(arch)
    return any(grads[n] for n, _a in arch.ops() if (g := top_group(arch, n)) is not None and g.name == name)


def _labels_padded(s: Setup, arch) -> bool:
    """Whether a causal LM's cross-entropy keeps its labels padded to T + 1 positions (hf-eager).

    transformers' ``ForCausalLMLoss`` pads the (B, T) labels to (B, T + 1) with the ignored index
    and takes ``labels[..., 1:].contiguous()``: at B = 1 that slice is already contiguous, so it
    stays a view and ``nll_loss`` keeps the whole padded storage (8 bytes more); at B > 1 it is a
    copy of B·T labels. A masked LM or an encoder--decoder (bidirectional attention somewhere in
    the graph) passes its labels unshifted; a vision or audio tower's bidirectional attention beside
    a causal LM (``derive.freeze.in_tower``) does not make it one."""
    from ..core.symbols import B
    from .freeze import in_tower

    if s.conv.implementation != "hf-eager" or s.model.bindings.get(B) != 1:
        return False
    return not any(a["op"].kind == "matmul" and a["op"].tag == "attention_scores" and not a["op"].causal
                   and not in_tower(n) for n, a in arch.ops())


def _experts_frozen(arch) -> bool:
    """Whether every parameter of a mixture's experts is frozen (fine-tuning never adapts them)."""
    from ..graph import roles as R

    experts = [n for n, a in arch.graph.nodes.data() if a["kind"] == "param"
               and any(g.role == R.EXPERTS for g in arch.group_chain(a["group"]))]
    return bool(experts) and all(arch.graph.nodes[n].get("frozen") for n in experts)


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
    from one head (``repeat_kv``, an expand with stride 0) stay the un-repeated tensor at B = 1;
    keys and values repeated once (h_kv = h: ``repeat_kv`` returns its input) are their input,
    a slice of a fused QKV (Falcon-RW's ``fused_qkv[..., 1, :]``) keeping the whole QKV; LLaVA's
    patches without the class token (``x[:, 1:]``) keep their whole sequence only over one image in
    all (``_one_row_view``: otherwise the linear after them copies)."""
    from ..core.symbols import B, as_expr

    a = arch.graph.nodes[tensor]
    if a["kind"] == "op" and _one_row_view(arch, tensor, a, bindings):
        return _eager_base(arch, a["inputs"][0], matmul, bindings)
    if matmul:
        if B not in bindings or bindings[B] != 1:
            return tensor
        if a["kind"] == "op" and a["op"].kind == "repeat_kv":
            if as_expr(arch.shape(a["inputs"][0])[-3]).xreplace(bindings) == 1:
                return a["inputs"][0]
            if as_expr(a["op"].groups).xreplace(bindings) == 1:  # repeated once: the tensor itself
                tensor = a["inputs"][0]
                a = arch.graph.nodes[tensor]
    while a["kind"] == "op" and a["op"].kind in ("slice", "split_heads"):
        tensor = a["inputs"][0]
        a = arch.graph.nodes[tensor]
    return tensor


def _one_row_view(arch, tensor, a, bindings) -> bool:
    """Whether *tensor* is a view of its input under eager PyTorch: a vision tower's features with
    the class token sliced off (``x[:, 1:]``, LLaVA's 'default' strategy) or transposed to sequence
    first (``nn.MultiheadAttention``), over one image in all (B·N_img = 1): the slice is then
    contiguous and the transpose moves a dimension of 1, so the linear after it reshapes without a
    copy and keeps its input's storage (tests/test_activations_vlm.py measures both at B = 1)."""
    from ..core.symbols import as_expr
    from ..graph import roles as R

    if a["op"].kind != "sequence_first" and not (a["op"].kind == "drop_tokens" and
                                                  arch.role(tensor) == R.VISION_SELECT):
        return False
    rows = as_expr(arch.shape(tensor)[0]).xreplace(bindings)
    return rows.is_number and rows == 1


def stage_factor(s: Setup, node: str) -> sympy.Expr:
    """What a saved tensor of *node* weighs on this device: the micro-batches in flight of its
    stage (a stack's tensors: × 1/pp of the layers), over the context-parallel ranks."""
    arch, lay = s.model.arch, s.lay
    where, expert = place(arch, node) if node in arch.graph else ("stack", False)  # a block's checkpoint
    f = lay.in_flight(where) if where == "stack" else lay.share(where) * lay.in_flight(where)
    if expert and lay.expert_load != 1:  # MoE load imbalance: the busiest rank's experts (derive.moe_load)
        f = f * lay.expert_load
    return f / lay.cp


def activations(model, **options) -> Quantity:
    s = setup(model, **options)
    out: dict[str, sympy.Expr] = {}
    for node, _role, shape, per, copies, div, _t in _saved(s):
        f = stage_factor(s, node)
        if f != 0:  # (0: on another stage)
            out[node] = out.get(node, sympy.Integer(0)) + numel(shape) * per * copies / div * f
    if s.lay.offload_activations:  # per-layer offloading: only the layers in flight stay (derive.offload)
        out = activation_split(s)[0]
    what = (f"activations saved for backward ({s.conv.attention} attention, recompute={s.conv.recompute}, "
            f"dropout {'on' if s.model.flags.get('dropout') or s.conv.dropout else 'off'})")
    if s.lay.schedule in ("zb-h1", "zb-h2") and s.lay.pp != 1:
        what += ("; in flight as the run of the schedule holds them, from a forward to its input gradient: "
                 + ("min(pp − r, m) as 1F1B" if s.lay.schedule == "zb-h1" else "min(2(pp − r) − 1, m)")
                 + " on rank r (Qi et al. 2023, Zero Bubble Pipeline Parallelism, Table 1)")
    if s.lay.offload_activations:
        what += (f"; offloaded per layer: min({IN_FLIGHT_LAYERS}, L) layers of the running micro-batch on the device, "
                 "the rest in host memory (memory.host)")
    return memory_quantity(s, "memory.activations", list(out.items()), what)


#: linears a low-precision recipe keeps in BF16 (DeepSeek-V3 Sec. 3.3.1: the output head, MoE gating)
_HIGH_PRECISION = frozenset({"head", "ffn.router", "attention.router"})  # roles.HEAD, ROUTER, MOA_ROUTER


def gemm_input_bytes(p, last) -> sympy.Expr:
    """Bytes per element of a linear's input cached in a low-precision GEMM format whose last
    dimension is *last*: the element, and one scale per started 1 x tile along that dimension."""
    last = as_expr(last)
    return p.gemm_input + sympy.ceiling(last / p.tile) * p.scale / last


def low_precision_linear(arch, node) -> bool:
    """Whether op *node* is a linear a low-precision recipe runs in its format (every linear but the
    output head and the routers); its GEMMs run at the format's peak (``steptime.Priced.rate``)."""
    return node in arch.graph and arch.graph.nodes[node]["op"].kind == "linear" and \
        arch.role(node) not in _HIGH_PRECISION


def _gemm_cached(s: Setup, entry):
    """*entry* of ``_saved`` with a linear's saved input (role ``input``) at the GEMM format's bytes
    (the output head's and the routers' stay as they are)."""
    node, role, shape, per, copies, div, tensor = entry
    if role == "input" and low_precision_linear(s.model.arch, node):
        per = gemm_input_bytes(s.bytes, shape[-1])  # cached for the weight gradient in the GEMM's format
    return (node, role, shape, per, copies, div, tensor)


#: layers of the running micro-batch the device keeps under activation offloading (derive.offload)
IN_FLIGHT_LAYERS = 2


def activation_split(s: Setup):
    """({op: bytes kept on the device}, {op: bytes in host memory}) of the saved activations under
    per-layer offloading (``derive.offload``'s convention: the
    device keeps min(2, L) layers of the running micro-batch; outside the stack nothing moves)."""
    from ..core.errors import SymgptError

    arch = s.model.arch
    stacks = arch.stacks()
    if len(stacks) != 1:
        raise SymgptError(f"activation offloading is priced for a model of one stack of layers; {s.model.name} "
                          f"has {len(stacks)}")
    g = stacks[0]
    keep = sympy.Min(IN_FLIGHT_LAYERS, g.active)
    device: dict[str, sympy.Expr] = {}
    host: dict[str, sympy.Expr] = {}
    for node, _role, shape, per, copies, div, _t in _saved(s):
        f = stage_factor(s, node)
        if f == 0:
            continue
        b = numel(shape) * per * copies / div * f
        inside = (top_group(arch, node) is g) if node in arch.graph else node == f"{g.name}/checkpoint"
        if inside and copies != 1:  # (1: one tensor every layer reads, made once; or a single layer)
            kept = b / g.active * keep
            device[node] = device.get(node, sympy.Integer(0)) + kept
            host[node] = host.get(node, sympy.Integer(0)) + b - kept
        else:  # outside the stack, or one tensor every layer reads (made once): stays
            device[node] = device.get(node, sympy.Integer(0)) + b
    return device, host


def logits(model, **options) -> Quantity:
    s = setup(model, **options)
    arch = s.model.arch
    n = numel(arch.shape(arch.output))
    return memory_quantity(s, "memory.logits", [(arch.output, n * s.bytes.act / s.tp)],
              f"the logits tensor ({n} entries at {s.bytes.act} bytes)")


def three_term_estimate(model, precision="mixed-fp16") -> Quantity:
    """The textbook three-term activation estimate per block, × L, at the policy's activation
    bytes: the block input B·T·d, the attention scores B·h·T², the FFN hidden B·T·d_ff (4BTd).
    Not a derivation from the graph: the textbook estimate, to show beside the exact count."""
    from ..core.symbols import B, L, T, d, d_ff, h

    check_choice("precision", precision, tuple(PRECISIONS))
    act = PRECISIONS[precision].act
    ffn = d_ff if "d_ff" in model.sizes else 4 * d
    parts = (("BTd", B * T * d * L * act), ("BhT^2", B * h * T**2 * L * act), ("4BTd", B * T * ffn * L * act))
    return Quantity("memory.activations", parts, model.bindings, "bytes", "three-term estimate",
                    ("three named terms per block (block input, attention scores, FFN "
                     f"hidden) × L at {act} bytes; not the full list of saved tensors",))

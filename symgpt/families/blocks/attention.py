"""Attention, declared once for every family: scores -> scale -> (soft-cap, ALiBi, position bias,
mask) -> softmax -> values -> merged heads -> output projection, with the projections in front
that a variant chooses. Each op declares its role (``symgpt.graph.roles``); node paths and labels
are the caller's.

A variant is an :class:`AttentionSpec`: its sizes and paths, and its choices grouped as
:class:`Projections` (fused or separate Q/K/V, biases), :class:`Norms` (Q/K norms, value norm,
sub-norm), :class:`Scores` (scale, soft-cap, ALiBi, dynamic mask, sinks), :class:`OutputGate` and
:class:`MLA` (multi-latent attention); each field names the transformers config field or paper it
mirrors. The graph's nodes a layer reads (the rotary table, the encoder's output for
cross-attention, a position bias, an earlier layer's keys and values) are arguments of
:func:`attention`. A caller builds the spec once per kind of layer
(``decoder_layers.decoder_attention_spec`` from the decoder's flags).

Paths: ``names`` maps a step (``q``, ``k``, ``v``, ``o``, ``qkv``, ``q_heads``, ``scores``, ...,
:data:`STEPS`) to its node name; a step it leaves out is ``{module}/{STEPS[step]}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...graph import roles as R

if TYPE_CHECKING:
    from .latent import MLA

#: step -> its node name under ``module`` when the caller does not name it
STEPS = {
    "qkv": "qkv", "q": "q", "k": "k", "v": "v",
    "q_norm": "q_norm", "k_norm": "k_norm", "v_norm": "v_norm",
    "q_heads": "q_heads", "k_heads": "k_heads", "v_heads": "v_heads",
    "q_rotary": "q_rotary", "k_rotary": "k_rotary", "k_repeat": "k_repeat", "v_repeat": "v_repeat",
    "scores": "scores", "scale": "scale", "softcap": "softcap", "alibi": "alibi",
    "position_bias": "position_bias", "mask": "mask", "softmax": "softmax", "dropout": "dropout",
    "values": "values", "merge": "merge", "sub_norm": "attn_sub_norm", "o": "proj", "dropout_out": "dropout_out",
    "sink_scale": "sink_scale", "gate": "gate", "gate_heads": "gate_heads", "gate_bias": "gate_bias",
    "gate_act": "gate_act", "gate_mul": "gate_mul",
    # multi-latent attention (transformers' DeepseekV3Attention module names)
    "q_proj": "q_proj", "q_down": "q_a_proj", "q_latent_norm": "q_a_layernorm", "q_up": "q_b_proj",
    "q_nope": "q_nope", "q_rope": "q_rope", "kv_down": "kv_a_proj_with_mqa", "kv_down_latent": "kv_latent",
    "kv_latent": "kv_a_layernorm", "kv_down_rope": "k_rope", "k_rope_head": "k_rope_head", "k_rope": "k_rotary",
    "kv_up": "kv_b_proj", "kv_up_heads": "kv_heads", "k_nope": "k_nope", "q_parts": "q", "k_parts": "k",
    # dynamic-mask attention (transformers' DogeAttention)
    "dynamic_dt": "dt_proj", "dynamic_mask": "dynamic_mask",
}


@dataclass(frozen=True)
class Roles:
    """The roles of the steps that self- and cross-attention name differently."""

    q: str
    k: str
    v: str
    q_heads: str
    k_heads: str
    v_heads: str
    scores: str
    scale: str
    softmax: str
    values: str
    merge: str
    out: str


SELF = Roles(R.QUERY, R.KEY, R.VALUE, R.QUERY_HEADS, R.KEY_HEADS, R.VALUE_HEADS, R.SCORES, R.SCALE,
             R.SOFTMAX, R.VALUES, R.MERGE, R.OUT)
CROSS = Roles(R.CROSS_QUERY, R.CROSS_KEY, R.CROSS_VALUE, R.CROSS_QUERY_HEADS, R.CROSS_KEY_HEADS,
              R.CROSS_VALUE_HEADS, R.CROSS_SCORES, R.CROSS_SCALE, R.CROSS_SOFTMAX, R.CROSS_VALUES,
              R.CROSS_MERGE, R.CROSS_OUT)


@dataclass(frozen=True)
class Projections:
    """The Q/K/V and output projections."""

    #: one fused Q/K/V matrix sliced into them in GPT-2's order (GPT-2's c_attn, Falcon's
    #: query_key_value); False: separate q_proj, k_proj, v_proj
    fused: bool = False
    #: K and V taken from the fused matrix by one-entry list indexing (Falcon: qkv[..., [-2], :])
    kv_index: bool = False
    #: the Q/K/V projections' bias (attention_bias, qkv_bias)
    bias: bool = False
    #: the output projection's bias where it differs from ``bias`` (None: the same)
    out_bias: bool | None = None
    #: the key projection's bias where it differs from ``bias`` (Whisper's k_proj has none)
    k_bias: bool | None = None
    #: no value projection: the values are the key projection, normed by ``Norms.v`` (Gemma 4's
    #: attention_k_eq_v)
    v_from_k: bool = False
    # --- a per-use low-rank adapter added to each projection (Zamba2's linear_{q,k,v}_adapter_list)
    #: ``adapter(g, x, name, projection)`` -> the projection plus the adapter of the input *x*
    #: (``name`` is ``q``, ``k`` or ``v``); None: none. Separate Q/K/V projections only.
    adapter: Callable | None = None


@dataclass(frozen=True)
class Norms:
    """The norms inside attention, each made by a callable of its width."""

    #: ``"head"``: a norm of each query and key head (Qwen3's, Gemma 3's q_norm/k_norm); ``"full"``:
    #: one over all heads of the projection (OLMo 2); ``"none"``
    qk: str = "none"
    #: the query/key norm of a width
    norm: Callable | None = None
    #: the per-head Q/K norm after the rotary instead of before it (NanoChat)
    after_rotary: bool = False
    #: a norm of each value head (Gemma 4's v_norm)
    v: Callable | None = None
    #: a norm of the merged heads before the output projection (BitNet's attn_sub_norm)
    sub: Callable | None = None


@dataclass(frozen=True)
class Scores:
    """What is done to the scores S = Q Kᵀ around the softmax."""

    #: S divided by √scale: ``"d_head"`` (√dh; MLA: √(nope + rope)), a size (Gemma 2's
    #: query_pre_attn_scalar), or None: not at all (T5)
    scale: object = "d_head"
    #: the scale's label
    label: str = "S / √d_h"
    #: c·tanh(S/c) (Gemma 2's attn_logit_softcapping), or None
    softcap: object = None
    #: ALiBi's per-head linear biases (Press et al. 2022, "Train Short, Test Long"; BLOOM, MPT)
    alibi: bool = False
    #: Doge's dynamic mask: ``dt_proj`` of V's projection (h_kv outputs) turned into
    #: exp(A·softplus(dt)) and added to the scaled scores (:class:`~symgpt.ops.DynamicMask`)
    dynamic_mask: bool = False
    #: attention sinks: a learned logit per head joins each row's softmax and is dropped after it
    #: (gpt-oss's sinks; :class:`~symgpt.ops.SinkSoftmax`, which owns the h logits)
    sinks: bool = False
    #: the sinks as a scale of each head's output rows, σ(logsumexp(S) - s_h) (GraniteSWA;
    #: :class:`~symgpt.ops.SinkScale`, which owns the h logits)
    sink_scale: bool = False


@dataclass(frozen=True)
class OutputGate:
    """An output gate computed from the layer input, act(x·W_g), multiplying the attention output
    before the output projection."""

    #: ``"sigmoid"`` or ``"softplus"``; None: no gate
    kind: str | None = None
    #: one gate per head (a d x h projection broadcast over each head's dv: Laguna's g_proj);
    #: False: one per channel (a d x h·dv projection: AFMoE's gate_proj)
    per_head: bool = False
    #: a learned bias per head added to a per-channel gate, the gate then applied to each head
    #: before the merge (Beam's gate_bias; :class:`~symgpt.ops.HeadBias`)
    bias: bool = False


@dataclass(frozen=True)
class AttentionSpec:
    """One attention variant: its sizes, its paths and its groups of choices."""

    #: the model width d (hidden_size)
    d_model: object
    #: the query heads h (num_attention_heads)
    heads: object
    #: each query/key head's width (head_dim); MLA's are its own sizes
    dh: object = None
    #: the key/value heads (num_key_value_heads: grouped-query or multi-query attention, K and V
    #: repeated to ``heads`` before the scores); None: ``heads``
    kv_heads: object = None
    #: each value head's width where it is not ``dh`` (MiMo-V2-Flash's v_head_dim)
    dv: object = None
    #: the path of the steps ``names`` leaves out: ``{module}/{STEPS[step]}``
    module: str = "attention"
    #: step -> node name (:data:`STEPS`): the source's module names
    names: Mapping[str, str] | None = None
    #: a causal mask (and matmuls a causal kernel could halve); False: bidirectional
    causal: bool = True
    #: sliding-window attention over W keys (sliding_window), or None
    window: object = None
    #: dropout on the probabilities and on the output (attention_dropout)
    dropout: bool = False
    #: RoPE rotates interleaved pairs (RoFormer; :class:`~symgpt.ops.Rotary`)
    rotary_interleave: bool = False
    projections: Projections = Projections()
    norms: Norms = Norms()
    scores: Scores = Scores()
    gate: OutputGate = OutputGate()
    #: multi-latent attention's sizes in place of Q/K/V projections (DeepSeek-V2/V3; ``latent.MLA``)
    mla: MLA | None = None
    #: ``sparse_index(g, x, q_latent)`` (MLA only): builds a selection of keys per query (DeepSeek
    #: Sparse Attention's indexer, ``blocks/dsa.py``) from the input and the query latent and
    #: returns the node of the selected indices (B, T, k); the scores outside them are masked
    #: (eager: the full T×T scores are still computed)
    sparse_index: Callable | None = None
    # --- attention over a wider input (Zamba's shared block reads [hidden; embeddings], 2·d)
    #: the Q/K/V projections' input width where it is not ``d_model`` (None: ``d_model``; the
    #: output projection still maps back to ``d_model``)
    d_in: object = None
    # --- cross-attention over a memory of another width (BLIP-2's Q-Former reads the vision features)
    #: the K/V projections' input width over *memory* where it is not the queries' (None: the same)
    d_memory: object = None


def attention(g, x, spec: AttentionSpec, *, rotary: str | None = None, memory: str | None = None,
              position_bias: str | None = None, shared_kv: tuple[str, str] | None = None) -> str:
    """Multi-head attention of *x* (B, T_q, d) as *spec* says, over itself, or over *memory*
    (B, T_k, d: cross-attention, the ``cross_attention.*`` roles) when given; returns the output
    (B, T_q, d). *rotary*: the rotary table's node (RoPE on Q and K; a partial rotary is in the
    table); *position_bias*: a (1, h, T_q, T_k) tensor added to the scores (T5's relative bias);
    *shared_kv*: the key and value heads (B, kv_heads, T, dh) of an earlier layer, used instead of
    projections of its own (Gemma 4's KV sharing: the layer holds no K/V weights and no cache)."""
    pj, sc, gt = spec.projections, spec.scores, spec.gate
    if sc.dynamic_mask and (pj.fused or spec.mla is not None or memory is not None):
        raise SymgptError("a dynamic mask needs separate Q/K/V projections of self-attention")
    step = _Steps(spec.module, spec.names or {})
    if sc.sinks and sc.sink_scale:
        raise SymgptError("attention sinks in the softmax and as an output scale cannot be combined")
    rr = CROSS if memory is not None else SELF
    d_model, heads, dh, kv_heads = spec.d_model, spec.heads, spec.dh, spec.kv_heads
    out_bias = pj.bias if pj.out_bias is None else pj.out_bias
    causal, window, scale, sparse_index = spec.causal, spec.window, sc.scale, spec.sparse_index
    if spec.mla is not None:
        from .latent import latent_projections
        q, k, v, width, q_latent, gate = latent_projections(g, x, step, spec, rotary)
        scale = spec.mla.nope + spec.mla.rope if scale == "d_head" else scale
        if sparse_index is not None:
            if q_latent is None:
                raise SymgptError("a sparse-attention indexer needs the query latent (q_lora_rank)")
            sparse_index = sparse_index(g, x, q_latent)  # (B, T, k)
    elif sparse_index is not None:
        raise SymgptError("a sparse-attention indexer is modelled with multi-latent attention only")
    else:
        gate = None
        kv_heads = heads if kv_heads is None else kv_heads
        q, k, v, proj = _projections(g, x, spec, step, memory, rotary, shared_kv)
        width = heads * (dh if spec.dv is None else spec.dv)
        scale = dh if scale == "d_head" else scale
    s = g.op(step("scores"), ops.Matmul("attention_scores", transpose_b=True, causal=causal, window=window),
             q, k, role=rr.scores, label="S = Q Kᵀ")                                          # (B, h, T_q, T_k)
    if scale is not None:
        s = g.op(step("scale"), ops.Scale(1 / sympy.sqrt(scale)), s, role=rr.scale, label=sc.label)
    if sc.dynamic_mask:
        dt = g.op(step("dynamic_dt"), ops.Linear(kv_heads * dh, kv_heads, bias=pj.bias), proj["v"],
                  role=R.DYNAMIC_DT, label="dt = dt_proj(V)")                                # (B, T, h_kv)
        s = g.op(step("dynamic_mask"), ops.DynamicMask(kv_heads), s, dt, role=R.DYNAMIC_MASK,
                 label="S + exp(A·softplus(dt))")                                             # (B, h, T_q, T_k)
    if sc.softcap:
        s = g.op(step("softcap"), ops.SoftCap(sympy.Integer(sc.softcap)), s, role=R.SCORE_SOFTCAP,
                 label="c·tanh(S/c)")                                                         # (B, h, T_q, T_k)
    if sc.alibi:
        s = g.op(step("alibi"), ops.AlibiBias(), s, role=R.ALIBI, label="S + ALiBi")
    if position_bias is not None:
        s = g.op(step("position_bias"), ops.Add(), s, position_bias, role=R.POSITION_BIAS, label="S + bias")
    if sparse_index is not None:
        s = g.op(f"{step.module}/sparse_mask", ops.IndexMask(), s, sparse_index, role=R.SPARSE_MASK,
                 label="S + top-k mask")                                                      # (B, h, T_q, T_k)
    if causal:
        s = g.op(step("mask"), ops.CausalMask(), s, role=R.MASK, label="S + mask")
    if sc.sinks:
        p = g.op(step("softmax"), ops.SinkSoftmax(heads), s, role=rr.softmax,
                  label="A = softmax([S, sink])")                                             # (B, h, T_q, T_k)
    else:
        p = g.op(step("softmax"), ops.Softmax(), s, role=rr.softmax, label="A = softmax(S)")  # (B, h, T_q, T_k)
    if spec.dropout:
        p = g.op(step("dropout"), ops.Dropout(), p, role=R.DROPOUT)
    z = g.op(step("values"), ops.Matmul("attention_values", causal=causal, window=window), p, v,
             role=rr.values, label="Z = A V")                                                 # (B, h, T_q, dv)
    if sc.sink_scale:
        z = g.op(step("sink_scale"), ops.SinkScale(heads), s, z, role=R.SINK_SCALE,
                 label="Z · σ(lse(S) - sink)")                                                # (B, h, T_q, dv)
    if gt.bias and (gt.kind is None or gt.per_head):
        raise SymgptError("gate_bias needs an output gate per channel")
    if gt.kind is not None and (gt.per_head or gt.bias):
        z = _gate(g, x, z, step, spec, heads, True,
                  dv=None if gt.per_head else width / heads)                                 # (B, h, T_q, dv)
    z = g.op(step("merge"), ops.MergeHeads(), z, role=rr.merge, label="Z merged")            # (B, T_q, h·dv)
    if spec.norms.sub is not None:
        z = g.op(step("sub_norm"), spec.norms.sub(width), z, role=R.ATTENTION_SUB_NORM,
                 label="norm(Z)")                                                             # (B, T_q, h·dv)
    if gate is not None:  # A.X-K2's output gate
        gate = g.op(f"{step.module}/gate_merge", ops.MergeHeads(), gate, role=R.OUTPUT_GATE_MERGE,
                    label="G merged")                                                          # (B, T_q, h·dv)
        gate = g.op(f"{step.module}/gate_act", ops.Sigmoid(), gate, role=R.OUTPUT_GATE_ACT, label="σ(G)")
        z = g.op(f"{step.module}/gate_mul", ops.Mul(), z, gate, role=R.OUTPUT_GATE_MUL, label="Z ⊙ σ(G)")
    if gt.kind is not None and not (gt.per_head or gt.bias):
        z = _gate(g, x, z, step, spec, width, False)                                         # (B, T_q, h·dv)
    o = g.op(step("o"), ops.Linear(width, d_model, bias=out_bias), z, role=rr.out, label="attn_out")  # (B, T_q, d)
    if spec.dropout:
        o = g.op(step("dropout_out"), ops.Dropout(), o, role=R.DROPOUT)
    return o


def _gate(g, x, z, step, spec: AttentionSpec, width, per_head, dv=None):
    """The output gate of ``spec.gate`` on the layer input *x*: act(x·W_g) ⊙ Z, W_g of d x *width*
    (per channel of the merged Z) or of d x h (per head: Z (B, h, T, dv) times a (B, h, T, 1) gate);
    with *dv* (*width* is then h), per channel of Z's heads (B, h, T, dv), plus a bias per head
    when the gate has one."""
    kind, bias, d_model = spec.gate.kind, spec.gate.bias, spec.d_model
    if kind not in ("sigmoid", "softplus"):
        raise SymgptError(f"unknown attention output gate {kind!r} (sigmoid or softplus)")
    n = sympy.Integer(1) if dv is None else dv
    gt = g.op(step("gate"), ops.Linear(d_model, width * n if per_head else width, bias=False), x,
              role=R.ATTENTION_GATE, label="gate")                                          # (B, T, width)
    if per_head:
        gt = g.op(step("gate_heads"), ops.SplitHeads(width, n), gt, role=R.ATTENTION_GATE_HEADS,
                  label="gate heads")                                                       # (B, h, T, n)
    if bias:
        gt = g.op(step("gate_bias"), ops.HeadBias(width), gt, role=R.ATTENTION_GATE_BIAS,
                  label="gate + bias")                                                      # (B, h, T, n)
    act = ops.Sigmoid() if kind == "sigmoid" else ops.Softplus()
    gt = g.op(step("gate_act"), act, gt, role=R.ATTENTION_GATE_ACT, label=f"{act.title}(gate)")
    return g.op(step("gate_mul"), ops.Mul(), z, gt, role=R.ATTENTION_GATE_MUL, label="Z ⊙ gate")


class _Steps:
    """A step's node name: the caller's, or ``{module}/{STEPS[step]}``."""

    def __init__(self, module, names):
        self.module, self.names = module, names

    def __call__(self, key):
        return self.names.get(key) or f"{self.module}/{STEPS[key]}"


def _projections(g, x, spec: AttentionSpec, step, memory, rotary, shared_kv):
    """Q, K, V heads (B, heads, T, dh), normed, rotated and repeated as the variant says (V's heads
    of ``dv`` when given), and the projections' nodes by step (``q``, ``k``, ``v``; none for Gemma 4's)."""
    pj, nm, dv = spec.projections, spec.norms, spec.dv
    if shared_kv is not None or pj.v_from_k or nm.v is not None:
        if dv is not None:
            raise SymgptError("Gemma 4's shared or key-derived values take no value width of their own")
        q, k, v = _gemma4_projections(g, x, step, spec, rotary, shared_kv)
        return q, k, v, {}
    d_model, heads, dh = spec.d_model, spec.heads, spec.dh
    d_in = d_model if spec.d_in is None else spec.d_in
    if d_in is not d_model and (pj.fused or memory is not None):
        raise SymgptError("an input width other than d_model is modelled for separate Q/K/V self-attention only")
    if pj.adapter is not None and (pj.fused or memory is not None):
        raise SymgptError("projection adapters are modelled for separate Q/K/V self-attention only")
    kv_heads = heads if spec.kv_heads is None else spec.kv_heads
    fused, kv_index, bias, k_bias = pj.fused, pj.kv_index, pj.bias, pj.k_bias
    qk_norm, norm, norm_after_rotary = nm.qk, nm.norm, nm.after_rotary
    rr = CROSS if memory is not None else SELF
    kv_in = memory if memory is not None else x
    dv = dh if dv is None else dv
    widths = {"q": heads * dh, "k": kv_heads * dh, "v": kv_heads * dv}
    head_dims = {"q": dh, "k": dh, "v": dv}
    count = {"q": heads, "k": kv_heads, "v": kv_heads}
    proj_roles = {"q": rr.q, "k": rr.k, "v": rr.v}
    head_roles = {"q": rr.q_heads, "k": rr.k_heads, "v": rr.v_heads}
    proj, hd = {}, {}
    if fused:  # each slice split into heads as it is taken (GPT-2's order)
        if memory is not None:
            raise SymgptError("a fused Q/K/V projection cannot attend over another sequence")
        if k_bias is not None and k_bias != bias:
            raise SymgptError("a fused Q/K/V projection has one bias for Q, K and V")
        qkv = g.op(step("qkv"), ops.Linear(d_model, (heads + 2 * kv_heads) * dh, bias=bias), x,
                   role=R.QKV, label="QKV")                                                   # (B, T, (h+2h_kv)dh)
        start = sympy.Integer(0)
        for n in "qkv":
            index = 1 if kv_index and n != "q" else 0  # Falcon: qkv[..., [-2], :], one entry
            proj[n] = g.op(step(n), ops.Slice(start, widths[n], index=index), qkv, role=proj_roles[n],
                           label=n.upper())
            hd[n] = g.op(step(f"{n}_heads"), ops.SplitHeads(count[n], head_dims[n]), proj[n], role=head_roles[n],
                         label=f"{n.upper()} heads")                                          # (B, heads, T, dh)
            start += widths[n]
    else:
        for n in "qkv":
            b = k_bias if n == "k" and k_bias is not None else bias
            w_in = spec.d_memory if n != "q" and memory is not None and spec.d_memory is not None else d_in
            proj[n] = g.op(step(n), ops.Linear(w_in, widths[n], bias=b), x if n == "q" else kv_in,
                           role=proj_roles[n], label=n.upper())                               # (B, T, heads·dh)
            if pj.adapter is not None:
                proj[n] = pj.adapter(g, x if n == "q" else kv_in, n, proj[n])                 # (B, T, heads·dh)
    norm_roles = {"q": R.QUERY_NORM, "k": R.KEY_NORM}
    if qk_norm == "full":  # OLMo 2: one norm over all heads of the projection
        if fused:
            raise SymgptError("qk_norm=full with a fused QKV projection is not modelled")
        for n in "qk":
            proj[n] = g.op(step(f"{n}_norm"), norm(widths[n]), proj[n], role=norm_roles[n],
                           label=f"norm({n.upper()})")                                        # (B, T, heads·dh)
    if not fused:
        hd = {n: g.op(step(f"{n}_heads"), ops.SplitHeads(count[n], head_dims[n]), proj[n], role=head_roles[n],
                      label=f"{n.upper()} heads") for n in "qkv"}                             # (B, heads, T, dh)
    if norm_after_rotary and qk_norm != "head":
        raise SymgptError("norm_after_rotary needs qk_norm=head")

    def head_norms():  # Qwen3, Gemma 3: a norm of d_head on each head
        for n in "qk":
            hd[n] = g.op(step(f"{n}_norm"), norm(dh), hd[n], role=norm_roles[n],
                         label=f"norm({n.upper()} heads)")                                    # (B, heads, T, dh)

    if qk_norm == "head" and not norm_after_rotary:
        head_norms()
    if rotary is not None:
        rot_roles = {"q": R.QUERY_ROTARY, "k": R.KEY_ROTARY}
        for n in "qk":
            hd[n] = g.op(step(f"{n}_rotary"), ops.Rotary(interleaved=spec.rotary_interleave), hd[n], rotary,
                         role=rot_roles[n],
                         label=f"RoPE({n.upper()})")                                          # (B, heads, T, dh)
    if qk_norm == "head" and norm_after_rotary:  # NanoChat: RoPE, then the norm
        head_norms()
    if kv_heads != heads:
        rep_roles = {"k": R.KEY_REPEAT, "v": R.VALUE_REPEAT}
        for n in "kv":
            hd[n] = g.op(step(f"{n}_repeat"), ops.RepeatKV(heads / kv_heads), hd[n], role=rep_roles[n],
                         label=f"{n.upper()} repeated")                                       # (B, h, T, dh)
    return hd["q"], hd["k"], hd["v"], proj


def _gemma4_projections(g, x, step, spec: AttentionSpec, rotary, shared_kv):
    """Gemma 4's queries, keys and values (transformers' Gemma4TextAttention): each query and key
    head normed then rotated, each value head normed by *v_norm*; values taken from the key
    projection (``v_from_k``), or keys and values of an earlier layer (*shared_kv*)."""
    d_model, heads, dh, bias = spec.d_model, spec.heads, spec.dh, spec.projections.bias
    kv_heads = heads if spec.kv_heads is None else spec.kv_heads
    qk_norm, norm, v_norm, v_from_k = spec.norms.qk, spec.norms.norm, spec.norms.v, spec.projections.v_from_k
    if qk_norm != "head" or rotary is None or v_norm is None:
        raise SymgptError("v_norm, v_from_k and shared_kv are Gemma 4's attention: qk_norm=head, rotary and v_norm")
    q = g.op(step("q"), ops.Linear(d_model, heads * dh, bias=bias), x, role=R.QUERY, label="Q")  # (B, T, h·dh)
    q = g.op(step("q_heads"), ops.SplitHeads(heads, dh), q, role=R.QUERY_HEADS, label="Q heads")  # (B, h, T, dh)
    q = g.op(step("q_norm"), norm(dh), q, role=R.QUERY_NORM, label="norm(Q heads)")
    q = g.op(step("q_rotary"), ops.Rotary(), q, rotary, role=R.QUERY_ROTARY, label="RoPE(Q)")
    if shared_kv is not None:
        k, v = shared_kv
    else:
        kp = g.op(step("k"), ops.Linear(d_model, kv_heads * dh, bias=bias), x, role=R.KEY, label="K")
        vp = kp if v_from_k else g.op(step("v"), ops.Linear(d_model, kv_heads * dh, bias=bias), x, role=R.VALUE,
                                       label="V")                                     # (B, T, h_kv·dh)
        k = g.op(step("k_heads"), ops.SplitHeads(kv_heads, dh), kp, role=R.KEY_HEADS, label="K heads")
        v = g.op(step("v_heads"), ops.SplitHeads(kv_heads, dh), vp, role=R.VALUE_HEADS,
                 label="V heads (the keys' projection)" if v_from_k else "V heads")    # (B, h_kv, T, dh)
        k = g.op(step("k_norm"), norm(dh), k, role=R.KEY_NORM, label="norm(K heads)")
        k = g.op(step("k_rotary"), ops.Rotary(), k, rotary, role=R.KEY_ROTARY, label="RoPE(K)")
        v = g.op(step("v_norm"), v_norm(dh), v, role=R.VALUE_NORM, label="norm(V heads)")
    if kv_heads != heads:
        k = g.op(step("k_repeat"), ops.RepeatKV(heads / kv_heads), k, role=R.KEY_REPEAT, label="K repeated")
        v = g.op(step("v_repeat"), ops.RepeatKV(heads / kv_heads), v, role=R.VALUE_REPEAT, label="V repeated")
    return q, k, v

"""Attention, declared once for every family: scores -> scale -> (soft-cap, ALiBi, position bias,
mask) -> softmax -> values -> merged heads -> output projection, with the projections in front
that a variant chooses. Each op declares its role (``symgpt.graph.roles``); node paths and labels
are the caller's.

The variants are parameters of :func:`attention`:

* heads: ``heads`` query heads of ``dh``, ``kv_heads`` key/value heads (grouped-query or
  multi-query attention: K and V repeated to ``heads`` before the scores);
* projections: separate Q/K/V (``fused=False``) or one fused Q/K/V matrix sliced into them
  (GPT-2's order; ``kv_index``: Falcon takes K and V by one-entry list indexing), with or without
  biases (``bias``, ``out_bias``); or multi-latent attention (``mla``: DeepSeek-V2/V3's low-rank
  query and key/value projections and the rotary key shared by every head);
* ``qk_norm``: a norm of the queries and keys, per head (``"head"``: Qwen3, Gemma 3) or over all
  heads of the projection (``"full"``: OLMo 2), made by ``norm(width)``; per head, after the
  rotary instead of before it with ``norm_after_rotary`` (NanoChat);
* ``rotary``: the rotary table's node (RoPE on Q and K; a partial rotary is in the table);
* ``causal`` (a causal mask, and matmuls a causal kernel could halve) or bidirectional;
  ``window`` (sliding-window attention over W keys);
* ``scale``: the scores are divided by √scale (d_head, Gemma 2's query scalar, MLA's
  nope + rope), or not at all (None: T5); ``softcap`` (Gemma 2), ``alibi``, ``position_bias``
  (a (1, h, T_q, T_k) tensor added to the scores: T5's relative bias);
* ``sinks``: a learned logit per head joins each row's softmax and is dropped after it (attention
  sinks: gpt-oss; ``ops.SinkSoftmax``, which owns the ``h`` logits);
* ``sink_scale``: the sinks as a scale of each head's output rows, σ(logsumexp(S) - s_h)
  (GraniteSWA; ``ops.SinkScale``, which owns the ``h`` logits);
* ``out_gate``: an output gate computed from the layer input, ``"sigmoid"`` or ``"softplus"``,
  multiplying the attention output before the output projection: one gate per channel (a
  d x h·dv projection: AFMoE's gate_proj) or, with ``gate_per_head``, one per head (a d x h
  projection, broadcast over each head's dv: Laguna's g_proj); ``gate_bias``: a learned bias per
  head added to a per-channel gate (Beam's gate_bias; ``ops.HeadBias``), the gate then applied
  to each head before the merge;
* ``memory``: cross-attention (queries from *x*, keys and values from the encoder's output;
  the ``cross_attention.*`` roles); ``dropout`` on the probabilities and on the output.

Paths: ``names`` maps a step (``q``, ``k``, ``v``, ``o``, ``qkv``, ``q_heads``, ``scores``, ...,
:data:`STEPS`) to its node name; a step it leaves out is ``{module}/{STEPS[step]}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...graph import roles as R

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
class MLA:
    """Multi-latent attention's sizes (DeepSeek-AI 2024, "DeepSeek-V2", Sec. 2.1): ``q_rank``
    (q_lora_rank; None: one q_proj), ``kv_rank`` (kv_lora_rank), ``nope`` and ``rope`` (each
    query/key head's dimensions without and with positions), ``v`` (each value head's);
    ``complex_rope``: RoPE as a complex product (DeepSeek-V2 in transformers)."""

    q_rank: sympy.Expr | None
    kv_rank: sympy.Expr
    nope: sympy.Expr
    rope: sympy.Expr
    v: sympy.Expr
    complex_rope: bool = False
    #: A.X-K2: one q_gate_proj of [norm(C_Q), C_Q] gives each head's query and an output gate (v),
    #: sigmoid(gate) multiplying the heads' output before o_proj
    q_gate: bool = False


def attention(g, x, *, d_model, heads, dh=None, kv_heads=None, module: str = "attention",
              names: dict | None = None, fused: bool = False, kv_index: bool = False, bias: bool = False,
              out_bias: bool | None = None, qk_norm: str = "none", norm: Callable | None = None,
              rotary: str | None = None, causal: bool = True, window=None, scale="d_head",
              scale_label: str = "S / √d_h", softcap=None, alibi: bool = False,
              position_bias: str | None = None, dropout: bool = False, memory: str | None = None,
              mla: MLA | None = None, sinks: bool = False, norm_after_rotary: bool = False,
              rotary_interleave: bool = False, sub_norm: Callable | None = None,
              sparse_index: Callable | None = None, dynamic_mask: bool = False,
              out_gate: str | None = None, gate_per_head: bool = False, sink_scale: bool = False,
              dv=None, gate_bias: bool = False, k_bias: bool | None = None, v_norm: Callable | None = None,
              v_from_k: bool = False, shared_kv: tuple[str, str] | None = None) -> str:
    """Multi-head attention of *x* (B, T_q, d) over itself, or over *memory* (B, T_k, d) when
    given; returns the output (B, T_q, d). ``dv``: each value head's width when it is not ``dh``
    (MiMo-V2-Flash). ``scale="d_head"`` divides the scores by √dh;
    ``rotary_interleave``: RoPE rotates interleaved pairs (:class:`~symgpt.ops.Rotary`);
    ``sub_norm(width)``: a norm of the merged heads before the output projection (BitNet's
    ``attn_sub_norm``). ``sparse_index(g, x, q_latent)`` (MLA only): builds a selection of keys
    per query (DeepSeek Sparse Attention's indexer, ``blocks/dsa.py``) from the input and the
    query latent, and returns the node of the selected indices (B, T, k); the scores outside them
    are masked (eager: the full T×T scores are still computed). ``dynamic_mask``: Doge's dynamic
    mask, ``dt_proj`` of V's projection (h_kv outputs) turned into exp(A·softplus(dt)) and added
    to the scaled scores (:class:`~symgpt.ops.DynamicMask`). ``k_bias``: the key projection's bias
    where it differs from *bias* (Whisper's k_proj has none); ``v_norm(dh)``: a norm of each value
    head (Gemma 4); ``v_from_k``: the values are the key projection, normed by ``v_norm`` (no value
    projection: Gemma 4's attention_k_eq_v); ``shared_kv``: the key and value heads (B, kv_heads,
    T, dh) of an earlier layer, used instead of projections of its own (Gemma 4's KV sharing: the
    layer holds no K/V weights and no cache)."""
    if dynamic_mask and (fused or mla is not None or memory is not None):
        raise SymgptError("a dynamic mask needs separate Q/K/V projections of self-attention")
    step = _Steps(module, names or {})
    if sinks and sink_scale:
        raise SymgptError("attention sinks in the softmax and as an output scale cannot be combined")
    rr = CROSS if memory is not None else SELF
    out_bias = bias if out_bias is None else out_bias
    proj = {}
    if mla is not None:
        q, k, v, width, q_latent, gate = _latent(g, x, step, d_model, heads, mla, bias, rotary)
        scale = mla.nope + mla.rope if scale == "d_head" else scale
        if sparse_index is not None:
            if q_latent is None:
                raise SymgptError("a sparse-attention indexer needs the query latent (q_lora_rank)")
            sparse_index = sparse_index(g, x, q_latent)  # (B, T, k)
    elif sparse_index is not None:
        raise SymgptError("a sparse-attention indexer is modelled with multi-latent attention only")
    else:
        gate = None
        kv_heads = heads if kv_heads is None else kv_heads
        q, k, v = _projections(g, x, memory, step, rr, d_model, heads, kv_heads, dh, fused, kv_index, bias,
                               qk_norm, norm, rotary, norm_after_rotary, rotary_interleave, dv, kept=proj,
                               k_bias=k_bias, v_norm=v_norm, v_from_k=v_from_k, shared_kv=shared_kv)
        width = heads * (dh if dv is None else dv)
        scale = dh if scale == "d_head" else scale
    s = g.op(step("scores"), ops.Matmul("attention_scores", transpose_b=True, causal=causal, window=window),
             q, k, role=rr.scores, label="S = Q Kᵀ")                                          # (B, h, T_q, T_k)
    if scale is not None:
        s = g.op(step("scale"), ops.Scale(1 / sympy.sqrt(scale)), s, role=rr.scale, label=scale_label)
    if dynamic_mask:
        dt = g.op(step("dynamic_dt"), ops.Linear(kv_heads * dh, kv_heads, bias=bias), proj["v"], role=R.DYNAMIC_DT,
                  label="dt = dt_proj(V)")                                                    # (B, T, h_kv)
        s = g.op(step("dynamic_mask"), ops.DynamicMask(kv_heads), s, dt, role=R.DYNAMIC_MASK,
                 label="S + exp(A·softplus(dt))")                                             # (B, h, T_q, T_k)
    if softcap:
        s = g.op(step("softcap"), ops.SoftCap(sympy.Integer(softcap)), s, role=R.SCORE_SOFTCAP,
                 label="c·tanh(S/c)")                                                         # (B, h, T_q, T_k)
    if alibi:
        s = g.op(step("alibi"), ops.AlibiBias(), s, role=R.ALIBI, label="S + ALiBi")
    if position_bias is not None:
        s = g.op(step("position_bias"), ops.Add(), s, position_bias, role=R.POSITION_BIAS, label="S + bias")
    if sparse_index is not None:
        s = g.op(f"{step.module}/sparse_mask", ops.IndexMask(), s, sparse_index, role=R.SPARSE_MASK,
                 label="S + top-k mask")                                                      # (B, h, T_q, T_k)
    if causal:
        s = g.op(step("mask"), ops.CausalMask(), s, role=R.MASK, label="S + mask")
    if sinks:
        p = g.op(step("softmax"), ops.SinkSoftmax(heads), s, role=rr.softmax,
                 label="A = softmax([S, sink])")                                              # (B, h, T_q, T_k)
    else:
        p = g.op(step("softmax"), ops.Softmax(), s, role=rr.softmax, label="A = softmax(S)")   # (B, h, T_q, T_k)
    if dropout:
        p = g.op(step("dropout"), ops.Dropout(), p, role=R.DROPOUT)
    z = g.op(step("values"), ops.Matmul("attention_values", causal=causal, window=window), p, v,
             role=rr.values, label="Z = A V")                                                 # (B, h, T_q, dv)
    if sink_scale:
        z = g.op(step("sink_scale"), ops.SinkScale(heads), s, z, role=R.SINK_SCALE,
                 label="Z · σ(lse(S) - sink)")                                                # (B, h, T_q, dv)
    if gate_bias and (out_gate is None or gate_per_head):
        raise SymgptError("gate_bias needs an output gate per channel")
    if out_gate is not None and (gate_per_head or gate_bias):
        z = _gate(g, x, z, step, out_gate, d_model, heads, per_head=True,
                  dv=None if gate_per_head else width / heads, bias=gate_bias)             # (B, h, T_q, dv)
    z = g.op(step("merge"), ops.MergeHeads(), z, role=rr.merge, label="Z merged")            # (B, T_q, h·dv)
    if sub_norm is not None:
        z = g.op(step("sub_norm"), sub_norm(width), z, role=R.ATTENTION_SUB_NORM, label="norm(Z)")  # (B, T_q, h·dv)
    if gate is not None:  # A.X-K2's output gate
        gate = g.op(f"{step.module}/gate_merge", ops.MergeHeads(), gate, role=R.OUTPUT_GATE_MERGE,
                    label="G merged")                                                          # (B, T_q, h·dv)
        gate = g.op(f"{step.module}/gate_act", ops.Sigmoid(), gate, role=R.OUTPUT_GATE_ACT, label="σ(G)")
        z = g.op(f"{step.module}/gate_mul", ops.Mul(), z, gate, role=R.OUTPUT_GATE_MUL, label="Z ⊙ σ(G)")
    if out_gate is not None and not (gate_per_head or gate_bias):
        z = _gate(g, x, z, step, out_gate, d_model, width, per_head=False)                 # (B, T_q, h·dv)
    o = g.op(step("o"), ops.Linear(width, d_model, bias=out_bias), z, role=rr.out, label="attn_out")  # (B, T_q, d)
    if dropout:
        o = g.op(step("dropout_out"), ops.Dropout(), o, role=R.DROPOUT)
    return o


def _gate(g, x, z, step, kind, d_model, width, per_head, dv=None, bias=False):
    """An output gate of the layer input *x*: act(x·W_g) ⊙ Z, W_g of d x *width* (per channel of
    the merged Z) or of d x h (per head: Z (B, h, T, dv) times a (B, h, T, 1) gate); with *dv*
    (*width* is then h), per channel of Z's heads (B, h, T, dv), plus a bias per head when *bias*."""
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


def _projections(g, x, memory, step, rr, d_model, heads, kv_heads, dh, fused, kv_index, bias, qk_norm, norm,
                 rotary, norm_after_rotary=False, rotary_interleave=False, dv=None, kept=None, k_bias=None,
                 v_norm=None, v_from_k=False, shared_kv=None):
    """Q, K, V heads (B, heads, T, dh), normed, rotated and repeated as the variant says (V's heads
    of ``dv`` when given); *kept* (a dict), when given, receives the projections' nodes by step
    (``q``, ``k``, ``v``)."""
    if shared_kv is not None or v_from_k or v_norm is not None:
        if dv is not None:
            raise SymgptError("Gemma 4's shared or key-derived values take no value width of their own")
        return _gemma4_projections(g, x, step, d_model, heads, kv_heads, dh, bias, qk_norm, norm, rotary, v_norm,
                                   v_from_k, shared_kv)
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
            proj[n] = g.op(step(n), ops.Linear(d_model, widths[n], bias=b), x if n == "q" else kv_in,
                           role=proj_roles[n], label=n.upper())                               # (B, T, heads·dh)
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
            hd[n] = g.op(step(f"{n}_rotary"), ops.Rotary(interleaved=rotary_interleave), hd[n], rotary,
                         role=rot_roles[n],
                         label=f"RoPE({n.upper()})")                                          # (B, heads, T, dh)
    if qk_norm == "head" and norm_after_rotary:  # NanoChat: RoPE, then the norm
        head_norms()
    if kv_heads != heads:
        rep_roles = {"k": R.KEY_REPEAT, "v": R.VALUE_REPEAT}
        for n in "kv":
            hd[n] = g.op(step(f"{n}_repeat"), ops.RepeatKV(heads / kv_heads), hd[n], role=rep_roles[n],
                         label=f"{n.upper()} repeated")                                       # (B, h, T, dh)
    if kept is not None:
        kept.update(proj)
    return hd["q"], hd["k"], hd["v"]


def _gemma4_projections(g, x, step, d_model, heads, kv_heads, dh, bias, qk_norm, norm, rotary, v_norm, v_from_k,
                        shared_kv):
    """Gemma 4's queries, keys and values (transformers' Gemma4TextAttention): each query and key
    head normed then rotated, each value head normed by *v_norm*; values taken from the key
    projection (*v_from_k*), or keys and values of an earlier layer (*shared_kv*)."""
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


def _latent(g, a, step, d_model, heads, m: MLA, bias, table):
    """Multi-latent attention's queries, keys and values (transformers' DeepseekV3Attention):
    queries through q_a_proj, its RMSNorm and q_b_proj (or one q_proj), each head split into a
    part without positions and a rotary part; keys and values from kv_a_proj_with_mqa's latent
    (RMSNorm-ed: what a cache holds) expanded by kv_b_proj, each key completed by the one rotary
    key every head shares (also cached). Returns Q, K, V heads and the merged width h·v."""
    nope, rope, vd, c = m.nope, m.rope, m.v, m.kv_rank
    qk = nope + rope
    q_latent = gate = None
    if m.q_gate and not m.q_rank:
        raise SymgptError("a query/output gate projection needs the query latent (q_lora_rank)")
    if m.q_rank:
        r = m.q_rank
        q = g.op(step("q_down"), ops.Linear(d_model, r, bias=bias), a, label="C_Q",
                 role=R.QUERY_DOWN)                                                   # (B, T, r_q)
        c_q = q
        q = g.op(step("q_latent_norm"), ops.RMSNorm(r), q, label="norm(C_Q)",
                 role=R.QUERY_LATENT_NORM)                                            # (B, T, r_q)
        q_latent = q
    if m.q_gate:  # A.X-K2: q_gate_proj([norm(C_Q), C_Q]) -> each head's query and output gate
        q = g.op(f"{step.module}/q_gate_input", ops.Concat(), q_latent, c_q, label="[norm(C_Q), C_Q]",
                 role=R.QUERY_GATE_INPUT)                                             # (B, T, 2·r_q)
        q = g.op(f"{step.module}/q_gate_proj", ops.Linear(2 * m.q_rank, heads * (qk + vd), bias=False), q,
                 label="Q, G", role=R.QUERY_GATE)                                     # (B, T, h·(qk+v))
        q = g.op(f"{step.module}/q_gate_heads", ops.SplitHeads(heads, qk + vd), q, label="Q, G heads",
                 role=R.QUERY_GATE_HEADS)                                             # (B, h, T, qk+v)
        gate = g.op(f"{step.module}/gate", ops.Slice(qk, vd), q, label="G",
                    role=R.OUTPUT_GATE)                                               # (B, h, T, v)
        q = g.op(step("q_heads"), ops.Slice(sympy.Integer(0), qk), q, label="Q heads",
                 role=R.QUERY_HEADS)                                                  # (B, h, T, nope+rope)
    else:
        if m.q_rank:
            q = g.op(step("q_up"), ops.Linear(r, heads * qk, bias=False), q, label="Q",
                     role=R.QUERY_UP)                                                 # (B, T, h·(nope+rope))
        else:
            q = g.op(step("q_proj"), ops.Linear(d_model, heads * qk, bias=False), a, label="Q",
                     role=R.QUERY)                                                    # (B, T, h·(nope+rope))
        q = g.op(step("q_heads"), ops.SplitHeads(heads, qk), q, label="Q heads",
                 role=R.QUERY_HEADS)                                                  # (B, h, T, nope+rope)
    q_pass = g.op(step("q_nope"), ops.Slice(sympy.Integer(0), nope), q, label="Q_C",
                  role=R.QUERY_NOPE)                                                  # (B, h, T, nope)
    q_rot = g.op(step("q_rope"), ops.Slice(nope, rope), q, label="Q_R", role=R.QUERY_ROPE)
    rotary = ops.Rotary(complex=bool(m.complex_rope))
    q_rot = g.op(step("q_rotary"), rotary, q_rot, table, label="RoPE(Q_R)",
                 role=R.QUERY_ROTARY)                                                 # (B, h, T, rope)
    kv = g.op(step("kv_down"), ops.Linear(d_model, c + rope, bias=bias), a,
              label="C_KV, K_R", role=R.KV_DOWN)                                      # (B, T, c+rope)
    lat = g.op(step("kv_down_latent"), ops.Slice(sympy.Integer(0), c), kv, label="C_KV",
               role=R.KV_DOWN_LATENT)                                                 # (B, T, c)
    lat = g.op(step("kv_latent"), ops.RMSNorm(c), lat, label="norm(C_KV)",
               role=R.KV_LATENT)                                                      # (B, T, c): cached
    k_rot = g.op(step("kv_down_rope"), ops.Slice(c, rope), kv, label="K_R", role=R.KV_DOWN_ROPE)
    k_rot = g.op(step("k_rope_head"), ops.SplitHeads(sympy.Integer(1), rope), k_rot,
                 label="K_R head", role=R.KEY_ROPE_HEAD)                              # (B, 1, T, rope)
    k_rot = g.op(step("k_rope"), rotary, k_rot, table, label="RoPE(K_R)",
                 role=R.KEY_ROPE)                                                     # (B, 1, T, rope): cached
    up = g.op(step("kv_up"), ops.Linear(c, heads * (nope + vd), bias=False), lat,
              label="K_C, V", role=R.KV_UP)                                           # (B, T, h·(nope+v))
    up = g.op(step("kv_up_heads"), ops.SplitHeads(heads, nope + vd), up, label="K_C, V heads",
              role=R.KV_UP_HEADS)                                                     # (B, h, T, nope+v)
    k_pass = g.op(step("k_nope"), ops.Slice(sympy.Integer(0), nope), up, label="K_C",
                  role=R.KEY_NOPE)                                                    # (B, h, T, nope)
    v = g.op(step("v"), ops.Slice(nope, vd), up, label="V", role=R.VALUE)            # (B, h, T, v)
    qf = g.op(step("q_parts"), ops.Concat(), q_pass, q_rot, label="[Q_C, Q_R]",
              role=R.QUERY_PARTS)                                                     # (B, h, T, nope+rope)
    kf = g.op(step("k_parts"), ops.Concat(), k_pass, k_rot, label="[K_C, K_R]",
              role=R.KEY_PARTS)                                                       # (B, h, T, nope+rope)
    return qf, kf, v, heads * vd, q_latent, gate

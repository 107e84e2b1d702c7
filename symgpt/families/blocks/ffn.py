"""The feed-forward network, declared once for every family. Each op declares its role
(``symgpt.graph.roles``); node paths and labels are the caller's.

A variant is an :class:`FFNSpec` (each field names the transformers config field or paper it
mirrors; a caller builds it once per kind of layer: ``decoder_layers.decoder_ffn_spec`` from the
decoder's flags):

* a dense MLP (up -> activation -> down) or a gated one (act(gate) ⊙ up -> down: SwiGLU, GeGLU,
  T5 v1.1), its gate and up projections separate or fused (Phi-3), with or without biases;
* ``moe``: a mixture of experts (:class:`MoE`): a router, its scores (softmax, or DeepSeek-V3's
  sigmoid), the top-k weights (renormalised or not, group-limited or not), E experts of which k
  run per token, their weighted sum, and a shared expert every token runs (DeepSeek's plain one,
  Qwen2-MoE's sigmoid-gated one). Dense and MoE layers mix as stacks of their own
  (``families/stacks.py``), each calling this builder with its own ``moe``;
* dropout after the activation (T5, BART) and on the output;
* a norm of width d_ff before the down projection (BitNet's ``ffn_sub_norm``).

Paths: ``spec.names`` maps a step (``up``, ``gate``, ``gate_up``, ``act``, ``mul``, ``down``,
``dropout``, ``router``, ...: :data:`STEPS`) to its node name; a step it leaves out is
``{spec.prefix}{STEPS[step]}``. The experts' own steps are named inside their group as the dense
FFN's are, without the prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...graph import roles as R

#: step -> its node name after ``prefix`` when the caller does not name it
STEPS = {
    "up": "up", "gate": "gate", "gate_up": "gate_up", "act": "act", "mul": "mul", "down": "down",
    "act_dropout": "act_dropout", "dropout": "dropout", "sub_norm": "ffn_sub_norm",
    "router": "router", "router_softmax": "router_softmax", "topk": "topk", "experts": "experts",
    "combine": "combine", "shared_expert": "shared_expert", "shared_gate": "shared_expert_gate",
    "shared_gate_act": "shared_expert_gate_act", "shared_scale": "shared_expert_scale",
    "shared_add": "shared_add", "score_bias": "score_bias",
}


@dataclass(frozen=True)
class MoE:
    """A mixture of ``experts`` FFNs, ``active`` of them per token (transformers' Mixtral, Qwen2-MoE,
    DeepSeek-V2/V3 blocks): ``score`` is ``softmax``, ``sigmoid`` or ``topk_softmax`` (the top k of the
    logits, then a softmax over those k: Granite MoE; the same weights as a renormalised top-k of
    the softmax, other saved tensors); ``normalize`` divides the top-k
    weights by their sum; ``groups`` is group-limited routing (n_group, per-group score count,
    topk_group) or None; ``shared`` is ``none``, ``plain`` or ``gated`` (a sigmoid(x·w) scale), of
    width ``shared_ff``. ``score="topk_softmax"``: the top k router logits are chosen first and
    their softmax is the weights (gpt-oss's GptOssTopKRouter); ``router_bias``: the router has a
    bias (gpt-oss). ``runs``: the experts
    each token runs when it is not ``active`` -- E for transformers' ``Llama4TextMoe``, which runs
    every expert on every token (the router's scores scale the inputs, zero for the experts not
    chosen). ``score_bias``: a learned bias per expert added to the scores for the choice of the
    top k only, E parameters (:class:`~symgpt.ops.ScoreBias`: ERNIE 4.5 MoE's moe_statics,
    AFMoE's expert_bias, Laguna's e_score_correction_bias)."""

    experts: sympy.Expr
    active: sympy.Expr
    score: str = "softmax"
    normalize: bool = True
    groups: tuple | None = None
    shared: str = "none"
    shared_ff: sympy.Expr | None = None
    router_bias: bool = False
    score_bias: bool = False
    runs: sympy.Expr | None = None


@dataclass(frozen=True)
class FFNSpec:
    """One FFN variant: its sizes, its paths and its choices."""

    #: the model width d (hidden_size)
    d_model: object
    #: the hidden width d_ff (intermediate_size; each expert's with ``moe``)
    ff: object
    #: the activation op (hidden_act)
    act: ops.Op
    #: the path of the steps ``names`` leaves out: ``{prefix}{STEPS[step]}``
    prefix: str = "ffn/"
    #: step -> node name (:data:`STEPS`): the source's module names
    names: Mapping[str, str] | None = None
    #: the projections' biases (mlp_bias)
    bias: bool = False
    #: a gated FFN, act(gate) ⊙ up (Shazeer 2020, "GLU Variants Improve Transformer": SwiGLU,
    #: GeGLU; T5 v1.1's wi_0/wi_1); False: up -> act -> down
    gated: bool = False
    #: the gate and up projections fused in one matrix (Phi-3's gate_up_proj)
    fused_gate_up: bool = False
    #: dropout after the activation (T5's and BART's dropout_rate / activation_dropout)
    act_dropout: bool = False
    #: dropout on the output (hidden_dropout_prob, dropout)
    dropout: bool = False
    #: a mixture of experts in place of the dense FFN
    moe: MoE | None = None
    #: a norm of width d_ff, made by a callable of its width, before the down projection (BitNet's
    #: ffn_sub_norm)
    sub_norm: Callable | None = None
    # --- a per-use low-rank adapter on the fused gate/up projection (Zamba2's gate_up_proj_adapter_list)
    #: ``adapter(g, x, gate_up)`` -> gate_up plus the adapter of the input *x*; None: none.
    #: ``fused_gate_up`` only.
    adapter: Callable | None = None


def ffn(g, x, spec: FFNSpec) -> str:
    """The FFN of *x* (B, T, d) -> (B, T, d) as *spec* says."""
    step = _Steps(spec.prefix, spec.names or {})
    if spec.adapter is not None and not (spec.gated and spec.fused_gate_up and spec.moe is None):
        raise SymgptError("an FFN adapter is modelled on a dense fused gate/up projection only")
    if spec.moe is None:
        o = _body(g, x, step, spec)
    else:
        o = _mixture(g, x, step, spec)
    if spec.dropout:
        o = g.op(step("dropout"), ops.Dropout(), o, role=R.DROPOUT)
    return o


class _Steps:
    """A step's node name: the caller's, or ``{prefix}{STEPS[step]}``."""

    def __init__(self, prefix, names):
        self.prefix, self.names = prefix, names

    def __call__(self, key):
        return self.names.get(key) or f"{self.prefix}{STEPS[key]}"


def _body(g, x, step, spec: FFNSpec, ff=None):
    """up (and gate) -> activation (-> gate product) -> down, of width *ff* when given (the shared
    expert's) or ``spec.ff``."""
    d_model, act, bias, gated = spec.d_model, spec.act, spec.bias, spec.gated
    ff = spec.ff if ff is None else ff
    if not gated:
        u = g.op(step("up"), ops.Linear(d_model, ff, bias=bias), x, role=R.FFN_UP, label="H")      # (B, T, d_ff)
        u = g.op(step("act"), act, u, role=R.FFN_ACT, label=f"{act.title}(H)")                   # (B, T, d_ff)
    else:
        if spec.fused_gate_up:
            gu = g.op(step("gate_up"), ops.Linear(d_model, 2 * ff, bias=bias), x, role=R.FFN_GATE_UP,
                      label="gate, up")                                                          # (B, T, 2d_ff)
            if spec.adapter is not None:
                gu = spec.adapter(g, x, gu)                                                      # (B, T, 2d_ff)
            gate = g.op(step("gate"), ops.Slice(sympy.Integer(0), ff), gu, role=R.FFN_GATE, label="G")
            up = g.op(step("up"), ops.Slice(ff, ff), gu, role=R.FFN_UP, label="U")               # (B, T, d_ff)
        else:
            gate = g.op(step("gate"), ops.Linear(d_model, ff, bias=bias), x, role=R.FFN_GATE, label="G")
            up = g.op(step("up"), ops.Linear(d_model, ff, bias=bias), x, role=R.FFN_UP, label="U")  # (B, T, d_ff)
        gate = g.op(step("act"), act, gate, role=R.FFN_ACT, label=f"{act.title}(G)")              # (B, T, d_ff)
        u = g.op(step("mul"), ops.Mul(), gate, up, role=R.FFN_MUL, label=f"{act.title}(G) ⊙ U")   # (B, T, d_ff)
    if spec.act_dropout:
        u = g.op(step("act_dropout"), ops.Dropout(), u, role=R.DROPOUT)
    if spec.sub_norm is not None:
        u = g.op(step("sub_norm"), spec.sub_norm(ff), u, role=R.FFN_SUB_NORM, label="norm(H)")        # (B, T, d_ff)
    return g.op(step("down"), ops.Linear(ff, d_model, bias=bias), u, role=R.FFN_DOWN, label="ffn_out")  # (B, T, d)


def _mixture(g, x, step, spec: FFNSpec):
    """Router -> scores -> top-k weights; the experts (a group of E, k active); their weighted
    sum; plus the shared expert."""
    d_model, ff, moe = spec.d_model, spec.ff, spec.moe
    r = g.op(step("router"), ops.Linear(d_model, moe.experts, bias=moe.router_bias, tag="router"), x,
             role=R.ROUTER, label="router logits")                                         # (B, T, E)
    if moe.score == "topk_softmax":  # gpt-oss: the k largest logits, then their softmax
        w = g.op(step("topk"), ops.TopK(moe.active, normalize=False), r, role=R.TOP_K,
                 label="top-k logits")                                                     # (B, T, k)
        w = g.op(step("router_softmax"), ops.Softmax(), w, role=R.ROUTER_SOFTMAX,
                 label="top-k weights")                                                    # (B, T, k)
    else:
        score = ops.Sigmoid() if moe.score == "sigmoid" else ops.Softmax()
        r = g.op(step("router_softmax"), score, r, role=R.ROUTER_SOFTMAX, label="router probs")  # (B, T, E)
        if moe.score_bias:
            r = g.op(step("score_bias"), ops.ScoreBias(moe.experts), r, role=R.SCORE_BIAS,
                     label="scores + bias (choice)")                                       # (B, T, E)
        w = g.op(step("topk"), ops.TopK(moe.active, normalize=moe.normalize, groups=moe.groups), r,
                 role=R.TOP_K, label="top-k weights")                                      # (B, T, k)
    inner = _Steps("", {})
    runs = moe.active if moe.runs is None else moe.runs
    with g.repeat(step("experts"), moe.experts, active=runs, label="expert", role=R.EXPERTS):
        e = _body(g, x, inner, spec)                                              # (B, T, d) per expert
    o = g.op(step("combine"), ops.MoECombine(), e, w, role=R.COMBINE, label="Σ weights · experts")  # (B, T, d)
    if moe.shared == "none":
        return o
    # a group of one, so its parts are named as an FFN's
    with g.repeat(step("shared_expert"), 1, label="shared expert"):
        sh = _body(g, x, inner, spec, moe.shared_ff if moe.shared_ff is not None else ff)  # (B, T, d)
    if moe.shared == "gated":  # Qwen2-MoE: sigmoid(x·w) scales the shared expert
        gate = g.op(step("shared_gate"), ops.Linear(d_model, sympy.Integer(1), bias=False), x,
                    role=R.SHARED_GATE, label="shared gate")                              # (B, T, 1)
        gate = g.op(step("shared_gate_act"), ops.Sigmoid(), gate, role=R.SHARED_GATE_ACT, label="σ(gate)")
        sh = g.op(step("shared_scale"), ops.Mul(), gate, sh, role=R.SHARED_SCALE,
                  label="σ(gate) · shared")                                                # (B, T, d)
    return g.op(step("shared_add"), ops.Add(), o, sh, role=R.SHARED_ADD, label="routed + shared")  # (B, T, d)

"""RecurrentGemma declared on the op catalog with transformers' module names
(``RecurrentGemmaForCausalLM``). Each layer kind is its own stack (the order of the layers changes no
count): ``blocks``, the local-attention residual blocks (the generic decoder's block: pre-norm
sliding-window attention over W keys and the GeGLU MLP), and ``recurrent_blocks``, the recurrent
residual blocks (``RecurrentGemmaRecurrentBlock``: linear_y d -> W_lru with GeLU, linear_x
d -> W_lru, a depthwise causal conv1d of kernel d_conv, the RG-LRU, their product, linear_out
W_lru -> d, all with biases; then the same MLP), W_lru = ``d_inner``.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import L, L_rec, d, d_conv, d_inner, h
from ...graph import roles as R
from ...graph.arch import Builder
from .decoder import decoder_block, decoder_embeddings
from .decoder_flags import BuildSizes
from .decoder_layers import decoder_ffn, decoder_norm
from .encoder_layers import activation


def _recurrent_block(g, flags, s, x):
    a = g.op("temporal_pre_norm", decoder_norm(flags, d), x, role=R.MIXER_NORM, label="norm")       # (B, T, d)
    y = g.op("temporal_block/linear_y", ops.Linear(d, d_inner, bias=True), a, role=R.RECURRENT_GATE_BRANCH,
             label="linear_y")
    y = g.op("temporal_block/act", activation(flags["activation"]), y, role=R.RECURRENT_GATE_BRANCH_ACT,
             label="act(y)")
    u = g.op("temporal_block/linear_x", ops.Linear(d, d_inner, bias=True), a, role=R.RECURRENT_X, label="linear_x")
    u = g.op("temporal_block/conv_1d", ops.GriffinConv1d(d_inner, d_conv, bias=True), u, role=R.SSM_CONV,
             label="causal conv1d")
    u = g.op("temporal_block/rg_lru", ops.RGLRU(d_inner, h), u, role=R.RG_LRU, label="RG-LRU")
    u = g.op("temporal_block/gate", ops.Mul(), u, y, role=R.SSM_GATE, label="RG-LRU · act(y)")
    o = g.op("temporal_block/linear_out", ops.Linear(d_inner, d, bias=True), u, role=R.SSM_OUT,
             label="linear_out")                                                                   # (B, T, d)
    x = g.op("temporal_block/residual", ops.Add(), x, o, role=R.MIXER_RESIDUAL, label="X + recurrent")
    f = g.op("channel_pre_norm", decoder_norm(flags, d), x, role=R.FFN_NORM, label="norm_ffn")
    f = decoder_ffn(g, flags, s, f)
    return g.op("ffn/residual", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")          # (B, T, d)


def build(flags, bound, name="recurrent_gemma"):
    s = BuildSizes(flags, bound)
    n_rec = flags.get("recurrent_layers") or 0
    if isinstance(n_rec, bool) or not isinstance(n_rec, int) or n_rec < 0:
        raise SymgptError(f"recurrent_layers must be a whole number, got {n_rec!r}")
    if not flags["window"] or not flags["pre_norm"] or flags["post_norm"] or flags["parallel"] or flags["moe"]:
        raise SymgptError(f"{name}: the attention blocks are pre-norm, sequential, dense and sliding-window")
    g = Builder(name, declared_roles=True)
    g.require("integer", d_inner / h, "d_inner must be divisible by h (the RG-LRU's gate blocks)",
              id="heads_divide_lru")
    g.require("le", (L_rec if n_rec else 0) - L, "L must be at least recurrent_layers", id="recurrent_within_layers")
    x = decoder_embeddings(g, flags, s)
    rec = L_rec if n_rec else sympy.Integer(0)  # the symbol bound to recurrent_layers (FLAG_SYMBOLS)
    stacks = [("blocks", L - rec, "local-attention block"), ("recurrent_blocks", rec, "recurrent block")]
    table = None
    for stack, count, label in stacks:
        if count == 0:
            continue
        if stack == "blocks" and table is None:
            table = g.op("embedding/rotary", ops.RotaryTable(s.dh, s.rot), "input_ids", label="cos, sin",
                         role=R.ROTARY_TABLE)
        with g.repeat(stack, count, label=label, carry=x, role=R.STACK):
            x = (_recurrent_block(g, flags, s, x) if stack == "recurrent_blocks"
                 else decoder_block(g, flags, s.layer(flags), x, table))
    x = g.op("final_norm", decoder_norm(flags, d), x, label="final norm", role=R.FINAL_NORM)          # (B, T, d)
    tie = {"weight": g.param("embedding/token")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, s.vocab, bias=False, tag="lm_head"), x, tie=tie, label="logits",
                  role=R.HEAD)                                                                      # (B, T, V)
    if flags["logit_softcap"]:
        logits = g.op("lm_head_softcap", ops.SoftCap(sympy.Integer(flags["logit_softcap"])), logits,
                      label="logits soft-capped", role=R.LOGIT_SOFTCAP)
    loss = g.op("loss", ops.CrossEntropy(), logits, label="loss", role=R.LOSS) if flags["loss"] else ""
    # the cache transformers builds for its local-attention layers keeps the last W positions, not the
    # W - 1 of DynamicSlidingWindowLayer (measured against the cache's tensors, tests/test_recurrent_state.py)
    return g.build(output=logits, loss=loss, flags=dict(flags, window_cache="W"))

"""Gemma 4's text decoder, declared on the op catalog with transformers' module names
(``Gemma4ForCausalLM``, ``Gemma4UnifiedForCausalLM``; Gemma Team 2026, "Gemma 4").

Token embeddings × √d; per-layer embeddings where ``ple`` is set (``embed_tokens_per_layer``:
V_ple rows of L·p, × √p, added to ``per_layer_model_projection`` of the token embeddings (× d^-1/2,
a norm of p on each layer's slice) and × 2^-1/2); then L layers: a norm, attention (queries and
keys normed per head and rotated, values normed per head without a scale, no score scaling), a
norm of its output and the residual add; a norm, the gated FFN, a norm of its output and the
residual add; with ``ple``, the layer's slice gated in (``per_layer_input_gate`` d -> p, the
activation, × the slice, ``per_layer_projection`` p -> d, a norm, the residual add). A final norm
and the LM head (tied), soft-capped where ``logit_softcap`` is set.

Layers are sliding-window (heads of ``d_head``, ``h_kv`` key/value heads) or full attention (one in
every ``full_every``; heads of ``global_head_dim``, ``global_kv_heads`` key/value heads, values from
the key projection with ``k_eq_v``). The last ``kv_shared`` layers hold no key/value projections
and no cache: each reads the keys and values of the last layer of its kind before them (KV
sharing); with ``double_wide`` their FFN is 2·d_ff wide. Four stacks, in this order: sliding and
full layers with caches of their own, then the sliding and full layers that share:
(L - n) - floor((L - n)/p), floor((L - n)/p), n - (floor(L/p) - floor((L - n)/p)) and
floor(L/p) - floor((L - n)/p) layers for n = kv_shared; the order of the layers changes no count.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import B, L, T, V, W, d, d_ff, d_head, h, h_kv
from ...graph import roles as R
from ...graph.arch import Builder
from .attention import AttentionSpec, Norms, Projections, Scores, attention
from .encoder_layers import activation
from .ffn import FFNSpec, ffn

NAMES = {"q": "self_attn/q_proj", "k": "self_attn/k_proj", "v": "self_attn/v_proj", "o": "self_attn/o_proj"}


def _norm(dim):
    return ops.RMSNorm(dim)


def _ple(g, flags, ids, x):
    """The per-layer inputs (B, T, L·p)."""
    p = sympy.Integer(flags["ple"])
    Vp = sympy.Integer(flags["ple_vocab"])
    e = g.op("model/embed_tokens_per_layer", ops.Embedding(Vp, L * p), ids, role=R.PER_LAYER_EMBEDDING,
             label="per-layer embeddings")                                             # (B, T, L·p)
    e = g.op("model/embed_tokens_per_layer_scale", ops.Scale(sympy.sqrt(p), tensor=True), e,
             role=R.PER_LAYER_SCALE, label="× √p")
    m = g.op("model/per_layer_model_projection", ops.Linear(d, L * p, bias=False), x,
             role=R.PER_LAYER_MODEL_PROJECTION, label="per-layer projection")          # (B, T, L·p)
    m = g.op("model/per_layer_model_projection_scale", ops.Scale(1 / sympy.sqrt(d)), m, role=R.PER_LAYER_SCALE,
             label="× d^-1/2")
    m = g.op("model/per_layer_split", ops.SplitHeads(L, p), m, role=R.PER_LAYER_HEADS,
             label="L slices of p")                                                     # (B, L, T, p)
    m = g.op("model/per_layer_projection_norm", _norm(p), m, role=R.PER_LAYER_PROJECTION_NORM,
             label="norm(slices)")
    m = g.op("model/per_layer_merge", ops.MergeHeads(), m, role=R.PER_LAYER_HEADS, label="slices merged")
    s = g.op("model/per_layer_add", ops.Add(), m, e, role=R.PER_LAYER_COMBINE, label="projection + embeddings")
    return g.op("model/per_layer_input_scale", ops.Scale(1 / sympy.sqrt(2)), s, role=R.PER_LAYER_SCALE,
                label="× 2^-1/2")                                                       # (B, T, L·p)


def _layer(g, flags, x, *, full, table, shared_kv, ple, stack):
    dh = sympy.Integer(flags["global_head_dim"]) if full and flags["global_head_dim"] else d_head
    kv = sympy.Integer(flags["global_kv_heads"]) if full and flags["global_kv_heads"] else h_kv
    a = g.op("input_layernorm", _norm(d), x, role=R.ATTENTION_NORM, label="norm_attn")
    spec = AttentionSpec(d, h, dh=dh, kv_heads=kv, module="self_attn", names=NAMES, window=None if full else W,
                         projections=Projections(bias=bool(flags["attn_bias"]), v_from_k=bool(full and flags["k_eq_v"])),
                         norms=Norms(qk="head", norm=_norm, v=lambda dim: ops.RMSNorm(dim, affine=False)),
                         scores=Scores(scale=None))
    o = attention(g, a, spec, rotary=table, shared_kv=shared_kv)                       # (B, T, d)
    o = g.op("post_attention_layernorm", _norm(d), o, role=R.POST_ATTENTION_NORM, label="norm(attn_out)")
    x = g.op("attention_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
    f = g.op("pre_feedforward_layernorm", _norm(d), x, role=R.FFN_NORM, label="norm_ffn")
    ff = 2 * d_ff if shared_kv is not None and flags["double_wide"] else d_ff
    f = ffn(g, f, FFNSpec(d, ff, activation(flags["activation"]), gated=True,
                          names={"gate": "mlp/gate_proj", "up": "mlp/up_proj", "act": "mlp/act_fn",
                                 "mul": "mlp/mul", "down": "mlp/down_proj"}))
    f = g.op("post_feedforward_layernorm", _norm(d), f, role=R.POST_FFN_NORM, label="norm(ffn_out)")
    x = g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")      # (B, T, d)
    if ple is not None:
        p = sympy.Integer(flags["ple"])
        s = g.op("per_layer_input", ops.Slice(sympy.Integer(0), p), ple, role=R.PER_LAYER_SLICE,
                 label="the layer's slice")                                             # (B, T, p)
        u = g.op("per_layer_input_gate", ops.Linear(d, p, bias=False), x, role=R.PER_LAYER_GATE, label="gate")
        u = g.op("act_fn", activation(flags["activation"]), u, role=R.PER_LAYER_ACT, label="act(gate)")
        u = g.op("per_layer_mul", ops.Mul(), u, s, role=R.PER_LAYER_MUL, label="act(gate) ⊙ slice")
        u = g.op("per_layer_projection", ops.Linear(p, d, bias=False), u, role=R.PER_LAYER_PROJECTION,
                 label="per-layer out")                                                 # (B, T, d)
        u = g.op("post_per_layer_input_norm", _norm(d), u, role=R.PER_LAYER_NORM, label="norm(per-layer out)")
        x = g.op("per_layer_add", ops.Add(), x, u, role=R.PER_LAYER_RESIDUAL, label="X + per-layer out")
    return x


def stacks(flags):
    """(name, count, full, shared) of the four stacks, in forward order (a count may be 0)."""
    n = flags["kv_shared"] or 0
    p = flags["full_every"]
    if not flags["window"]:
        return [("blocks", L - n, True, False), ("shared_blocks", sympy.Integer(n), True, True)][: 2 if n else 1]
    if not p:
        raise SymgptError("gemma4: window needs full_every (the last layer is full attention)")
    full_own = sympy.floor((L - n) / p)
    full_all = sympy.floor(L / p)
    out = [("blocks", L - n - full_own, False, False), ("full_blocks", full_own, True, False)]
    if n:
        out += [("shared_blocks", n - (full_all - full_own), False, True),
                ("shared_full_blocks", full_all - full_own, True, True)]
    return out


def build(flags, bound, name="gemma4"):
    if flags["ple"] and not flags["ple_vocab"]:
        raise SymgptError("ple needs ple_vocab (the rows of the per-layer embedding table)")
    g = Builder(name, declared_roles=True)
    if flags["kv_shared"]:
        g.require("le", flags["kv_shared"] + 1 - L, "L must exceed kv_shared (layers that compute the keys and "
                  "values the sharing layers read)", id="kv_producers_within_layers")
    ids = g.input("input_ids", (B, T), label="input ids", role=R.TOKENS)                 # (B, T)
    x = g.op("model/embed_tokens", ops.Embedding(V, d), ids, role=R.TOKEN_EMBEDDING, label="tok_emb")
    x = g.op("model/embed_scale", ops.Scale(sympy.sqrt(d), tensor=True), x, role=R.EMBEDDING_SCALE,
             label="tok_emb × √d")                                                      # (B, T, d)
    ple = _ple(g, flags, ids, x) if flags["ple"] else None
    gdh = sympy.Integer(flags["global_head_dim"]) if flags["global_head_dim"] else d_head
    tables = {False: g.op("model/rotary_emb/sliding", ops.RotaryTable(d_head, sympy.Integer(1)), ids,
                          role=R.ROTARY_TABLE, label="cos, sin (sliding)") if flags["window"] else None,
              True: g.op("model/rotary_emb/full", ops.RotaryTable(gdh, sympy.Integer(1)), ids,
                         role=R.ROTARY_TABLE, label="cos, sin (full)")}
    producers = {}
    for stack, count, full, shared in stacks(flags):
        kv = None
        if shared:
            if full not in producers:
                raise SymgptError("KV sharing needs a layer of each kind with keys and values of its own")
            kv = producers[full]
        with g.repeat(stack, count, label=("full-attention" if full else "sliding-window") + " layer"
                      + (" (shared keys and values)" if shared else ""), carry=x, role=R.STACK):
            x = _layer(g, flags, x, full=full, table=tables[full], shared_kv=kv, ple=ple, stack=stack)
        if not shared:
            producers[full] = (f"{stack}/self_attn/k_rotary", f"{stack}/self_attn/v_norm")
    x = g.op("model/norm", _norm(d), x, role=R.FINAL_NORM, label="final norm")            # (B, T, d)
    tie = {"weight": g.param("model/embed_tokens")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), x, tie=tie, role=R.HEAD,
                  label="logits")                                                         # (B, T, V)
    if flags["logit_softcap"]:
        logits = g.op("lm_head_softcap", ops.SoftCap(sympy.Integer(flags["logit_softcap"])), logits,
                      role=R.LOGIT_SOFTCAP, label="logits soft-capped")
    loss = g.op("loss", ops.CrossEntropy(), logits, role=R.LOSS, label="loss") if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))

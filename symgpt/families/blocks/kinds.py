"""Decoders whose layers are of several kinds, each kind its own stack (``roles.STACK``) with its
own count: short-convolution layers among attention layers (LFM2, LFM3: transformers'
``Lfm2ShortConv``), sliding-window layers among full-attention ones, and a first layer whose
attention has no norm before it (ModernBERT's decoder: ``ModernBertDecoderLayer`` with
``layer_idx == 0``). The order of the layers changes no count, so each kind is one stack.

A short-convolution layer (Liquid AI's LFM2, transformers' ``Lfm2ShortConv``): in_proj d -> 3d split
into B, C and x; B·x; a depthwise causal conv1d of kernel ``d_conv`` over time; C times its output;
out_proj d -> d. Its inference state is its last d_conv inputs per channel, not a KV cache
(``ops.CausalConv1d.recurrent_state``). Attention and FFN layers are the generic decoder's
(``blocks/decoder.py``); the LM head may carry a dense layer, an activation and a norm before the
decoder (ModernBERT's ``ModernBertDecoderPredictionHead``).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import L, L_conv, d, d_conv, d_head, h, h_kv
from ...graph import roles as R
from ...graph.arch import Builder
from .decoder import decoder_block, decoder_embeddings
from .decoder_flags import BuildSizes
from .decoder_layers import decoder_ffn, decoder_norm
from .encoder_layers import activation


_NOT_HERE = ("dense_layers", "dense_full", "full_every", "moe_every", "nope_every", "nope_full", "last_proj_bias",
             "embed_dim", "logit_softcap", "logit_divisor", "residual_scale", "diff_attention", "moa", "cdmoe")


def _count(flags, key) -> int:
    n = flags.get(key) or 0
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise SymgptError(f"{key} must be a whole number, got {n!r}")
    return n


def kinds(flags) -> list[tuple[str, sympy.Expr, dict, str]]:
    """The stacks of layers, one per kind: (name, count, flag changes, label). ``conv_layers = n``:
    n short-convolution layers (``conv_blocks``, counted in the symbol ``L_conv`` bound to n); ``first_bare``: the first layer is full attention
    with no norm before it (``first_blocks`` of one); with ``window``, ``full_layers = m`` of the
    attention layers (the first included) are full attention (``full_blocks``), the others
    sliding-window (``blocks``); without it every attention layer is full (``blocks``). A kind no
    layer has is left out."""
    n_conv, n_full = _count(flags, "conv_layers"), _count(flags, "full_layers")
    first = 1 if flags.get("first_bare") else 0
    if flags["window"] and n_full < first:
        raise SymgptError("first_bare with window needs full_layers of at least 1 (the first layer is full)")
    if n_full and not flags["window"]:
        raise SymgptError("full_layers needs window=true (full-attention layers among sliding ones)")
    conv = L_conv if n_conv else sympy.Integer(0)  # the symbol bound to conv_layers (FLAG_SYMBOLS)
    out = [("first_blocks", sympy.Integer(first), {"window": False, "bare_attention": True},
            "first layer (no attention norm)"),
           ("conv_blocks", conv, {"mixer": "conv"}, "short-convolution layer")]
    if flags["window"]:
        out += [("blocks", L - conv - n_full, {}, "sliding-window layer"),
                ("full_blocks", sympy.Integer(n_full - first), {"window": False}, "full-attention layer")]
    else:
        out += [("blocks", L - conv - first, {}, "attention layer")]
    return [k for k in out if k[1] != 0]


def _conv_block(g, flags, s, x):
    """A pre-norm short-convolution layer and its FFN (``Lfm2DecoderLayer`` without attention)."""
    bias = bool(flags.get("conv_bias"))
    a = g.op("norms/operator", decoder_norm(flags, d), x, role=R.MIXER_NORM, label="norm_op")        # (B, T, d)
    p = g.op("conv/in_proj", ops.Linear(d, 3 * d, bias=bias), a, role=R.SSM_IN, label="in_proj")     # (B, T, 3d)
    b = g.op("conv/B", ops.Slice(sympy.Integer(0), d), p, role=R.SSM_SPLIT, label="B")
    c = g.op("conv/C", ops.Slice(d, d), p, role=R.SSM_SPLIT, label="C")
    u = g.op("conv/x", ops.Slice(2 * d, d), p, role=R.SSM_SPLIT, label="x")
    u = g.op("conv/bx", ops.Mul(), b, u, role=R.SSM_GATE, label="B · x")                              # (B, T, d)
    u = g.op("conv/conv1d", ops.CausalConv1d(d, d_conv, bias=bias), u, role=R.SSM_CONV,
             label="causal conv1d")                                                                  # (B, T, d)
    u = g.op("conv/cy", ops.Mul(), c, u, role=R.SSM_GATE, label="C · conv")                           # (B, T, d)
    o = g.op("conv/out_proj", ops.Linear(d, d, bias=bias), u, role=R.SSM_OUT, label="out_proj")       # (B, T, d)
    if flags["branch_norms"]:
        o = g.op("norms/post_operator", decoder_norm(flags, d), o, role=R.SSM_OUT_NORM,
                 label="norm(conv_out)")                                                             # (B, T, d)
    x = g.op("conv/residual", ops.Add(), x, o, role=R.MIXER_RESIDUAL, label="X + conv_out")           # (B, T, d)
    f = g.op("norms/ffn", decoder_norm(flags, d), x, role=R.FFN_NORM, label="norm_ffn")
    f = decoder_ffn(g, flags, s, f)                                                                  # (B, T, d)
    if flags["branch_norms"]:
        f = g.op("norms/post_ffn", decoder_norm(flags, d), f, role=R.POST_FFN_NORM, label="norm(ffn_out)")
    return g.op("ffn/residual", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")            # (B, T, d)


def build(flags, bound, name="kinds", vision=None):
    """The graph of a decoder whose layers are of the kinds :func:`kinds` lists; *vision*
    (``g, x -> x``): a vision tower declared beside the token embeddings (``blocks/decoder.py``'s)."""
    s = BuildSizes(flags, bound)
    if flags["post_norm"] or flags["parallel"] or not flags["pre_norm"]:
        raise SymgptError(f"{name}: the layers are pre-norm and sequential")
    for key in _NOT_HERE:  # generic decoder flags this builder does not honour: refused, never ignored
        if flags.get(key):
            raise SymgptError(f"{name}: flag {key} is not modelled for layers of several kinds")
    if not flags["final_norm"] or flags["positions"] != "rotary":
        raise SymgptError(f"{name}: the layers of several kinds have rotary positions and a final norm")
    g = Builder(name, declared_roles=True)
    if s.dh is not d_head:
        g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    if s.kv is h_kv:
        g.require("integer", h / h_kv, "h must be a multiple of h_kv", id="kv_heads_divide_heads")
    stacks = kinds(flags)
    fixed = sum((k[1] for k in stacks if k[0] != "blocks"), sympy.Integer(0))
    if any(k[0] == "blocks" for k in stacks):
        g.require("le", fixed + 1 - L, "L must exceed the layers of the other kinds", id="kinds_within_layers")
    x = decoder_embeddings(g, flags, s)
    if vision is not None:
        x = vision(g, x)
    table = g.op("embedding/rotary", ops.RotaryTable(s.dh, s.rot), "input_ids", label="cos, sin",
                 role=R.ROTARY_TABLE)
    local = table
    if flags["local_rope"] and flags["window"]:
        local = g.op("embedding/rotary_local", ops.RotaryTable(s.dh, s.rot), "input_ids",
                     label="cos, sin (local)", role=R.ROTARY_TABLE)
    for stack, count, changes, label in stacks:
        f = {**flags, **changes}
        with g.repeat(stack, count, label=label, carry=x, role=R.STACK):
            if f.get("mixer") == "conv":
                x = _conv_block(g, f, s.layer(f), x)
            else:
                x = decoder_block(g, f, s.layer(f), x, local if f["window"] else table)
    x = g.op("final_norm", decoder_norm(flags, d), x, label="final norm", role=R.FINAL_NORM)          # (B, T, d)
    if flags.get("head_transform"):  # ModernBERT's prediction head: dense, activation, norm
        x = g.op("head/dense", ops.Linear(d, d, bias=bool(flags.get("head_transform_bias"))), x,
                 label="dense", role=R.HEAD_TRANSFORM)
        x = g.op("head/act", activation(flags.get("head_activation") or "gelu"), x, label="act",
                 role=R.HEAD_TRANSFORM_ACT)
        x = g.op("head/norm", decoder_norm(flags, d), x, label="norm", role=R.HEAD_TRANSFORM_NORM)
    tie = {"weight": g.param("embedding/token")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, s.vocab, bias=bool(flags["head_bias"]), tag="lm_head"), x,
                  tie=tie, label="logits", role=R.HEAD)                                             # (B, T, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, label="loss", role=R.LOSS) if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))

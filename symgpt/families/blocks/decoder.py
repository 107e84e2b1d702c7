"""One generic decoder-only Transformer, declared as data with flags, on the op catalog.

Every decoder here (GPT-2/GPT-3, GPT-NeoX/Pythia, OPT, LLaMA, Mistral, Mixtral, Qwen2, Gemma,
Phi-3, Falcon) is this graph with different flags; ``families/named.py`` registers each as a family
whose flag defaults are that architecture's. Node paths follow GPT-2's scheme
(``embedding/token``, ``blocks/norms/attention``, ``blocks/attention/q|k|v`` or ``qkv``,
``blocks/attention/scores``, ``values``, ``proj``, ``blocks/ffn/gate|up|down``,
``blocks/ffn/router``, ``blocks/ffn/experts/...``, ``final_norm``, ``lm_head``), so every
derivation, printer and query works for every family unchanged.

Sizes are symbols; a few are used only when bound (or forced by a flag), as GPT-2 does with
``d_ff``: ``h_kv`` (else h: multi-head attention), ``d_head`` (else d/h), ``d_ff`` (else 4d for
a plain MLP; a gated FFN always uses ``d_ff``), ``W`` (with ``window``), ``E`` and ``k`` (with
``moe``), ``T_max`` (learned positions).

This module assembles the graph (embeddings, blocks, head); the flags and sizes are in
``decoder_flags``; ``decoder_layers`` turns the flags into calls of the attention and FFN builders
every family shares (``families/attention.py``, ``families/ffn.py``). Every node declares its
role; the flag tables and ``padded`` stay importable from here.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...graph import roles
from ...core.errors import SymgptError
from ...graph.arch import Builder
from ...core.symbols import B, L, T, T_max, d, d_head, h, h_kv
from .decoder_flags import (CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES, BuildSizes,  # noqa: F401  (the flag tables:
                            padded, require_experts)                           # re-exported)
from .decoder_layers import decoder_attention, decoder_ffn, decoder_norm
from .stacks import layers, stacks  # noqa: F401  (stacks: re-exported)


def build(flags, bound, name="decoder", labels=None, vision=None):
    """The decoder's graph for *flags*; *labels* renames nodes' labels by path. *vision*
    (``g, x -> x``): a vision tower and projector declared beside the token embeddings, whose image
    features it merges into them (vision--language models, ``blocks/vlm.py``)."""
    s = BuildSizes(flags, bound)
    if flags["post_norm"] and flags["parallel"]:
        raise SymgptError("post_norm and parallel blocks cannot be combined")
    g = Builder(name, declared_roles=True)
    if s.dh is not d_head:
        g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    if s.kv is h_kv:
        g.require("integer", h / h_kv, "h must be a multiple of h_kv", id="kv_heads_divide_heads")
    require_experts(g, flags)
    if flags["full_every"]:
        g.require("le", flags["full_every"] - L, "L must be at least full_every (one full-attention layer)",
                  id="full_layer_within_layers")

    x = decoder_embeddings(g, flags, s)
    if vision is not None:
        x = vision(g, x)
    table = None
    # rotary_per_layer (a flag Kyutai's family adds): each layer computes its own cos/sin (decoder_block)
    if flags["positions"] == "rotary" and not flags.get("rotary_per_layer"):
        table = g.op("embedding/rotary", ops.RotaryTable(s.dh, s.rot), "input_ids", label="cos, sin",
                     role=roles.ROTARY_TABLE)
    local = table
    if table is not None and flags["local_rope"] and flags["full_every"]:
        local = g.op("embedding/rotary_local", ops.RotaryTable(s.dh, s.rot), "input_ids",
                     label="cos, sin (local)", role=roles.ROTARY_TABLE)
    # nope_full: no positions in the full-attention layers (Cohere2, EXAONE 4, Kolibri with a window);
    # with every layer full that is every layer, with every layer sliding it changes nothing
    full = None if flags["nope_full"] else table
    # nope_layer: a stack of layers without positions (Llama 4's NoPE layers, stacks.py)
    x = layers(g, flags, s, x, lambda g, f, s, x: decoder_block(g, f, s, x, None if f.get("nope_layer")
                                                         else local if f["window"] else full))
    if flags["final_norm"]:
        x = g.op("final_norm", decoder_norm(flags, d), x, label="final norm", role=roles.FINAL_NORM)  # (B, T, d)
    width = d
    if flags["embed_dim"]:
        width = sympy.Integer(flags["embed_dim"])
        x = g.op("embedding/project_out", ops.Linear(d, width, bias=False), x,
                 label="project out", role=roles.PROJECT_OUT)                         # (B, T, e)
    tie = {"weight": g.param("embedding/token")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(width, s.vocab, bias=bool(flags["head_bias"]), tag="lm_head"), x,
                  tie=tie, label="logits", role=roles.HEAD)                           # (B, T, V)
    if flags["logit_softcap"]:
        logits = g.op("lm_head_softcap", ops.SoftCap(sympy.Integer(flags["logit_softcap"])), logits,
                      label="logits soft-capped", role=roles.LOGIT_SOFTCAP)          # (B, T, V)
    if flags["logit_divisor"]:
        n = flags["logit_divisor"]
        logits = g.op("lm_head_scale", ops.Scale(sympy.Rational(1, n)), logits,
                      label=f"logits × 1/{n}", role=roles.LOGIT_SCALE)               # (B, T, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, label="loss", role=roles.LOSS) if flags["loss"] else ""
    arch = g.build(output=logits, loss=loss, flags=dict(flags))
    for path, label in (labels or {}).items():  # a family's own names for some nodes
        if path in arch.graph:
            arch.graph.nodes[path]["label"] = label
    return arch


def decoder_embeddings(g, flags, s):
    """The decoder's input ids and embeddings (token, positions as the flags choose) into *g*."""
    ids = g.input("input_ids", (B, T), label="input ids", role=roles.TOKENS)          # (B, T)
    width = sympy.Integer(flags["embed_dim"]) if flags["embed_dim"] else d
    x = g.op("embedding/token", ops.Embedding(s.vocab, width), ids, label="tok_emb",
             role=roles.TOKEN_EMBEDDING)                                              # (B, T, e)
    if flags["embed_dim"]:
        x = g.op("embedding/project_in", ops.Linear(width, d, bias=False), x,
                 label="project in", role=roles.PROJECT_IN)                           # (B, T, d)
    if flags["embed_scale"]:
        x = g.op("embedding/scale", ops.Scale(sympy.sqrt(d), tensor=True), x,
                 label="tok_emb × √d", role=roles.EMBEDDING_SCALE)                    # (B, T, d)
    if flags["embed_norm"]:
        x = g.op("embedding/norm", decoder_norm(flags, d), x, label="norm(tok_emb)",
                 role=roles.EMBEDDING_NORM)                                           # (B, T, d)
    if flags["positions"] == "sinusoidal":
        pos = g.op("embedding/position", ops.SinusoidalPositions(d), ids, label="sinusoidal positions",
                   role=roles.POSITION_EMBEDDING)                                     # (T, d)
        x = g.op("embedding/add", ops.Add(), x, pos, label="X0", role=roles.EMBEDDING_ADD)  # (B, T, d)
    if flags["positions"] == "learned":
        g.require("le", T - T_max, "T must not exceed T_max, the length of the learned position table",
                  id="length_within_positions")
        pos = g.op("embedding/position",
                   ops.PositionEmbedding(T_max, d, offset=flags["pos_offset"] or 0,
                                       ids="mask" if flags["pos_offset"] else "range"), ids,
                   label="pos_emb", role=roles.POSITION_EMBEDDING)                    # (T, d)
        x = g.op("embedding/add", ops.Add(), x, pos, label="X0", role=roles.EMBEDDING_ADD)  # (B, T, d)
    if flags["dropout"]:
        x = g.op("embedding/dropout", ops.Dropout(), x, role=roles.DROPOUT)
    return x


def decoder_block(g, flags, s, x, table):
    post = flags["post_norm"]
    pre = flags["pre_norm"] and not post
    if flags.get("residual_scale") and (post or flags["parallel"]):
        raise SymgptError("residual_scale cannot be combined with post_norm or parallel blocks")
    if flags["branch_norms"] and (post or flags["parallel"]):
        raise SymgptError("branch_norms cannot be combined with post_norm or parallel blocks")
    if flags.get("rotary_per_layer") and flags["positions"] == "rotary":
        table = g.op("attention/rotary_table", ops.RotaryTable(s.dh, s.rot), "input_ids", label="cos, sin",
                     role=roles.ROTARY_TABLE)
    # bare_attention (a flag of blocks/kinds.py): no norm before the attention (ModernBERT's first layer)
    a_in = _norm_op(g, flags, "attention", x) if pre and not flags.get("bare_attention") else x  # (B, T, d)
    o = decoder_attention(g, flags, s, a_in, table)                                            # (B, T, d)
    if flags["branch_norms"]:
        o = g.op("norms/post_attention", decoder_norm(flags, d), o, label="norm(attn_out)",
                 role=roles.POST_ATTENTION_NORM)                                      # (B, T, d)
    if flags["parallel"]:
        if flags["shared_norm"]:
            f_in = a_in
        else:
            f_in = _norm_op(g, flags, "ffn", x)                                       # (B, T, d)
        f = decoder_ffn(g, flags, s, f_in)                                                     # (B, T, d)
        x = g.op("attention/residual", ops.Add(), x, o, label="X + attn_out",
                 role=roles.ATTENTION_RESIDUAL)                                       # (B, T, d)
        return g.op("ffn/residual", ops.Add(), x, f, label="X + attn_out + ffn_out",
                    role=roles.FFN_RESIDUAL)                                          # (B, T, d)
    # norm_residual (a flag MiniMax's family adds): the residual is the normed input, not x
    x = g.op("attention/residual", ops.Add(), _residual_scale(g, flags, "attention",
                                                               a_in if flags.get("norm_residual") else x), o,
             label="X + attn_out", role=roles.ATTENTION_RESIDUAL)                     # (B, T, d)
    if post:
        x = _norm_op(g, flags, "attention", x)                                        # (B, T, d)
    f_in = _norm_op(g, flags, "ffn", x) if pre else x                                 # (B, T, d)
    if flags.get("time_modulation"):  # Voxtral Realtime: × (1 + MLP(t_cond)) after the FFN norm
        f_in = g.op("ffn/time_modulation", ops.TimeModulation(d, sympy.Integer(flags["time_modulation"])), f_in,
                    label="× (1 + ada(t))", role=roles.TIME_MODULATION)               # (B, T, d)
    if flags.get("norm_residual"):
        x = f_in
    f = decoder_ffn(g, flags, s, f_in)                                                         # (B, T, d)
    if flags["branch_norms"]:
        f = g.op("norms/post_ffn", decoder_norm(flags, d), f, label="norm(ffn_out)",
                 role=roles.POST_FFN_NORM)                                            # (B, T, d)
    x = g.op("ffn/residual", ops.Add(), _residual_scale(g, flags, "ffn", x), f, label="X + ffn_out",
             role=roles.FFN_RESIDUAL)                                                 # (B, T, d)
    if post:
        x = _norm_op(g, flags, "ffn", x)                                              # (B, T, d)
    return x


def _residual_scale(g, flags, branch, x):
    """The residual *x*, times a learned per-channel scale when the family has one (Doge's
    ``input_residual`` and ``post_attention_residual``)."""
    if not flags.get("residual_scale"):
        return x
    return g.op(f"{branch}/residual_scale", ops.ChannelScale(d), x, label="w ⊙ X",
                role=roles.RESIDUAL_SCALE)                                            # (B, T, d)


def _norm_op(g, flags, branch, x):
    """The norm of the attention or FFN branch (before it; after its residual add when post-norm)."""
    role = roles.ATTENTION_NORM if branch == "attention" else roles.FFN_NORM
    label = "norm_attn" if branch == "attention" else "norm_ffn"
    return g.op(f"norms/{branch}", decoder_norm(flags, d), x, label=label, role=role)

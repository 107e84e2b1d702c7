"""The decoder of an encoder--decoder run alone as a causal LM, declared on the op catalog with
transformers' module names: ``BartForCausalLM`` and its kin (mBART, Marian, Pegasus, Blenderbot,
BlenderbotSmall, PLBart, MVP, TrOCR, BigBirdPegasus ``...ForCausalLM``) and ``WhisperForCausalLM``
(pre-norm, learned positions without offset, every attention's k_proj without a bias).

Token embeddings (× √d when ``embed_scale``) plus positions (a learned table of T_max + pos_offset
rows; a (T_max, d) parameter filled with sinusoids, Marian's and Pegasus'; or fixed sinusoids
without parameters), a LayerNorm of the embeddings where the model has one (after the positions
are added, BART's; or of the token embeddings before, BlenderbotSmall's), then L decoder layers:
causal self-attention, the cross-attention, the FFN, each sublayer post-norm (BART, Marian,
BlenderbotSmall, PLBart, MVP, TrOCR) or pre-norm with a final LayerNorm (mBART, Pegasus,
Blenderbot, BigBirdPegasus). The LM head, tied to the token table or not.

Every layer holds its cross-attention (``encoder_attn``: Q, K, V and output projections, and
``encoder_attn_layer_norm``), but transformers runs it only when ``encoder_hidden_states`` are
passed; on token ids alone it never runs. Its parameters are declared as ``ops.Held`` (counted,
read by no op, no FLOPs, no activations, not in an inference step's weight traffic).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...graph import roles as R
from ...graph.arch import Builder
from ...core.symbols import B, L, T, T_max, V, d, h
from .attention import Projections, attention
from .bart import bart_attention_spec, bart_ffn_spec
from .ffn import ffn

PREFIX = "model/decoder"


def _embed(g, flags, ids):
    x = g.op(f"{PREFIX}/embed_tokens", ops.Embedding(V, d), ids, role=R.TOKEN_EMBEDDING, label="tok_emb")  # (B, T, d)
    if flags["embed_scale"]:
        x = g.op(f"{PREFIX}/embed_scale", ops.Scale(sympy.sqrt(d)), x, role=R.EMBEDDING_SCALE, label="tok_emb × √d")
    if flags["embed_norm"] == "before":  # BlenderbotSmall: a LayerNorm of the token embeddings
        x = g.op(f"{PREFIX}/layernorm_embedding", ops.LayerNorm(d), x, role=R.EMBEDDING_NORM,
                 label="LayerNorm_emb")
    if flags["positions"] == "sinusoidal":
        pos = g.op(f"{PREFIX}/embed_positions", ops.SinusoidalPositions(d), ids, role=R.POSITION_EMBEDDING,
                   label="sinusoids")                                                          # (T, d)
    else:
        g.require("le", T - T_max, "T must not exceed T_max, the length of the position table",
                  id="length_within_positions")
        label = "sinusoids (a parameter table)" if flags["positions"] == "sinusoidal_table" else "pos_emb"
        pos = g.op(f"{PREFIX}/embed_positions", ops.PositionEmbedding(T_max, d, offset=flags["pos_offset"] or 0),
                   ids, role=R.POSITION_EMBEDDING, label=label)                               # (T, d)
    x = g.op(f"{PREFIX}/add", ops.Add(), x, pos, role=R.EMBEDDING_ADD, label="X0")             # (B, T, d)
    if flags["embed_norm"] == "after":
        x = g.op(f"{PREFIX}/layernorm_embedding", ops.LayerNorm(d), x, role=R.EMBEDDING_NORM,
                 label="LayerNorm_emb")
    if flags["dropout"]:
        x = g.op(f"{PREFIX}/dropout", ops.Dropout(), x, role=R.DROPOUT)
    return x


def _held_cross_attention(g, flags, dh):
    """The cross-attention a layer holds and does not run: its projections and LayerNorm."""
    bias = bool(flags["attn_bias"])
    for n in ("k_proj", "v_proj", "q_proj", "out_proj"):
        b = bias and (n != "k_proj" or flags["k_bias"])
        g.op(f"encoder_attn/{n}", ops.Held(ops.Linear(d if n != "out_proj" else h * dh, d, bias=b), (B, T, d)),
             role=R.HELD_CROSS_ATTENTION, label=f"cross-attention {n} (not run)")
    g.op("encoder_attn_layer_norm", ops.Held(ops.LayerNorm(d), (B, T, d)), role=R.HELD_CROSS_ATTENTION,
         label="LayerNorm_cross (not run)")


def _recorded(flags):
    """The flags the graph records: ``k_bias`` only where it departs from its default (the graphs
    of the types without it record what they recorded before the flag existed)."""
    return {k: v for k, v in flags.items() if k != "k_bias" or not v}


def build(flags, bound, name="seq2seq_decoder"):
    drop = bool(flags["dropout"])
    pre = flags["norm"] == "pre"
    g = Builder(name, declared_roles=True)
    g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    dh = d / h
    ids = g.input("input_ids", (B, T), label="input ids", role=R.TOKENS)                        # (B, T)
    x = _embed(g, flags, ids)
    k_bias = None if flags["k_bias"] else False  # Whisper: k_proj without a bias
    spec = bart_attention_spec("self_attn", dh, drop, causal=True,
                               projections=Projections(bias=bool(flags["attn_bias"]), k_bias=k_bias))
    ffn_spec = bart_ffn_spec(flags, drop)
    with g.repeat(f"{PREFIX}/layers", L, label="decoder layer", carry=x, role=R.STACK, length=T):
        a = x
        if pre:
            a = g.op("self_attn_layer_norm", ops.LayerNorm(d), x, role=R.ATTENTION_NORM, label="LayerNorm_attn")
        o = attention(g, a, spec)
        x = g.op("self_attn_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
        if not pre:
            x = g.op("self_attn_layer_norm", ops.LayerNorm(d), x, role=R.ATTENTION_NORM, label="LayerNorm_attn")
        _held_cross_attention(g, flags, dh)
        a = x
        if pre:
            a = g.op("final_layer_norm", ops.LayerNorm(d), x, role=R.FFN_NORM, label="LayerNorm_ffn")
        f = ffn(g, a, ffn_spec)
        x = g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")
        if not pre:
            x = g.op("final_layer_norm", ops.LayerNorm(d), x, role=R.FFN_NORM, label="LayerNorm_ffn")  # (B, T, d)
    if pre:
        x = g.op(f"{PREFIX}/layer_norm", ops.LayerNorm(d), x, role=R.FINAL_NORM, label="LayerNorm_final")
    if flags["head"] == "none":
        return g.build(output=x, flags=_recorded(flags))
    tie = {"weight": g.param(f"{PREFIX}/embed_tokens")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), x, tie=tie, role=R.HEAD,
                  label="logits")                                                               # (B, T, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, role=R.LOSS, label="loss") if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=_recorded(flags))

"""BART (Lewis et al. 2020) and the original Transformer (Vaswani et al. 2017), declared on the op
catalog with transformers' BART module names (fairseq's, which the original Transformer's reference
implementations share).

Two stacks with two sequence lengths: an encoder of L post-norm blocks over T_enc tokens and a
decoder of L_dec post-norm blocks over T_dec tokens, each block's sublayer followed by its residual
add and a LayerNorm. Every decoder block has cross-attention (queries from the decoder, keys and
values from the encoder's output, recomputed in every layer). One token embedding is shared by both
stacks and the LM head (tied), optionally scaled by √d (``embed_scale``: the original Transformer,
Sec. 3.4). Positions are ``learned`` (BART: a table per stack with T_max + 2 rows, two rows of offset,
then a LayerNorm of the embeddings) or ``sinusoidal`` (the original Transformer: no parameters).
BART's ``final_logits_bias`` is a buffer, not a parameter: its add is not drawn.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...graph import roles as R
from ...graph.arch import Builder
from ...core.symbols import B, L, L_dec, T_dec, T_enc, T_max, V, d, d_ff, h
from .attention import AttentionSpec, Projections, attention
from .ffn import FFNSpec, ffn
from .encoder_layers import activation, lm_head

def _embed(g, flags, ids, stack, length, *, owner: bool):
    """Token (+ position) embeddings of one stack, under ``encoder/`` or ``decoder/``."""
    tie = None if owner else {"weight": g.param("shared")}
    x = g.op("shared" if owner else f"{stack}/embed_tokens", ops.Embedding(V, d), ids, tie=tie,
             role=R.TOKEN_EMBEDDING, label="tok_emb" if owner else "tok_emb (shared)")       # (B, T, d)
    if flags["embed_scale"]:
        x = g.op(f"{stack}/embed_scale", ops.Scale(sympy.sqrt(d)), x, role=R.EMBEDDING_SCALE, label="tok_emb × √d")
    if flags["positions"] == "learned":
        g.require("le", length - T_max, f"{length} must not exceed T_max, the length of the learned position table",
                  id="length_within_positions")
        # transformers' BART expands the encoder's positions over the batch; the decoder's are one row
        pos = g.op(f"{stack}/embed_positions",
                   ops.PositionEmbedding(T_max, d, offset=flags["pos_offset"] or 0, ids="batch" if owner else "range"),
                   ids, role=R.POSITION_EMBEDDING, label="pos_emb")                             # (T, d)
    else:
        pos = g.op(f"{stack}/embed_positions", ops.SinusoidalPositions(d), ids, role=R.POSITION_EMBEDDING,
                   label="sinusoids")                                                           # (T, d)
    x = g.op(f"{stack}/add", ops.Add(), x, pos, role=R.EMBEDDING_ADD, label="X0")               # (B, T, d)
    if flags["embed_norm"]:
        x = g.op(f"{stack}/layernorm_embedding", ops.LayerNorm(d), x, role=R.EMBEDDING_NORM, label="LayerNorm_emb")
    if flags["dropout"]:
        x = g.op(f"{stack}/dropout", ops.Dropout(), x, role=R.DROPOUT)
    return x


def _proj(prefix):
    return {"q": f"{prefix}/q_proj", "k": f"{prefix}/k_proj", "v": f"{prefix}/v_proj", "o": f"{prefix}/out_proj"}


def bart_attention_spec(module, dh, drop, causal=False, projections=Projections(bias=True)) -> AttentionSpec:
    """BART's attention named *module* (its q_proj, k_proj, v_proj, out_proj), with biases unless
    *projections* says otherwise (the causal-LM decoders' attn_bias, Whisper's k_proj)."""
    return AttentionSpec(d, h, dh=dh, module=module, names=_proj(module), causal=causal, dropout=drop,
                         projections=projections)


def bart_ffn_spec(flags, drop) -> FFNSpec:
    """BART's FFN: fc1 -> activation_fn -> fc2, with biases (activation_dropout, dropout)."""
    return FFNSpec(d, d_ff, activation(flags["activation"]), bias=True, dropout=drop, act_dropout=drop,
                   names={"up": "fc1", "act": "activation_fn", "down": "fc2",
                          "act_dropout": "activation_fn_dropout", "dropout": "fc2_dropout"})


def _attention_sublayer(g, x, module, stream, dh, drop, causal=False, memory=None):
    """A post-norm attention sublayer: attention named *module* (self, or cross-attention over
    *memory*), the residual add onto the stream (X in the encoder, Y in the decoder), LayerNorm."""
    cross = memory is not None
    o = attention(g, x, bart_attention_spec(module, dh, drop, causal), memory=memory)
    x = g.op(f"{module}_add", ops.Add(), x, o, role=R.CROSS_RESIDUAL if cross else R.ATTENTION_RESIDUAL,
             label=f"{stream} + {'cross_out' if cross else 'attn_out'}")
    return g.op(f"{module}_layer_norm", ops.LayerNorm(d), x, role=R.CROSS_NORM if cross else R.ATTENTION_NORM,
                label="LayerNorm_cross" if cross else "LayerNorm_attn")


def _ffn_sublayer(g, flags, x, drop):
    f = ffn(g, x, bart_ffn_spec(flags, drop))
    x = g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")
    return g.op("final_layer_norm", ops.LayerNorm(d), x, role=R.FFN_NORM, label="LayerNorm_ffn")


def build(flags, bound, name="bart"):
    drop = bool(flags["dropout"])
    g = Builder(name, declared_roles=True)
    g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    dh = d / h

    ids = g.input("input_ids", (B, T_enc), label="input ids", role=R.TOKENS)                  # (B, T_enc)
    x = _embed(g, flags, ids, "encoder", T_enc, owner=True)
    with g.repeat("encoder/layers", L, label="encoder layer", carry=x, role=R.STACK, length=T_enc):
        x = _attention_sublayer(g, x, "self_attn", "X", dh, drop)
        x = _ffn_sublayer(g, flags, x, drop)                                                    # (B, T_enc, d)
    enc = x

    dids = g.input("decoder_input_ids", (B, T_dec), label="decoder input ids", role=R.TOKENS)  # (B, T_dec)
    y = _embed(g, flags, dids, "decoder", T_dec, owner=False)
    with g.repeat("decoder/layers", L_dec, label="decoder layer", carry=y, role=R.STACK, length=T_dec):
        y = _attention_sublayer(g, y, "self_attn", "Y", dh, drop, causal=True)
        y = _attention_sublayer(g, y, "encoder_attn", "Y", dh, drop, memory=enc)
        y = _ffn_sublayer(g, flags, y, drop)                                                    # (B, T_dec, d)
    if flags["head"] == "none":
        return g.build(output=y, flags=dict(flags))
    return lm_head(g, flags, y)

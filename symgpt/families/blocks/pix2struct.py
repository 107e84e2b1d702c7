"""Pix2Struct (Lee et al. 2023, "Pix2Struct: Screenshot Parsing as Pretraining for Visual Language
Understanding"; transformers' ``Pix2StructForConditionalGeneration``), declared with transformers'
module names.

The encoder (``Pix2StructVisionModel``) reads T_enc flattened patches: each patch's P pixel
values mapped to d by ``patch_projection`` (a linear map with a bias), plus a row and a column
embedding (two (N_rows, d) tables indexed by the patch's row and column), then L pre-norm blocks of
T5-style attention (no biases, scores not divided by √d_head, no position bias) and a gated-GELU
FFN, and a final RMSNorm. The decoder (``Pix2StructTextModel``) is T5's (``blocks/t5.py``): its
own token table, a causal relative position bias owned by its first layer, cross-attention onto
the encoder's output in every block, and an untied LM head.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...graph import roles as R
from ...graph.arch import Builder
from ...core.symbols import B, L, L_dec, T_dec, T_enc, d
from .encoder_layers import lm_head
from .t5 import _attention, _ffn, _stack_input, _stack_output, _sublayer


def _patches(g, flags, drop):
    P, rows = sympy.Integer(flags["patch_width"]), sympy.Integer(flags["max_rows"])
    pix = g.input("flattened_patches", (B, T_enc, P), dtype="act", label="patch pixels", role=R.PIXELS)
    r = g.input("row_indices", (B, T_enc), label="patch rows", role=R.EXTRA_IDS)
    c = g.input("column_indices", (B, T_enc), label="patch columns", role=R.EXTRA_IDS)
    x = g.op("encoder/embeddings/patch_projection", ops.Linear(P, d, bias=True), pix, role=R.PATCH_EMBEDDING,
             label="patch embedding")                                                          # (B, T_enc, d)
    er = g.op("encoder/embeddings/row_embedder", ops.Embedding(rows, d), r, role=R.POSITION_EMBEDDING,
              label="row embedding")
    ec = g.op("encoder/embeddings/column_embedder", ops.Embedding(rows, d), c, role=R.POSITION_EMBEDDING,
              label="column embedding")
    x = g.op("encoder/embeddings/add_row", ops.Add(), x, er, role=R.EMBEDDING_ADD, label="patch + row")
    x = g.op("encoder/embeddings/add_column", ops.Add(), x, ec, role=R.EMBEDDING_ADD, label="+ column")
    if drop:
        x = g.op("encoder/embeddings/dropout", ops.Dropout(), x, role=R.DROPOUT)
    return x


def build(flags, bound, name="pix2struct"):
    drop = bool(flags["dropout"])
    buckets = sympy.Integer(flags["buckets"])
    g = Builder(name, declared_roles=True)
    x = _patches(g, flags, drop)
    with g.repeat("encoder/layer", L, label="encoder layer", carry=x, role=R.STACK, length=T_enc):
        x = _sublayer(g, x, 0, "attn", "X", lambda a: _attention(g, a, "attention", drop))
        x = _sublayer(g, x, 1, "ffn", "X", lambda a: _ffn(g, flags, a, "mlp", drop))         # (B, T_enc, d)
    enc = _stack_output(g, "encoder", x, drop)

    dids = g.input("decoder_input_ids", (B, T_dec), label="decoder input ids", role=R.TOKENS)  # (B, T_dec)
    y, dbias = _stack_input(g, "decoder", dids, drop, buckets, owner=True, encoder=False)
    with g.repeat("decoder/layer", L_dec, label="decoder block", carry=y, role=R.STACK, length=T_dec):
        y = _sublayer(g, y, 0, "attn", "Y", lambda a: _attention(g, a, "self_attention/attention", drop,
                                                                 causal=True, position_bias=dbias))
        y = _sublayer(g, y, 1, "cross", "Y", lambda a: _attention(g, a, "encoder_decoder_attention/attention",
                                                                  drop, memory=enc))
        y = _sublayer(g, y, 2, "ffn", "Y", lambda a: _ffn(g, flags, a, "mlp", drop))         # (B, T_dec, d)
    y = _stack_output(g, "decoder", y, drop)
    return lm_head(g, flags, y)

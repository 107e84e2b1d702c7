"""Kosmos-2.5 (transformers' ``Kosmos2_5ForConditionalGeneration``) for ``families/kosmos2_5.py``:
the XGLM-style decoder of the generic builder (a LayerNorm of the FFN's hidden activations before
fc2, none in the attention), and beside it, held (``ops.Held``: counted, not run):

- ``text_model/model/segment_emb``: two rows of d (``Kosmos2_5TextTransformer``): without an
  image its row 0 is added to every position (run: a learned bias of d on the embeddings), row 1
  is held;
- ``vision_model`` (``Kosmos2_5VisionModel``, Pix2Struct's encoder): ``patch_projection``
  Linear(patch_embed_hidden_size, d_v) with bias, row and column tables of max_num_patches rows,
  L_v layers of two weight-only LayerNorms, attention q/k/v/o of h_v·d_hv without biases and a
  gated MLP wi_0, wi_1 (d_v -> d_ff_v), wo without biases; a final weight-only LayerNorm;
- ``image_to_text_projection``: dense Linear(d_v, d) with bias, n_q latent queries of d and the
  attention x_attn (q/k/v/out of d with biases).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import L_v, d, d_ff_v, d_v
from ...graph import roles as R
from .vlm_held import _held, _int, _linear, build_with


def _kosmos2_5(g, flags):
    _held(g, "text_model/model/segment_emb_image_row", ops.Embedding(sympy.Integer(1), d), d, "segment row 1 (images)")
    v = "vision_model"
    patch, rows = _int(flags, "tower_patch_width"), _int(flags, "tower_positions")
    _linear(g, f"{v}/embeddings/patch_projection", patch, d_v, True)
    for n in ("row_embedder", "column_embedder"):
        _held(g, f"{v}/embeddings/{n}", ops.Embedding(rows, d_v), d_v, n)
    inner = _int(flags, "tower_heads") * _int(flags, "tower_head_dim")
    with g.repeat(f"{v}/encoder/layer", L_v, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("pre_attention_layer_norm", "pre_mlp_layer_norm"):
            _held(g, n, ops.ChannelScale(d_v), d_v, n)
        for n in ("query", "key", "value"):
            _linear(g, f"attention/{n}", d_v, inner, False)
        _linear(g, "attention/output", inner, d_v, False)
        for n in ("wi_0", "wi_1"):
            _linear(g, f"mlp/{n}", d_v, d_ff_v, False)
        _linear(g, "mlp/wo", d_ff_v, d_v, False)
    _held(g, f"{v}/layernorm", ops.ChannelScale(d_v), d_v, "layernorm")
    p = "image_to_text_projection"
    _linear(g, f"{p}/dense", d_v, d, True)
    _held(g, f"{p}/latent_query", ops.Embedding(_int(flags, "queries"), d), d, "latent queries")
    for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
        _linear(g, f"{p}/x_attn/{n}", d, d, True)


def _segment(g, x):
    # segment_emb row 0, added to every position of a sequence without images
    return g.op("embedding/segment", ops.ChannelBias(d), x, role=R.TOKEN_TYPE_EMBEDDING, label="+ segment row 0")


def build(flags, bound, name="kosmos-2.5"):
    return build_with(flags, bound, name, _kosmos2_5, embeddings=_segment)

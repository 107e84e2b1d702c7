"""T5Gemma 2 (transformers' ``T5Gemma2ForConditionalGeneration``) for ``families/t5gemma2.py``: the
decoder's layers as Gemma 3's block of the generic builder (``T5Gemma2MergedAttention`` holds the
same q/k/v/o and per-head norms as a self-attention), and held beside it the encoder:

- ``model/encoder/text_model``: L_e Gemma 3 layers of the encoder's widths (q/k/v/o, per-head
  RMSNorms q_norm, k_norm, four RMSNorms of d, a gated MLP), its final RMSNorm, and the token table
  when the embeddings are untied (tied: the decoder's, counted once);
- the ``eoi_embedding`` vector of d of each token table (tied: one);
- ``model/encoder/vision_tower`` (``SiglipVisionModel``): a P×P patch convolution with bias, a
  position table of (S_img/P)² rows, L_v layers (two LayerNorms, q/k/v/o and fc1, fc2 with biases),
  ``post_layernorm``, and with vision_use_head the attention-pooling head (a probe vector,
  ``nn.MultiheadAttention`` of d_v with biases, a LayerNorm, the MLP);
- ``model/encoder/multi_modal_projector``: the d_v × d projection matrix and an RMSNorm of d_v.

The decoder cross-attends to the encoder in every layer: a forward is not modelled (any request with
a sequence length is refused in one line); the parameters are exact.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import C_img, L_v, N_img, P_patch, S_img, T, d, d_ff_v, d_v
from ...graph import roles as R
from ...graph.arch import Builder
from .decoder import build as decoder_build
from .vlm_held import _held, _int, _linear


FORWARD = ("T5Gemma 2's decoder reads the encoder's output in every layer's merged attention: its forward is not "
           "modelled, only its parameters")


def _text_encoder(g, flags):
    e = "model/encoder/text_model"
    de, ff, heads, kv, dh = (_int(flags, k) for k in ("enc_d", "enc_ff", "enc_heads", "enc_kv_heads", "enc_head_dim"))
    bias = bool(flags["enc_bias"])
    with g.repeat(f"{e}/layers", _int(flags, "enc_layers"), label="encoder layer (held)", role=R.STACK,
                  length=sympy.Integer(1)):
        _linear(g, "self_attn/q_proj", de, heads * dh, bias)
        _linear(g, "self_attn/k_proj", de, kv * dh, bias)
        _linear(g, "self_attn/v_proj", de, kv * dh, bias)
        _linear(g, "self_attn/o_proj", heads * dh, de, bias)
        for n in ("q_norm", "k_norm"):
            _held(g, f"self_attn/{n}", ops.RMSNorm(dh), dh, n)
        for n in ("pre_self_attn_layernorm", "post_self_attn_layernorm", "pre_feedforward_layernorm",
                  "post_feedforward_layernorm"):
            _held(g, n, ops.RMSNorm(de), de, n)
        for n in ("gate_proj", "up_proj"):
            _linear(g, f"mlp/{n}", de, ff, False)
        _linear(g, "mlp/down_proj", ff, de, False)
    _held(g, f"{e}/norm", ops.RMSNorm(de), de, "norm", unpriced=FORWARD)
    eoi = 1 if flags["tied"] else 2
    _held(g, f"{e}/embed_tokens/eoi_embedding", ops.Embedding(sympy.Integer(eoi), d), d, "eoi vectors")
    if not flags["tied"]:
        _held(g, f"{e}/embed_tokens", ops.Embedding(_int(flags, "enc_vocab"), de), de, "encoder token table")


def _vision(g, flags):
    v = "model/encoder/vision_tower/vision_model"
    _linear(g, f"{v}/embeddings/patch_embedding", C_img * P_patch ** 2, d_v, True)  # Conv2d P×P, stride P
    _held(g, f"{v}/embeddings/position_embedding", ops.Embedding((S_img / P_patch) ** 2, d_v), d_v, "positions")

    def layer():
        _linear(g, "mlp/fc1", d_v, d_ff_v, True)
        _linear(g, "mlp/fc2", d_ff_v, d_v, True)

    with g.repeat(f"{v}/encoder/layers", L_v, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("layer_norm1", "layer_norm2"):
            _held(g, n, ops.LayerNorm(d_v), d_v, n)
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            _linear(g, f"self_attn/{n}", d_v, d_v, True)
        layer()
    _held(g, f"{v}/post_layernorm", ops.LayerNorm(d_v), d_v, "post_layernorm")
    if flags["vision_head"]:
        _held(g, f"{v}/head/probe", ops.ChannelScale(d_v), d_v, "probe")
        _linear(g, f"{v}/head/attention/in_proj", d_v, 3 * d_v, True)
        _linear(g, f"{v}/head/attention/out_proj", d_v, d_v, True)
        _held(g, f"{v}/head/layernorm", ops.LayerNorm(d_v), d_v, "layernorm")
        _linear(g, f"{v}/head/mlp/fc1", d_v, d_ff_v, True)
        _linear(g, f"{v}/head/mlp/fc2", d_ff_v, d_v, True)
    p = "model/encoder/multi_modal_projector"
    _linear(g, f"{p}/mm_input_projection_weight", d_v, d, False)
    _held(g, f"{p}/mm_soft_emb_norm", ops.RMSNorm(d_v), d_v, "mm_soft_emb_norm")


def build(flags, bound, name="t5gemma2"):
    arch = decoder_build(flags, bound, name=name)
    g = Builder(arch.name, declared_roles=True)
    g.graph, g.groups, g.order, g.constraints = arch.graph, dict(arch.groups), list(arch.order), list(arch.constraints)
    _text_encoder(g, flags)
    _vision(g, flags)
    g.require("le", N_img, "the cost of an image is not modelled for t5gemma2: N_img must be 0",
              id="images_not_modelled")
    g.require("le", T, FORWARD, id="forward_not_modelled")
    return g.build(output=arch.output, loss=arch.loss, flags=arch.flags)

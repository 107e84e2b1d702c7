"""PP-FormulaNet (transformers' ``PPFormulaNetForConditionalGeneration``) for
``families/pp_formulanet.py``: the mBART-style decoder of ``blocks/seq2seq_decoder.py`` (pre-norm,
learned positions with 2 extra rows, ``layernorm_embedding``, each layer's cross-attention held) and,
held beside it, ``PPFormulaNetVisionModel`` (SAM's ViT-Det encoder):

- ``patch_embed``: a P×P convolution with bias; ``pos_embed`` ((S_img/P)² · d_v, use_abs_pos);
- L_v layers: two LayerNorms, ``qkv`` (d_v -> 3·d_v, bias by qkv_bias), ``proj`` with bias, the
  relative position tables ``rel_pos_h``, ``rel_pos_w`` of (2·n - 1) × d_v/h_v each (use_rel_pos;
  n the window side, or S_img/P in the global layers of global_attn_indexes), and the MLP ``lin1``,
  ``lin2`` with biases;
- ``neck``: a 1×1 convolution d_v -> c_out and a 3×3 c_out -> c_out without biases, each followed
  by a LayerNorm of c_out;
- ``multi_modal_projector``: 3×3 stride-2 convolutions c_in -> c_mid -> c_post without biases, then
  Linear(c_post, c_post) and Linear(c_post, decoder_hidden_size) with biases.

The decoder reads the encoder's output in every layer's cross-attention: a forward is not modelled
(any request with a sequence length is refused in one line); the parameters are exact.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import C_img, L_v, N_img, P_patch, S_img, T, d_ff_v, d_v
from ...graph import roles as R
from ...graph.arch import Builder
from .seq2seq_decoder import build as decoder_build
from .vlm_held import _held, _int, _linear


FORWARD = ("PP-FormulaNet's decoder reads the image encoder's output in every layer's cross-attention: its forward "
           "is not modelled, only its parameters")


def _layers(g, path, count, flags, side):
    heads, bias = _int(flags, "tower_heads"), bool(flags["tower_qkv_bias"])
    with g.repeat(path, count, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("layer_norm1", "layer_norm2"):
            _held(g, n, ops.LayerNorm(d_v), d_v, n)
        _linear(g, "attn/qkv", d_v, 3 * d_v, bias)
        _linear(g, "attn/proj", d_v, d_v, True)
        if flags["tower_rel_pos"]:
            for n in ("rel_pos_h", "rel_pos_w"):
                _held(g, f"attn/{n}", ops.Embedding(2 * side - 1, d_v / heads), d_v / heads, n)
        _linear(g, "mlp/lin1", d_v, d_ff_v, True)
        _linear(g, "mlp/lin2", d_ff_v, d_v, True)


def _encoder(g, flags):
    e = "model/encoder"
    _linear(g, f"{e}/patch_embed/projection", C_img * P_patch ** 2, d_v, True)  # Conv2d P×P, stride P
    grid = S_img / P_patch
    if flags["tower_abs_pos"]:
        _held(g, f"{e}/pos_embed", ops.Embedding(grid ** 2, d_v), d_v, "positions")
    n_global = _int(flags, "tower_global")
    _layers(g, f"{e}/layers", L_v - n_global, flags, _int(flags, "tower_window"))
    _layers(g, f"{e}/global_layers", n_global, flags, grid)
    c_out, c_in, c_mid, c_post = (_int(flags, k) for k in ("neck_out", "post_in", "post_mid", "post_out"))
    _linear(g, f"{e}/neck/conv1", d_v, c_out, False)
    _linear(g, f"{e}/neck/conv2", 9 * c_out, c_out, False)
    for n in ("layer_norm1", "layer_norm2"):
        _held(g, f"{e}/neck/{n}", ops.LayerNorm(c_out), c_out, n)
    p = f"{e}/multi_modal_projector"
    _linear(g, f"{p}/conv1", 9 * c_in, c_mid, False)
    _linear(g, f"{p}/conv2", 9 * c_mid, c_post, False)
    _linear(g, f"{p}/linear_1", c_post, c_post, True)
    _linear(g, f"{p}/linear_2", c_post, _int(flags, "post_decoder"), True, unpriced=FORWARD)


def build(flags, bound, name="pp_formulanet"):
    arch = decoder_build(flags, bound, name=name)
    g = Builder(arch.name, declared_roles=True)
    g.graph, g.groups, g.order, g.constraints = arch.graph, dict(arch.groups), list(arch.order), list(arch.constraints)
    _encoder(g, flags)
    g.require("le", N_img, "the cost of an image is not modelled for pp_formulanet: N_img must be 0",
              id="images_not_modelled")
    g.require("le", T, FORWARD, id="forward_not_modelled")
    return g.build(output=arch.output, loss=arch.loss, flags=arch.flags)

"""GOT-OCR 2.0 (Wei et al. 2024, "General OCR Theory"; transformers' ``GotOcr2ForConditionalGeneration``,
PP-Chart2Table's class too): a SAM-style ViTDet vision tower (``GotOcr2VisionEncoder``) and a
convolutional projector beside a Qwen2 decoder. Held: images are not modelled (windowed attention
with decomposed relative positions); the parameters are counted.

The tower: learned absolute positions ((S_img/P_patch)² × d_v, use_abs_pos), a Conv2d patch
embedding with bias, L_v layers of two LayerNorms, a fused QKV projection (biases with qkv_bias),
an output projection and an MLP (lin1, lin2, biases); each layer's decomposed relative positions
(use_rel_pos: rel_pos_h and rel_pos_w of (2·w - 1) × d_v/h_v each, w the window side, or
S_img/P_patch for the global layers); a neck (a 1×1 conv d_v -> O, a LayerNorm, a 3×3 conv O -> O,
a LayerNorm; no conv biases). The projector: two 3×3 stride-2 convs O -> 2O -> d without bias and
a linear map d -> d with bias.
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, C_img, L_v, N_img, P_patch, S_img, d, d_ff_v, d_v, h_v
from ...graph import roles as R
from .decoder import build as decoder_build


def _held(g, path, op, shape, label):
    g.op(path, ops.Held(op, shape), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def _table(g, path, rows, cols, label):
    _held(g, path, ops.AddPositions(rows, cols), (B, rows, cols), label)


def _tower(g, x, flags):
    out, w, glob = (sympy.Integer(flags[k]) for k in ("neck_channels", "window_side", "global_layers"))
    v, m = "vision_tower", "multi_modal_projector"
    side = S_img / P_patch
    if flags["vision_positions"]:
        _table(g, f"{v}/pos_embed", side ** 2, d_v, "absolute positions")
    _held(g, f"{v}/patch_embed/projection", ops.Conv2d(C_img, d_v, P_patch, bias=True), (B, C_img, S_img, S_img),
          "patches (conv P×P, stride P)")
    with g.repeat(f"{v}/layers", L_v, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("layer_norm1", "layer_norm2"):
            _held(g, n, ops.LayerNorm(d_v), (B, d_v), n)
        _held(g, "attn/qkv", ops.Linear(d_v, 3 * d_v, bias=bool(flags["vision_qkv_bias"])), (B, d_v), "qkv")
        _held(g, "attn/proj", ops.Linear(d_v, d_v, bias=True), (B, d_v), "proj")
        _held(g, "mlp/lin1", ops.Linear(d_v, d_ff_v, bias=True), (B, d_v), "lin1")
        _held(g, "mlp/lin2", ops.Linear(d_ff_v, d_v, bias=True), (B, d_ff_v), "lin2")
    if flags["vision_rel_pos"]:
        # rel_pos_h and rel_pos_w: (2w - 1) rows of d_v/h_v in each windowed layer, (2·side - 1) in each global one
        _table(g, f"{v}/layers/attn/rel_pos", 2 * ((L_v - glob) * (2 * w - 1) + glob * (2 * side - 1)), d_v / h_v,
               "relative positions (rel_pos_h, rel_pos_w) of every layer")
    _held(g, f"{v}/neck/conv1", ops.Linear(d_v, out, bias=False), (B, d_v), "neck conv 1×1")
    _held(g, f"{v}/neck/layer_norm1", ops.LayerNorm(out), (B, out), "neck LayerNorm")
    _held(g, f"{v}/neck/conv2", ops.Linear(9 * out, out, bias=False), (B, 9 * out), "neck conv 3×3")
    _held(g, f"{v}/neck/layer_norm2", ops.LayerNorm(out), (B, out), "neck LayerNorm")
    _held(g, f"{m}/conv_upsampler1", ops.Linear(9 * out, 2 * out, bias=False), (B, 9 * out), "conv 3×3 stride 2")
    _held(g, f"{m}/conv_upsampler2", ops.Linear(18 * out, d, bias=False), (B, 18 * out), "conv 3×3 stride 2")
    _held(g, f"{m}/multimodal_projector", ops.Linear(d, d, bias=True), (B, d), "linear")
    g.require("le", N_img, "images are not modelled for GOT-OCR 2.0 (windowed attention with relative positions, "
              "a convolutional projector): N_img must be 0", id="images_not_modelled")
    return x


def build(flags, bound, name="got_ocr2", labels=None):
    return decoder_build(flags, bound, name=name, labels=labels, vision=partial(_tower, flags=flags))

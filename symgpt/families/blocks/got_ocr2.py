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


def held_sam(g, prefix, sam: dict):
    """A SAM ViTDet image encoder (``SamVisionEncoder``, ``GotOcr2VisionEncoder``), held: *sam*
    maps dim, layers, heads, mlp, side (image side in patches), patch, channels, out (the neck's
    channels), window, global (layers attending globally), qkv_bias, abs_pos, rel_pos."""
    dim, layers, side = sam["dim"], sam["layers"], sam["side"]
    if sam["abs_pos"]:
        _table(g, f"{prefix}/pos_embed", side ** 2, dim, "absolute positions")
    img = side * sam["patch"]
    _held(g, f"{prefix}/patch_embed/projection", ops.Conv2d(sam["channels"], dim, sam["patch"], bias=True),
          (B, sam["channels"], img, img), "patches (conv P×P, stride P)")
    with g.repeat(f"{prefix}/layers", layers, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("layer_norm1", "layer_norm2"):
            _held(g, n, ops.LayerNorm(dim), (B, dim), n)
        _held(g, "attn/qkv", ops.Linear(dim, 3 * dim, bias=bool(sam["qkv_bias"])), (B, dim), "qkv")
        _held(g, "attn/proj", ops.Linear(dim, dim, bias=True), (B, dim), "proj")
        _held(g, "mlp/lin1", ops.Linear(dim, sam["mlp"], bias=True), (B, dim), "lin1")
        _held(g, "mlp/lin2", ops.Linear(sam["mlp"], dim, bias=True), (B, sam["mlp"]), "lin2")
    if sam["rel_pos"]:
        # rel_pos_h and rel_pos_w: (2w - 1) rows of dim/heads in each windowed layer, (2·side - 1) in each global one
        glob, w = sam["global"], sam["window"]
        _table(g, f"{prefix}/layers/attn/rel_pos", 2 * ((layers - glob) * (2 * w - 1) + glob * (2 * side - 1)),
               dim / sam["heads"], "relative positions (rel_pos_h, rel_pos_w) of every layer")
    held_neck(g, f"{prefix}/neck", dim, sam["out"])


def held_neck(g, prefix, dim, out):
    """SAM's neck, held: a 1×1 conv dim -> out, a LayerNorm, a 3×3 conv out -> out, a LayerNorm."""
    _held(g, f"{prefix}/conv1", ops.Linear(dim, out, bias=False), (B, dim), "neck conv 1×1")
    _held(g, f"{prefix}/layer_norm1", ops.LayerNorm(out), (B, out), "neck LayerNorm")
    _held(g, f"{prefix}/conv2", ops.Linear(9 * out, out, bias=False), (B, 9 * out), "neck conv 3×3")
    _held(g, f"{prefix}/layer_norm2", ops.LayerNorm(out), (B, out), "neck LayerNorm")


def _tower(g, x, flags):
    out = sympy.Integer(flags["neck_channels"])
    m = "multi_modal_projector"
    held_sam(g, "vision_tower", dict(
        dim=d_v, layers=L_v, heads=h_v, mlp=d_ff_v, side=S_img / P_patch, patch=P_patch, channels=C_img, out=out,
        window=sympy.Integer(flags["window_side"]), qkv_bias=flags["vision_qkv_bias"],
        abs_pos=flags["vision_positions"], rel_pos=flags["vision_rel_pos"],
        **{"global": sympy.Integer(flags["global_layers"])}))
    _held(g, f"{m}/conv_upsampler1", ops.Linear(9 * out, 2 * out, bias=False), (B, 9 * out), "conv 3×3 stride 2")
    _held(g, f"{m}/conv_upsampler2", ops.Linear(18 * out, d, bias=False), (B, 18 * out), "conv 3×3 stride 2")
    _held(g, f"{m}/multimodal_projector", ops.Linear(d, d, bias=True), (B, d), "linear")
    g.require("le", N_img, "images are not modelled for GOT-OCR 2.0 (windowed attention with relative positions, "
              "a convolutional projector): N_img must be 0", id="images_not_modelled")
    return x


def build(flags, bound, name="got_ocr2", labels=None):
    return decoder_build(flags, bound, name=name, labels=labels, vision=partial(_tower, flags=flags))

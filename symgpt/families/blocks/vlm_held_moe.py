"""More held vision towers beside a text decoder of another family, for ``families/vlm_held_moe.py``
(the machinery and the first towers: ``blocks/vlm_towers.py``).

- ``minimax_m3`` (MiniMax-M3-VL; transformers' ``MiniMaxM3VLVisionModel`` and
  ``MiniMaxM3VLMultiModalProjector``): Conv3d patches without bias (C_img·t_p·P²·d_v), a
  LayerNorm ``pre_layrnorm``, L_v CLIP-style layers (LayerNorms layer_norm1, layer_norm2; q, k, v,
  out projections with biases; an MLP fc1 d_v -> d_ff_v -> d_v with biases), no position table (a
  3-D rotary) and no final norm; the projector maps each patch d_v -> f_p -> d (linear_1,
  linear_2), then m×m of them merged m²·d -> f_p -> d (merge_linear_1, merge_linear_2), biases on
  all four, f_p = projector_hidden_size.
- ``step3p7`` (Step3p7; ``Step3p7VisionModel``): Conv2d patches without bias (C_img·P²·d_v), a
  position table of (image_size/P)² rows, a LayerNorm ``pre_layernorm``, L_v layers (LayerNorms
  layernorm_before, layernorm_after; q, k, v, out projections with biases; an MLP fc1, fc2 with
  biases; two layer scales lambda_1, lambda_2 of d_v), then two strided 3×3 Conv2d with biases
  (downsampler1 d_v -> 2·d_v, downsampler2 2·d_v -> 4·d_v) and the projector Linear(4·d_v, d)
  (``multi_modal_projector``, a bias as projector_bias says).
- ``ernie4_5_vl`` (ERNIE 4.5 VL MoE; ``Ernie4_5_VLMoeVisionTransformerPretrainedModel``,
  ``Ernie4_5_VLMoeVariableResolutionResamplerModel``): Linear patches without bias
  (C_img·P²·d_v), L_v blocks (LayerNorms norm1, norm2; qkv and proj with biases; an MLP fc1, fc2
  with biases), a LayerNorm ``ln``; the resampler's spatial_linear (fc1, fc2 of m²·d_v with
  biases, a LayerNorm of m²·d_v), temporal_linear (the same, its fc1 from t_m·m²·d_v), mlp
  Linear(m²·d_v, d) with bias and after_norm (an RMSNorm of d); and, in every MoE layer of the
  decoder, the vision experts a text-only forward does not run (``mlp.vision_moe``: a router of
  E × d, its score bias of E, E SwiGLU experts of width f_v).
- ``unlimited_ocr`` (Unlimited-OCR; ``UnlimitedOcrVisionModel``): a SAM ViTDet encoder (``blocks/
  got_ocr2.py``'s, with its neck) and two strided 3×3 convolutions without bias (out -> c_0 -> c_1);
  a CLIP encoder over SAM's features (a class vector and (image_size/P)² + 1 positions of d_v, a
  LayerNorm pre_layrnorm, L_v layers: LayerNorms, q, k, v, out with biases, fc1, fc2 with biases);
  the projector Linear(c_1 + d_v, d) with bias, and two learned vectors of d (view_separator,
  image_newline).

The image count N_img must be 0: the cost of an image through these towers is not modelled.
"""

from __future__ import annotations

import sympy

from ...core.errors import SymgptError
from ...core.symbols import E, L, C_img, L_v, N_img, P_patch, d, d_ff_v, d_v
from ... import ops
from ...graph import roles as R
from ...graph.arch import Builder
from .vlm_towers import _TOWERS, _audio, _held, _linear


def _minimax_m3(g, flags, m, out):
    tp = sympy.Integer(flags["tower_temporal_patch"])
    _linear(g, "visual/embeddings/proj", C_img * tp * P_patch ** 2, d_v, False, "patches (Conv3d t_p×P×P, no bias)")
    _held(g, "visual/pre_layrnorm", ops.LayerNorm(d_v), d_v, "pre LayerNorm")
    with g.repeat("visual/layers", L_v, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("layer_norm1", "layer_norm2"):
            _held(g, n, ops.LayerNorm(d_v), d_v, n)
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            _linear(g, f"self_attn/{n}", d_v, d_v, True)
        _linear(g, "mlp/fc1", d_v, d_ff_v, True)
        _linear(g, "mlp/fc2", d_ff_v, d_v, True)
    if not isinstance(flags.get("tower_projector_ff"), int) or isinstance(flags["tower_projector_ff"], bool) \
            or flags["tower_projector_ff"] < 1:
        raise SymgptError(f"flag tower_projector_ff must be a positive integer, got {flags.get('tower_projector_ff')!r}")
    ff = sympy.Integer(flags["tower_projector_ff"])
    _linear(g, "projector/linear_1", d_v, ff, True)
    _linear(g, "projector/linear_2", ff, d, True)
    _linear(g, "projector/merge_linear_1", m * m * d, ff, True)
    _linear(g, "projector/merge_linear_2", ff, d, True)


def _step3p7(g, flags, m, out):
    _linear(g, "visual/embeddings/patch_embedding", C_img * P_patch ** 2, d_v, False, "patches (Conv2d P×P, no bias)")
    _held(g, "visual/embeddings/position_embedding", ops.Embedding(sympy.Integer(flags["tower_positions"]), d_v), d_v,
          "positions")
    _held(g, "visual/pre_layernorm", ops.LayerNorm(d_v), d_v, "pre LayerNorm")
    with g.repeat("visual/layers", L_v, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("layernorm_before", "layernorm_after"):
            _held(g, n, ops.LayerNorm(d_v), d_v, n)
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            _linear(g, f"self_attn/{n}", d_v, d_v, True)
        _linear(g, "mlp/fc1", d_v, d_ff_v, True)
        _linear(g, "mlp/fc2", d_ff_v, d_v, True)
        for n in ("lambda_1", "lambda_2"):
            _held(g, n, ops.Embedding(sympy.Integer(1), d_v), d_v, f"{n} (layer scale)")
    _linear(g, "visual/downsampler1", 9 * d_v, 2 * d_v, True, "downsampler1 (Conv2d 3×3, stride 2)")
    _linear(g, "visual/downsampler2", 18 * d_v, 4 * d_v, True, "downsampler2 (Conv2d 3×3, stride 2)")
    _linear(g, "projector/multi_modal_projector", 4 * d_v, d, bool(flags["tower_projector_bias"]))


def _ernie4_5_vl(g, flags, m, out):
    _linear(g, "visual/patch_embed/proj", C_img * P_patch ** 2, d_v, False, "patches (Linear, no bias)")
    with g.repeat("visual/blocks", L_v, label="vision block (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("norm1", "norm2"):
            _held(g, n, ops.LayerNorm(d_v), d_v, n)
        _linear(g, "attn/qkv", d_v, 3 * d_v, True)
        _linear(g, "attn/proj", d_v, d_v, True)
        _linear(g, "mlp/fc1", d_v, d_ff_v, True)
        _linear(g, "mlp/fc2", d_ff_v, d_v, True)
    _held(g, "visual/ln", ops.LayerNorm(d_v), d_v, "final LayerNorm")
    merged, t = m * m * d_v, sympy.Integer(flags["tower_temporal_patch"])
    for name, n_in in (("spatial_linear", merged), ("temporal_linear", t * merged)):
        _linear(g, f"projector/{name}/fc1", n_in, merged, True)
        _linear(g, f"projector/{name}/fc2", merged, merged, True)
        _held(g, f"projector/{name}/ln", ops.LayerNorm(merged), merged, f"{name} LayerNorm")
    _linear(g, "projector/mlp", merged, d, True)
    _held(g, "projector/after_norm", ops.RMSNorm(d), d, "after_norm")
    ff = flags.get("vision_experts_ff")
    if not isinstance(ff, int) or isinstance(ff, bool) or ff < 1:
        raise SymgptError(f"flag vision_experts_ff must be a positive integer, got {ff!r}")
    ff = sympy.Integer(ff)
    moe_layers = L - sympy.Integer(flags.get("dense_layers") or 0)
    with g.repeat("vision_moe", moe_layers, label="vision experts (held)", role=R.STACK, length=sympy.Integer(1)):
        _linear(g, "gate", d, E, False, "vision router")
        _held(g, "gate/moe_statics", ops.Embedding(sympy.Integer(1), E), E, "router score bias")
        _linear(g, "experts/gate_up_proj", d, 2 * E * ff, False, "E experts' gate and up")
        _linear(g, "experts/down_proj", E * ff, d, False, "E experts' down")


def _unlimited_ocr(g, flags, m, out):
    from .got_ocr2 import held_sam

    sam = {k[4:]: sympy.Integer(v) if not isinstance(v, bool) else v for k, v in flags.items()
           if k.startswith("sam_") and v is not None}
    held_sam(g, "visual/sam_encoder", sam)
    c0, c1 = sympy.Integer(flags["sam_down0"]), sympy.Integer(flags["sam_down1"])
    _linear(g, "visual/sam_encoder/proj/conv1", 9 * sam["out"], c0, False, "conv 3×3, stride 2")
    _linear(g, "visual/sam_encoder/proj/conv2", 9 * c0, c1, False, "conv 3×3, stride 2")
    _held(g, "visual/vision_encoder/embeddings/class_embedding", ops.Embedding(sympy.Integer(1), d_v), d_v,
          "class vector")
    _held(g, "visual/vision_encoder/embeddings/position_embedding",
          ops.Embedding(sympy.Integer(flags["tower_positions"]), d_v), d_v, "positions")
    _held(g, "visual/vision_encoder/pre_layrnorm", ops.LayerNorm(d_v), d_v, "pre LayerNorm")
    with g.repeat("visual/vision_encoder/layers", L_v, label="vision layer (held)", role=R.STACK,
                  length=sympy.Integer(1)):
        for n in ("layer_norm1", "layer_norm2"):
            _held(g, n, ops.LayerNorm(d_v), d_v, n)
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            _linear(g, f"self_attn/{n}", d_v, d_v, True)
        _linear(g, "mlp/fc1", d_v, d_ff_v, True)
        _linear(g, "mlp/fc2", d_ff_v, d_v, True)
    _linear(g, "projector/multi_modal_projector", c1 + d_v, d, True)
    for n in ("view_separator", "image_newline"):
        _held(g, f"projector/{n}", ops.Embedding(sympy.Integer(1), d), d, n)


TOWERS = {**_TOWERS, "unlimited_ocr": _unlimited_ocr, "minimax_m3": _minimax_m3, "step3p7": _step3p7, "ernie4_5_vl": _ernie4_5_vl}


def build(flags, bound, name, text):
    """The decoder built by *text* (its family's builder), with the held tower of ``flags["tower"]``."""
    for key in ("tower_temporal_patch", "tower_merge", "tower_out", "tower_heads"):
        if not isinstance(flags.get(key), int) or isinstance(flags[key], bool) or flags[key] < 1:
            raise SymgptError(f"flag {key} must be a positive integer, got {flags.get(key)!r}")
    arch = text(flags, bound, name=name)
    g = Builder(arch.name, declared_roles=True)
    g.graph, g.groups, g.order, g.constraints = arch.graph, dict(arch.groups), list(arch.order), list(arch.constraints)
    TOWERS[flags["tower"]](g, flags, sympy.Integer(flags["tower_merge"]), sympy.Integer(flags["tower_out"]))
    if flags.get("audio_layers"):
        _audio(g, flags, sympy.Integer(flags["tower_out"]))
    g.require("le", N_img, "the cost of an image is not modelled for this vision tower: N_img must be 0 (the forward "
              "over token ids)", id="images_not_modelled")
    return g.build(output=arch.output, loss=arch.loss, flags=arch.flags)

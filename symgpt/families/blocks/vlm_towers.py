"""A text decoder of another family with a vision tower beside it whose parameters are held
(``ops.Held``: counted, not run), for ``families/vlm_towers.py``.

The decoder is built by its own family's builder, then the tower's parameters are declared under
``visual/`` (transformers' ``model.visual``):

- ``qwen3_vl`` (``Qwen3VLVisionModel``): Conv3d patches with bias (C_img·t_p·P²·d_v + d_v), a
  position table (n_pos·d_v), L_v blocks (LayerNorms norm1, norm2 with biases; qkv and proj with
  biases; an MLP linear_fc1 d_v -> d_ff_v -> d_v with biases), the merger (LayerNorm of d_v,
  Linear(m²·d_v, m²·d_v), Linear(m²·d_v, d_out), biases) and n_deep DeepStack mergers (each a
  LayerNorm of m²·d_v and the same two linears).
- ``glm4v`` (``Glm4vVisionModel``): a position table ((image_size/P)²·d_v), Conv3d patches with
  bias, L_v blocks (RMSNorms norm1, norm2; qkv with attention_bias, proj without; a SwiGLU MLP
  of width d_ff_v = out_hidden_size without biases), post_conv_layernorm and post_layernorm
  (RMSNorms of d_v), the downsample Conv2d(d_v, d_out, m, stride m) with bias, and the merger
  (proj d_out × d_out, a LayerNorm of d_out, a SwiGLU of width f_m, no biases).
- ``glm_ocr`` (``GlmOcrVisionModel``): as glm4v without the position table and post_conv_layernorm;
  the block's qkv, proj and MLP take attention_bias; RMSNorms q_norm, k_norm of d_v/h_v per block.

The image count N_img must be 0: the cost of an image through these towers is not modelled.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import B, C_img, L_v, N_img, P_patch, d, d_ff_v, d_v
from ...graph import roles as R
from ...graph.arch import Builder


def _held(g, path, op, width, label):
    g.op(path, ops.Held(op, (B, width)), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def _linear(g, path, n_in, n_out, bias, label=None):
    _held(g, path, ops.Linear(n_in, n_out, bias=bias), n_in, label or path.rsplit("/", 1)[-1])


def _qwen3_vl(g, flags, m, out):
    tp = sympy.Integer(flags["tower_temporal_patch"])
    _linear(g, "visual/patch_embed/proj", C_img * tp * P_patch ** 2, d_v, True, "patches (Conv3d t_p×P×P)")
    if flags["tower_positions"]:
        _held(g, "visual/pos_embed", ops.Embedding(sympy.Integer(flags["tower_positions"]), d_v), d_v, "positions")
    with g.repeat("visual/blocks", L_v, label="vision block (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("norm1", "norm2"):
            _held(g, n, ops.LayerNorm(d_v), d_v, n)
        _linear(g, "attn/qkv", d_v, 3 * d_v, True)
        _linear(g, "attn/proj", d_v, d_v, True)
        _linear(g, "mlp/linear_fc1", d_v, d_ff_v, True)
        _linear(g, "mlp/linear_fc2", d_ff_v, d_v, True)
    merged = m * m * d_v
    for i in range(-1, int(flags["tower_deepstack"] or 0)):
        # the merger (-1), then DeepStack's, whose LayerNorm is over the merged width
        path = "visual/merger" if i < 0 else f"visual/deepstack_merger_list/{i}"
        _held(g, f"{path}/norm", ops.LayerNorm(d_v if i < 0 else merged), d_v if i < 0 else merged, "merger norm")
        _linear(g, f"{path}/linear_fc1", merged, merged, True)
        _linear(g, f"{path}/linear_fc2", merged, out, True)


def _glm(g, flags, m, out):
    ocr = flags["tower"] == "glm_ocr"
    tp, bias = sympy.Integer(flags["tower_temporal_patch"]), bool(flags["tower_bias"])
    if flags["tower_positions"]:
        _held(g, "visual/embeddings/position_embedding",
              ops.Embedding(sympy.Integer(flags["tower_positions"]), d_v), d_v, "positions")
    _linear(g, "visual/patch_embed/proj", C_img * tp * P_patch ** 2, d_v, True, "patches (Conv3d t_p×P×P)")
    with g.repeat("visual/blocks", L_v, label="vision block (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("norm1", "norm2"):
            _held(g, n, ops.RMSNorm(d_v), d_v, n)
        _linear(g, "attn/qkv", d_v, 3 * d_v, bias)
        _linear(g, "attn/proj", d_v, d_v, bias and ocr)
        if ocr:
            head = d_v / sympy.Integer(flags["tower_heads"])
            for n in ("q_norm", "k_norm"):
                _held(g, f"attn/{n}", ops.RMSNorm(head), head, n)
        for n in ("gate_proj", "up_proj"):
            _linear(g, f"mlp/{n}", d_v, d_ff_v, bias and ocr)
        _linear(g, "mlp/down_proj", d_ff_v, d_v, bias and ocr)
    if not ocr:
        _held(g, "visual/post_conv_layernorm", ops.RMSNorm(d_v), d_v, "post-conv RMSNorm")
    _linear(g, "visual/downsample", d_v * m * m, out, True, "downsample (Conv2d m×m, stride m)")
    _held(g, "visual/post_layernorm", ops.RMSNorm(d_v), d_v, "post RMSNorm")
    if not flags["tower_merger_ff"]:
        raise SymgptError(f"the {flags['tower']} tower's patch merger needs its width: set tower_merger_ff")
    ff = sympy.Integer(flags["tower_merger_ff"])
    _linear(g, "visual/merger/proj", out, out, False)
    _held(g, "visual/merger/post_projection_norm", ops.LayerNorm(out), out, "merger LayerNorm")
    for n in ("gate_proj", "up_proj"):
        _linear(g, f"visual/merger/{n}", out, ff, False)
    _linear(g, "visual/merger/down_proj", ff, out, False)


def _siglip(g, flags, m, out):
    tp = sympy.Integer(flags["tower_temporal_patch"])
    _linear(g, "visual/patch_embedding", C_img * tp * P_patch ** 2, d_v, True, "patches (conv P×P)")
    if flags["tower_positions"]:
        _held(g, "visual/position_embedding", ops.Embedding(sympy.Integer(flags["tower_positions"]), d_v), d_v,
              "positions")
    with g.repeat("visual/layers", L_v, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("layer_norm1", "layer_norm2"):
            _held(g, n, ops.LayerNorm(d_v), d_v, n)
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            _linear(g, f"self_attn/{n}", d_v, d_v, True)
        _linear(g, "mlp/fc1", d_v, d_ff_v, True)
        _linear(g, "mlp/fc2", d_ff_v, d_v, True)
    _held(g, "visual/post_layernorm", ops.LayerNorm(d_v), d_v, "post LayerNorm")
    if flags["tower_projector"] == "mlp2":  # VideoLlama3Projector: Linear(d_v, d), GELU, Linear(d, d)
        _linear(g, "projector/readout/0", d_v, d, True)
        _linear(g, "projector/readout/2", d, d, True)
        return
    # PaddleOCR-VL's Projector, Kimi K2.5's mm_projector: a LayerNorm, then m×m patches merged
    # (Cosmos3 Edge's: of width tower_projector_ff, a flag of its family only)
    merged = m * m * d_v
    ff = sympy.Integer(flags["tower_projector_ff"]) if flags.get("tower_projector_ff") else merged
    _held(g, "projector/pre_norm", ops.LayerNorm(d_v), d_v, "projector LayerNorm")
    _linear(g, "projector/linear_1", merged, ff, True)
    _linear(g, "projector/linear_2", ff, d, True)


def _qwen2_5_vl(g, flags, m, out):
    """Qwen2.5-VL's tower (``blocks/qwen_vl.py``) with grouped-query attention: EXAONE 4.5's."""
    tp, heads = sympy.Integer(flags["tower_temporal_patch"]), sympy.Integer(flags["tower_heads"])
    kv = sympy.Integer(flags["tower_kv_heads"] or flags["tower_heads"])
    _linear(g, "visual/patch_embed/proj", C_img * tp * P_patch ** 2, d_v, False, "patches (Conv3d t_p×P×P, no bias)")
    with g.repeat("visual/blocks", L_v, label="vision block (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("norm1", "norm2"):
            _held(g, n, ops.RMSNorm(d_v), d_v, n)
        _linear(g, "attn/qkv", d_v, d_v + 2 * kv * d_v / heads, True)
        _linear(g, "attn/proj", d_v, d_v, True)
        for n in ("gate_proj", "up_proj"):
            _linear(g, f"mlp/{n}", d_v, d_ff_v, True)
        _linear(g, "mlp/down_proj", d_ff_v, d_v, True)
    _held(g, "visual/merger/ln_q", ops.RMSNorm(d_v), d_v, "merger RMSNorm")
    _linear(g, "visual/merger/mlp/0", m * m * d_v, m * m * d_v, True)
    _linear(g, "visual/merger/mlp/2", m * m * d_v, out, True)


def _audio(g, flags, out):
    """Qwen2.5-Omni's audio encoder (``Qwen2_5OmniAudioEncoder``), held: Conv1d(mels, d_a, 3) and
    Conv1d(d_a, d_a, 3) with biases, the begin/end vectors (2 × d_out), layers of a Whisper encoder
    (q, v, out with biases, k without; two LayerNorms; fc1, fc2 with biases), ln_post and proj."""
    for key in ("audio_layers", "audio_d", "audio_ff", "audio_mels"):
        if not isinstance(flags[key], int) or isinstance(flags[key], bool) or flags[key] < 1:
            raise SymgptError(f"flag {key} must be a positive integer, got {flags[key]!r}")
    da, ff, mels = (sympy.Integer(flags[k]) for k in ("audio_d", "audio_ff", "audio_mels"))
    conv = flags.get("audio_conv")
    if conv:  # Qwen3-Omni: Conv2d(1, c, 3, stride 2) and two Conv2d(c, c, 3, stride 2), conv_out without bias
        c, rows = sympy.Integer(conv), ((int(flags["audio_mels"]) + 1) // 2 + 1) // 2
        rows = (rows + 1) // 2
        _linear(g, "audio_tower/conv2d1", sympy.Integer(9), c, True, "Conv2d 3×3, stride 2")
        _linear(g, "audio_tower/conv2d2", 9 * c, c, True, "Conv2d 3×3, stride 2")
        _linear(g, "audio_tower/conv2d3", 9 * c, c, True, "Conv2d 3×3, stride 2")
        _linear(g, "audio_tower/conv_out", c * rows, da, False)
    else:
        _linear(g, "audio_tower/conv1", 3 * mels, da, True, "Conv1d k=3")
        _linear(g, "audio_tower/conv2", 3 * da, da, True, "Conv1d k=3")
        _held(g, "audio_tower/audio_bos_eos_token", ops.Embedding(sympy.Integer(2), out), out, "begin/end vectors")
    with g.repeat("audio_tower/layers", sympy.Integer(flags["audio_layers"]), label="audio layer (held)",
                  role=R.STACK, length=sympy.Integer(1)):
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            _linear(g, f"self_attn/{n}", da, da, n != "k_proj" or bool(conv))
        for n in ("self_attn_layer_norm", "final_layer_norm"):
            _held(g, n, ops.LayerNorm(da), da, n)
        _linear(g, "fc1", da, ff, True)
        _linear(g, "fc2", ff, da, True)
    _held(g, "audio_tower/ln_post", ops.LayerNorm(da), da, "ln_post")
    if conv:
        _linear(g, "audio_tower/proj1", da, da, True)
        _linear(g, "audio_tower/proj2", da, out, True)
    else:
        _linear(g, "audio_tower/proj", da, out, True)


_TOWERS = {"qwen3_vl": _qwen3_vl, "glm4v": _glm, "glm_ocr": _glm, "siglip": _siglip, "qwen2_5_vl": _qwen2_5_vl}


def build(flags, bound, name, text):
    """The decoder built by *text* (its family's builder), with the held tower of ``flags["tower"]``."""
    for key in ("tower_temporal_patch", "tower_merge", "tower_out", "tower_heads"):
        if not isinstance(flags[key], int) or isinstance(flags[key], bool) or flags[key] < 1:
            raise SymgptError(f"flag {key} must be a positive integer, got {flags[key]!r}")
    arch = text(flags, bound, name=name)
    g = Builder(arch.name, declared_roles=True)
    g.graph, g.groups, g.order, g.constraints = arch.graph, dict(arch.groups), list(arch.order), list(arch.constraints)
    _TOWERS[flags["tower"]](g, flags, sympy.Integer(flags["tower_merge"]), sympy.Integer(flags["tower_out"]))
    if flags.get("audio_layers"):
        _audio(g, flags, sympy.Integer(flags["tower_out"]))
    g.require("le", N_img, "the cost of an image is not modelled for this vision tower: N_img must be 0 (the forward "
              "over token ids)", id="images_not_modelled")
    return g.build(output=arch.output, loss=arch.loss, flags=arch.flags)

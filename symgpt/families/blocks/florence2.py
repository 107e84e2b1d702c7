"""Florence-2 (Xiao et al. 2024, "Florence-2: Advancing a Unified Representation for a Variety of
Vision Tasks"; transformers' ``Florence2ForConditionalGeneration``): BART's encoder-decoder
(``blocks/bart.py``) with a held DaViT vision backbone and projector (``ops.Held``: counted, not
run, as the forward over token ids runs none of them).

The backbone (``Florence2VisionBackbone``), per stage of width D, depth n, patch kernel k: a
Conv2d patch embedding (D_prev·D·k² + D; D_prev is in_channels at the first stage) and a LayerNorm
(of D_prev with patch_prenorm, else of D), then n blocks, each a spatial block (window attention)
and a channel block (channel attention), each of those with two depthwise 3 × 3 Conv2d with bias
(10·D each), two LayerNorms, qkv (D -> 3D, bias with qkv_bias), proj (D -> D, bias) and an MLP
(D -> F -> D, biases; F = int(D·mlp_ratio)). The projector: image_projection (D_last -> P, no
bias), a LayerNorm of P, and learned row and column position tables (max_position_embeddings rows
of ⌊D_last/2⌋ and ⌈D_last/2⌉); its temporal table is a fixed buffer.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import B, N_img
from ...graph import roles as R
from ...graph.arch import Builder
from .bart import build as bart_build


def _held(g, path, op, width, label):
    g.op(path, ops.Held(op, (B, width)), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def _linear(g, path, n_in, n_out, bias=True):
    _held(g, path, ops.Linear(n_in, n_out, bias=bias), n_in, path.rsplit("/", 1)[-1])


def stages(spec: str) -> list[tuple[int, int, int, bool, int]]:
    """The stages of flag tower_stages: "D:n:k:prenorm:F" per stage, comma-separated."""
    out = []
    for part in str(spec).split(","):
        bits = part.split(":")
        if len(bits) != 5 or not all(b.isdigit() for b in bits) or bits[3] not in ("0", "1"):
            raise SymgptError(f"flag tower_stages: each stage is D:depth:kernel:prenorm(0|1):mlp_width, got {part!r}")
        D, n, k, pre, F = (int(b) for b in bits)
        if D < 1 or k < 1 or F < 1:
            raise SymgptError(f"flag tower_stages: widths and kernels must be positive, got {part!r}")
        out.append((D, n, k, pre == 1, F))
    return out


def _tower(g, flags):
    v = "model/vision_tower"
    qkv_bias = bool(flags["tower_qkv_bias"])
    prev = sympy.Integer(flags["tower_channels"])
    for i, (D, n, k, pre, F) in enumerate(stages(flags["tower_stages"])):
        Di, Fi = sympy.Integer(D), sympy.Integer(F)
        _held(g, f"{v}/convs/{i}/conv", ops.Linear(prev * k * k, Di, bias=True), prev * k * k, f"stage {i} patches")
        _held(g, f"{v}/convs/{i}/norm", ops.LayerNorm(prev if pre else Di), prev if pre else Di, "patch LayerNorm")
        if n:
            with g.repeat(f"{v}/blocks/{i}", sympy.Integer(n), label=f"stage {i} block (held)", role=R.STACK,
                          length=sympy.Integer(1)):
                for half, attn in (("spatial_block", "window_attn"), ("channel_block", "channel_attn")):
                    for conv in ("conv1", "conv2"):
                        _held(g, f"{half}/{conv}", ops.Linear(sympy.Integer(9), Di, bias=True), sympy.Integer(9),
                              "depthwise Conv2d 3×3")
                    for norm in ("norm1", "norm2"):
                        _held(g, f"{half}/{norm}", ops.LayerNorm(Di), Di, norm)
                    _linear(g, f"{half}/{attn}/qkv", Di, 3 * Di, qkv_bias)
                    _linear(g, f"{half}/{attn}/proj", Di, Di)
                    _linear(g, f"{half}/ffn/fc1", Di, Fi)
                    _linear(g, f"{half}/ffn/fc2", Fi, Di)
        prev = Di
    p = "model/multi_modal_projector"
    out, rows = sympy.Integer(flags["tower_out"]), sympy.Integer(flags["tower_positions"])
    _linear(g, f"{p}/image_projection", prev, out, False)
    _held(g, f"{p}/image_proj_norm", ops.LayerNorm(out), out, "projection LayerNorm")
    half = prev // 2
    _held(g, f"{p}/image_position_embed/row_embeddings", ops.Embedding(rows, half), half, "row positions")
    _held(g, f"{p}/image_position_embed/column_embeddings", ops.Embedding(rows, prev - half), prev - half,
          "column positions")


def build(flags, bound, name="florence2"):
    for key in ("tower_channels", "tower_out", "tower_positions"):
        if not isinstance(flags[key], int) or isinstance(flags[key], bool) or flags[key] < 1:
            raise SymgptError(f"flag {key} must be a positive integer, got {flags[key]!r}")
    stages(flags["tower_stages"])
    arch = bart_build(flags, bound, name="bart")
    g = Builder(name, declared_roles=True)
    g.graph, g.groups, g.order, g.constraints = arch.graph, dict(arch.groups), list(arch.order), list(arch.constraints)
    _tower(g, flags)
    g.require("le", N_img, "the cost of an image is not modelled for Florence-2: N_img must be 0 (the forward over "
              "token ids)", id="images_not_modelled")
    return g.build(output=arch.output, loss=arch.loss, flags=arch.flags)

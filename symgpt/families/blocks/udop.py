"""UDOP (Tang et al. 2023, "Unifying Vision, Text, and Layout for Universal Document Processing";
transformers' ``UdopForConditionalGeneration``): T5's encoder-decoder (``blocks/t5.py``) with the
layout and image modules held (``ops.Held``: counted, not run, as the forward over token ids
without boxes or an image runs none of them): the shared patch embedding (a Conv2d with bias,
C_img·P²·d + d), the decoder's own patch embedding (the same size, not tied), the encoder's 2D cell
embeddings (x and y tables of max_2d_position_embeddings rows of d) and, in each stack, the
relative biases of relative_bias_args after the first (each buckets × h; the first is tied to
the encoder's layer-0 T5 bias).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import B, C_img, N_img, P_patch, d, h
from ...graph import roles as R
from ...graph.arch import Builder
from .t5 import build as t5_build


def _held(g, path, op, width, label):
    g.op(path, ops.Held(op, (B, width)), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def build(flags, bound, name="udop"):
    for key in ("cell_positions", "layout_biases"):
        if not isinstance(flags[key], int) or isinstance(flags[key], bool) or flags[key] < 0:
            raise SymgptError(f"flag {key} must be a whole number, got {flags[key]!r}")
    arch = t5_build(flags, bound)
    g = Builder(name, declared_roles=True)
    g.graph, g.groups, g.order, g.constraints = arch.graph, dict(arch.groups), list(arch.order), list(arch.constraints)
    patches = C_img * P_patch ** 2
    for path in ("patch_embed/proj", "decoder/embed_patches/proj"):
        _held(g, path, ops.Linear(patches, d, bias=True), patches, "patches (Conv2d P×P)")
    rows = sympy.Integer(flags["cell_positions"])
    for axis in ("x", "y"):
        _held(g, f"encoder/cell_2d_embedding/{axis}_position_embeddings", ops.Embedding(rows, d), d,
              f"{axis} cell positions")
    buckets = sympy.Integer(flags["layout_bias_buckets"])
    for stack in ("encoder", "decoder"):
        for i in range(1, flags["layout_biases"] + 1):
            _held(g, f"{stack}/relative_bias/biases/{i}/relative_attention_bias", ops.Embedding(buckets, h), h,
                  "layout relative bias")
    g.require("le", N_img, "the cost of an image is not modelled for UDOP: N_img must be 0 (the forward over token "
              "ids)", id="images_not_modelled")
    return g.build(output=arch.output, loss=arch.loss, flags=arch.flags)

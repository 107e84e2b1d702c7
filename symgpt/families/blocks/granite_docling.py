"""Granite-Docling (IBM; transformers' ``GraniteDoclingForConditionalGeneration``): Granite's
text decoder with a held SigLIP-style vision tower and its connector (``ops.Held``: counted, not
run, as the forward over token ids runs none of them).

The tower (``GraniteDoclingVisionModel``): a Conv2d patch embedding with bias (C_img·P²·d_v +
d_v), a learned position table of (image_size/P)² rows, L_v layers (LayerNorms layer_norm1,
layer_norm2; q, k, v, out projections and an fc1/fc2 MLP, biases), a post LayerNorm, and the
connector: ln_in (LayerNorm of d_v), a coarse path of pixel-shuffle factor s and, with
use_fine_route, a fine path of factor s/2 (each a projection s²·d_v -> d_out without bias, a fixed
sine-cosine position table, and one DeepStack merger per deepstack_visual_indexes entry: a
LayerNorm of s²·d_v, Linear(s²·d_v, d_out), Linear(d_out, d_out), biases), ln_mid, mlp_fc2
(d_out -> d_out, no bias) and ln_out. With density_router_hidden_size: the density router (att
d_v -> 1, a LayerNorm of d_v, fc1 d_v -> r, fc2 r -> 1, biases).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import B, C_img, L_v, N_img, P_patch, d_ff_v, d_v
from ...graph import roles as R
from ...graph.arch import Builder


def _held(g, path, op, width, label):
    g.op(path, ops.Held(op, (B, width)), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def _linear(g, path, n_in, n_out, bias):
    _held(g, path, ops.Linear(n_in, n_out, bias=bias), n_in, path.rsplit("/", 1)[-1])


def _tower(g, flags):
    v = "model/vision_model"
    out, n_pos = sympy.Integer(flags["tower_out"]), sympy.Integer(flags["tower_positions"])
    _linear(g, f"{v}/embeddings/patch_embedding", C_img * P_patch ** 2, d_v, True)
    _held(g, f"{v}/embeddings/position_embedding", ops.Embedding(n_pos, d_v), d_v, "positions")
    with g.repeat(f"{v}/encoder/layers", L_v, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for name in ("layer_norm1", "layer_norm2"):
            _held(g, name, ops.LayerNorm(d_v), d_v, name)
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            _linear(g, f"self_attn/{name}", d_v, d_v, True)
        _linear(g, "mlp/fc1", d_v, d_ff_v, True)
        _linear(g, "mlp/fc2", d_ff_v, d_v, True)
    _held(g, f"{v}/post_layernorm", ops.LayerNorm(d_v), d_v, "post LayerNorm")
    c = f"{v}/connector"
    _held(g, f"{c}/ln_in", ops.LayerNorm(d_v), d_v, "ln_in")
    paths = [("coarse", flags["pixel_shuffle"])]
    if flags["fine_route"]:
        paths.append(("fine", flags["pixel_shuffle"] // 2))
    for path, s in paths:
        merged = sympy.Integer(s * s) * d_v
        _linear(g, f"{c}/{path}/projection", merged, out, False)
        for i in range(int(flags["tower_deepstack"] or 0)):
            m = f"{c}/{path}/deepstack_mergers/{i}"
            _held(g, f"{m}/layer_norm", ops.LayerNorm(merged), merged, "merger LayerNorm")
            _linear(g, f"{m}/linear_1", merged, out, True)
            _linear(g, f"{m}/linear_2", out, out, True)
    _held(g, f"{c}/ln_mid", ops.LayerNorm(out), out, "ln_mid")
    _linear(g, f"{c}/mlp_fc2", out, out, False)
    _held(g, f"{c}/ln_out", ops.LayerNorm(out), out, "ln_out")
    if flags["density_router"]:
        r = sympy.Integer(flags["density_router"])
        _linear(g, "model/density_router/att", d_v, sympy.Integer(1), True)
        _held(g, "model/density_router/norm", ops.LayerNorm(d_v), d_v, "router LayerNorm")
        _linear(g, "model/density_router/fc1", d_v, r, True)
        _linear(g, "model/density_router/fc2", r, sympy.Integer(1), True)


def build(flags, bound, name, text):
    """Granite's decoder built by *text*, with the held tower and connector."""
    for key in ("tower_out", "tower_positions", "pixel_shuffle"):
        if not isinstance(flags[key], int) or isinstance(flags[key], bool) or flags[key] < 1:
            raise SymgptError(f"flag {key} must be a positive integer, got {flags[key]!r}")
    if flags["fine_route"] and flags["pixel_shuffle"] // 2 < 1:
        raise SymgptError("flag fine_route needs a pixel_shuffle of at least 2")
    arch = text(flags, bound, name=name)
    g = Builder(arch.name, declared_roles=True)
    g.graph, g.groups, g.order, g.constraints = arch.graph, dict(arch.groups), list(arch.order), list(arch.constraints)
    _tower(g, flags)
    g.require("le", N_img, "the cost of an image is not modelled for Granite-Docling: N_img must be 0 (the forward "
              "over token ids)", id="images_not_modelled")
    return g.build(output=arch.output, loss=arch.loss, flags=arch.flags)

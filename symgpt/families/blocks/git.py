"""GIT (Wang et al. 2022, "GIT: A Generative Image-to-text Transformer for Vision and Language";
transformers' ``GitForCausalLM``): a BERT-style text decoder (``blocks/bert.py``: word and learned
position embeddings with a LayerNorm, no token types, post-LN layers run under a causal mask) and
its ``output`` head (d -> V, bias; tied to the word embeddings only with tie_word_embeddings),
with a held CLIP vision tower (``GitVisionModel``: a class embedding, a Conv2d patch embedding
without bias, (S_img/P)² + 1 positions, pre_layrnorm, L_v CLIP layers with biases,
post_layernorm), the visual projection (Linear d_v -> d with bias, a LayerNorm of d) and, with
num_image_with_embedding, one learned d_v vector per image (``img_temporal_embedding``).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import B, C_img, L_v, N_img, P_patch, V, d, d_ff_v, d_v
from ...graph import roles as R
from ...graph.arch import Builder
from .bert import build as bert_build


def _held(g, path, op, width, label):
    g.op(path, ops.Held(op, (B, width)), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def _linear(g, path, n_in, n_out, bias=True):
    _held(g, path, ops.Linear(n_in, n_out, bias=bias), n_in, path.rsplit("/", 1)[-1])


def _tower(g, flags):
    v = "git/image_encoder/vision_model"
    n_pos = sympy.Integer(flags["vision_positions"])
    _held(g, f"{v}/embeddings/class_embedding", ops.Embedding(sympy.Integer(1), d_v), d_v, "class embedding")
    _linear(g, f"{v}/embeddings/patch_embedding", C_img * P_patch ** 2, d_v, False)
    _held(g, f"{v}/embeddings/position_embedding", ops.Embedding(n_pos, d_v), d_v, "positions")
    _held(g, f"{v}/pre_layrnorm", ops.LayerNorm(d_v), d_v, "pre LayerNorm")
    with g.repeat(f"{v}/encoder/layers", L_v, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for name in ("layer_norm1", "layer_norm2"):
            _held(g, name, ops.LayerNorm(d_v), d_v, name)
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            _linear(g, f"self_attn/{name}", d_v, d_v)
        _linear(g, "mlp/fc1", d_v, d_ff_v)
        _linear(g, "mlp/fc2", d_ff_v, d_v)
    _held(g, f"{v}/post_layernorm", ops.LayerNorm(d_v), d_v, "post LayerNorm")
    _linear(g, "git/visual_projection/visual_projection/0", d_v, d)
    _held(g, "git/visual_projection/visual_projection/1", ops.LayerNorm(d), d, "projection LayerNorm")
    if flags["image_embeddings"]:
        _held(g, "git/img_temporal_embedding", ops.Embedding(sympy.Integer(flags["image_embeddings"]), d_v), d_v,
              "per-image vectors")


def build(flags, bound, name="git"):
    if flags["head"] != "none":
        raise SymgptError("git: the head is GIT's own output layer; flag head must stay none")
    if not isinstance(flags["vision_positions"], int) or flags["vision_positions"] < 1:
        raise SymgptError(f"flag vision_positions must be a positive integer, got {flags['vision_positions']!r}")
    arch = bert_build(flags, bound, name="git")
    g = Builder(arch.name, declared_roles=True)
    g.graph, g.groups, g.order, g.constraints = arch.graph, dict(arch.groups), list(arch.order), list(arch.constraints)
    out = g.op("output", ops.Linear(d, V, bias=True, tag="lm_head"), arch.output,
               tie={"weight": g.param("embeddings/word_embeddings")} if flags["tied"] else None, role=R.HEAD,
               label="logits")
    loss = g.op("loss", ops.CrossEntropy(), out, role=R.LOSS, label="loss")
    _tower(g, flags)
    g.require("le", N_img, "the cost of an image is not modelled for GIT: N_img must be 0 (the forward over token "
              "ids)", id="images_not_modelled")
    return g.build(output=out, loss=loss, flags=arch.flags)

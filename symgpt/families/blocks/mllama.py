"""Llama 3.2 Vision (transformers' ``MllamaForCausalLM`` and ``MllamaForConditionalGeneration``):
a Llama decoder whose ``cross_attention_layers`` are gated cross-attention layers
(``MllamaCrossAttentionDecoderLayer``: an RMSNorm, cross-attention with per-head RMSNorms on its
queries and keys, a tanh-gated residual; an RMSNorm, the SwiGLU MLP, a tanh-gated residual) and,
in ``MllamaForConditionalGeneration``, a vision tower (``MllamaVisionModel``) and a linear
projector beside it.

Without the flag ``vision_run``, what is counted is the forward over token ids alone, as transformers runs it: without
``cross_attention_states`` (no image) ``MllamaTextModel`` skips every cross-attention layer, and
``MllamaModel`` runs neither the vision tower nor the projector. Their parameters are declared
(``ops.Held``: held, not run); the L self-attention layers run as Llama's. The token embedding
has vocab_size + 8 rows (``MllamaTextModel.embed_tokens``), the LM head vocab_size.

The vision tower's parameters (``MllamaVisionModel``): a P×P patch convolution without bias, a
class token, a gated position table of n = (S_img/P_patch)² + 1 positions and its tile table
((R+1) rows of tiles·n·d_v, R the supported aspect ratios), two gated aspect-ratio tile tables
((R+1) × tiles·d_v), pre- and post-LayerNorms, L_v local layers (LayerNorm, attention without
biases, LayerNorm, GELU MLP with biases) and the global layers (the same, with two tanh gates),
and the projector ``Linear(vision_output_dim, d)`` with bias.
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, C_img, L_v, N_img, P_patch, S_img, T, d, d_ff, d_ff_v, d_head, d_v, h, h_kv
from ...graph import roles as R
from .decoder import build as decoder_build

#: extra rows of the token embedding (``MllamaTextModel``: ``vocab_size + 8``)
EXTRA_ROWS = 8


def _held(g, path, op, shape, role, label):
    g.op(path, ops.Held(op, shape), role=role, label=f"{label} (not run)")


def _cross_layer(g, dh):
    """One gated cross-attention layer's parameters, held (no image: the layer is skipped)."""
    x = (B, T, d)
    for n, (i, o) in {"q_proj": (d, h * dh), "k_proj": (d, h_kv * dh), "v_proj": (d, h_kv * dh),
                      "o_proj": (h * dh, d)}.items():
        _held(g, f"cross_attn/{n}", ops.Linear(i, o, bias=False), (B, T, i), R.HELD_CROSS_ATTENTION,
              f"cross-attention {n}")
    for n in ("q_norm", "k_norm"):
        _held(g, f"cross_attn/{n}", ops.RMSNorm(dh), (B, T, h, dh), R.HELD_CROSS_ATTENTION, f"cross-attention {n}")
    for n in ("input_layernorm", "post_attention_layernorm"):
        _held(g, n, ops.RMSNorm(d), x, R.HELD_CROSS_ATTENTION, n)
    for n in ("cross_attn_attn_gate", "cross_attn_mlp_gate"):
        _held(g, n, ops.ChannelScale(sympy.Integer(1)), (B, T, 1), R.HELD_CROSS_ATTENTION, f"{n} (tanh gate)")
    for n, (i, o) in {"gate_proj": (d, d_ff), "up_proj": (d, d_ff), "down_proj": (d_ff, d)}.items():
        _held(g, f"mlp/{n}", ops.Linear(i, o, bias=False), (B, T, i), R.HELD_CROSS_ATTENTION, f"mlp {n}")


def _vision_layer(g, gated):
    x = (B, d_v)
    for n in ("input_layernorm", "post_attention_layernorm"):
        _held(g, n, ops.LayerNorm(d_v), x, R.HELD_EMBEDDING, n)
    for n in ("q_proj", "k_proj", "v_proj", "o_proj"):
        _held(g, f"self_attn/{n}", ops.Linear(d_v, d_v, bias=False), x, R.HELD_EMBEDDING, f"attention {n}")
    _held(g, "mlp/fc1", ops.Linear(d_v, d_ff_v), x, R.HELD_EMBEDDING, "mlp fc1")
    _held(g, "mlp/fc2", ops.Linear(d_ff_v, d_v), (B, d_ff_v), R.HELD_EMBEDDING, "mlp fc2")
    if gated:
        for n in ("gate_attn", "gate_ffn"):
            _held(g, n, ops.ChannelScale(sympy.Integer(1)), (B, 1), R.HELD_EMBEDDING, f"{n} (tanh gate)")


def _vision_tower(g, flags):
    """``MllamaVisionModel`` and the projector, held: a forward over token ids runs neither."""
    tiles, ratios = sympy.Integer(flags["max_tiles"]), sympy.Integer(flags["aspect_ratios"])
    n = (S_img / P_patch) ** 2 + 1
    v = "vision_model"
    _held(g, f"{v}/patch_embedding", ops.Conv2d(C_img, d_v, P_patch, bias=False), (B, C_img, S_img, S_img),
          R.HELD_EMBEDDING, "patches (conv P×P, stride P)")
    _held(g, f"{v}/class_embedding", ops.ChannelScale(d_v), (B, d_v), R.HELD_EMBEDDING, "class token")
    p = f"{v}/gated_positional_embedding"
    _held(g, f"{p}/embedding", ops.ChannelScale(n * d_v), (B, n * d_v), R.HELD_EMBEDDING, "position table")
    _held(g, f"{p}/gate", ops.ChannelScale(sympy.Integer(1)), (B, 1), R.HELD_EMBEDDING, "position gate")
    _held(g, f"{p}/tile_embedding", ops.Embedding(ratios + 1, tiles * n * d_v), (B,), R.HELD_EMBEDDING,
          "tile position table")
    for t in ("pre_tile_positional_embedding", "post_tile_positional_embedding"):
        _held(g, f"{v}/{t}/embedding", ops.Embedding(ratios + 1, tiles * d_v), (B,), R.HELD_EMBEDDING,
              f"{t} table")
        _held(g, f"{v}/{t}/gate", ops.ChannelScale(sympy.Integer(1)), (B, 1), R.HELD_EMBEDDING, f"{t} gate")
    for nrm in ("layernorm_pre", "layernorm_post"):
        _held(g, f"{v}/{nrm}", ops.LayerNorm(d_v), (B, d_v), R.HELD_EMBEDDING, nrm)
    with g.repeat(f"{v}/transformer/layers", L_v, label="vision layer (held)", role=R.STACK, length=n):
        _vision_layer(g, gated=False)
    with g.repeat(f"{v}/global_transformer/layers", sympy.Integer(flags["global_layers"]),
                  label="gated global vision layer (held)", role=R.STACK, length=n):
        _vision_layer(g, gated=True)
    out = sympy.Integer(flags["vision_output_dim"])
    _held(g, "multi_modal_projector", ops.Linear(out, d), (B, out), R.HELD_EMBEDDING, "projector")


def _extras(g, x, flags, dh):
    _held(g, "embedding/token_extra_rows", ops.Embedding(sympy.Integer(EXTRA_ROWS), d), (B, T), R.HELD_EMBEDDING,
          f"the token embedding's {EXTRA_ROWS} rows past vocab_size")
    if flags["vision_model"] and flags.get("vision_run"):  # images: blocks/mllama_vision.py
        from .mllama_vision import with_images

        return with_images(g, x, flags, dh)
    if flags["vision_model"]:
        _vision_tower(g, flags)
        g.require("le", N_img, "the cost of an image is not modelled yet for Llama 3.2 Vision: N_img must be 0 "
                  "(the forward over token ids)", id="images_not_modelled")
    with g.repeat("cross_blocks", sympy.Integer(flags["cross_layers"]), label="gated cross-attention layer (held)",
                  role=R.STACK):
        _cross_layer(g, dh)
    return x


def build(flags, bound, name="mllama", labels=None):
    dh = d_head if "d_head" in bound else d / h
    arch = decoder_build(flags, bound, name=name, labels=labels, vision=partial(_extras, flags=flags, dh=dh))
    if flags["vision_model"] and flags.get("vision_run"):  # the tower runs once per request, caches nothing
        from .mllama_vision import PREFIXES

        for path in list(arch.graph.nodes):
            node = arch.graph.nodes[path]
            if path.startswith(PREFIXES) and node.get("kind") == "op":
                node["cached"] = False
    return arch

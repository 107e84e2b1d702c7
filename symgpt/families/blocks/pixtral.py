"""Pixtral's vision tower (Mistral AI 2024, "Pixtral 12B"; transformers' ``PixtralVisionModel``)
and the projector of Mistral 3 / LightOnOCR (``Mistral3MultiModalProjector``,
``LightOnOcrMultiModalProjector``) beside a text decoder.

The tower: a Conv2d patch embedding without bias, an RMSNorm (``ln_pre``), then L_v layers of an
RMSNorm, attention without biases under a 2-D (row, column) rotary, an RMSNorm and a gated MLP
(gate, up, down, no biases); no final norm. Every image of the batch is packed into one sequence
(``torch.cat``) with a block-diagonal mask: transformers' eager and SDPA attention compute the
scores of the whole packed sequence, (B·N_img·n)² per head, the mask zeroing the pairs of two
images; that is what is counted (a varlen flash kernel would compute Σ n² instead).

The projector: an RMSNorm of d_v, the patch merger (each m × m block of an image's patch grid
unfolded into one token of m²·d_v features, ``merging_layer`` back to d_v without bias), then
``linear_1`` (d_v -> d), the activation and ``linear_2`` (d -> d).

Images: N_img square images of S_img × S_img pixels each (Pixtral reads any height and width up
to image_size; one square side is counted), n = (S_img/P_patch)² patches, t = n/m² tokens.
"""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, C_img, N_img, P_patch, S_img, T, d, d_ff_v, d_v, h_v, L_v
from ...graph import roles as R
from .attention import AttentionSpec, Projections, attention
from .encoder_layers import activation
from .ffn import FFNSpec, ffn
from .vlm import PATCHES, with_encoder

def tokens_per_image(flags):
    return PATCHES / sympy.Integer(flags["merge_size"]) ** 2


def pixtral_tower(g, flags, prefix="vision_tower"):
    """``PixtralVisionModel`` over B·N_img images packed into one sequence: (1, B·N_img·n, d_v)."""
    act = activation(flags["vision_activation"])
    px = g.input("pixel_values", (B * N_img, C_img, S_img, S_img), dtype="act", label="pixels",
                 role=R.PIXELS)                                                               # (B·N, C, S, S)
    x = g.op(f"{prefix}/patch_conv", ops.Conv2d(C_img, d_v, P_patch, bias=False), px, role=R.PATCH_EMBEDDING,
             label="patches (conv P×P, stride P, no bias)")                                  # (B·N, d_v, S/P, S/P)
    x = g.op(f"{prefix}/flatten", ops.FlattenPatches(), x, role=R.PATCH_FLATTEN, label="patch sequence")
    x = g.op(f"{prefix}/pack", ops.PackImages(), x, role=R.PATCH_FLATTEN, label="images packed")  # (1, B·N·n, d_v)
    x = g.op(f"{prefix}/ln_pre", ops.RMSNorm(d_v), x, role=R.EMBEDDING_NORM, label="RMSNorm (pre)")
    table = g.op(f"{prefix}/patch_positional_embedding", ops.AxialRotaryTable(d_v / h_v), x,
                 role=R.ROTARY_TABLE, label="cos, sin (row, column)")                        # (2, B·N·n, d_v/h_v)
    with g.repeat(f"{prefix}/transformer/layers", L_v, label="vision layer", carry=x, role=R.STACK,
                  length=B * N_img * PATCHES):
        a = g.op("attention_norm", ops.RMSNorm(d_v), x, role=R.ATTENTION_NORM, label="RMSNorm")
        o = attention(g, a, AttentionSpec(
            d_v, h_v, dh=d_v / h_v, module="attention", causal=False,
            names={"q": "attention/q_proj", "k": "attention/k_proj", "v": "attention/v_proj",
                   "o": "attention/o_proj"},
            projections=Projections(bias=False, out_bias=False)), rotary=table)
        x = g.op("attention_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
        f = g.op("ffn_norm", ops.RMSNorm(d_v), x, role=R.FFN_NORM, label="RMSNorm")
        f = ffn(g, f, FFNSpec(d_v, d_ff_v, act, gated=True, bias=False,
                              names={"gate": "feed_forward/gate_proj", "up": "feed_forward/up_proj",
                                     "act": "feed_forward/act", "mul": "feed_forward/mul",
                                     "down": "feed_forward/down_proj"}))
        x = g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")
    return x


def projector(g, flags, x, prefix="multi_modal_projector"):
    """``Mistral3MultiModalProjector`` (``LightOnOcrMultiModalProjector`` alike)."""
    m = sympy.Integer(flags["merge_size"])
    bias = bool(flags["projector_bias"])
    x = g.op(f"{prefix}/norm", ops.RMSNorm(d_v), x, role=R.VISION_NORM, label="RMSNorm")
    x = g.op(f"{prefix}/patch_merger/unfold", ops.PixelShuffle(m), x, role=R.VISION_POOL,
             label=f"unfold {m}×{m}")                                                         # (1, B·N·t, m²·d_v)
    x = g.op(f"{prefix}/patch_merger/merging_layer", ops.Linear(m * m * d_v, d_v, bias=False), x,
             role=R.VISION_PROJECTOR, label="merging layer")                                 # (1, B·N·t, d_v)
    x = g.op(f"{prefix}/linear_1", ops.Linear(d_v, d, bias=bias), x, role=R.VISION_PROJECTOR, label="linear 1")
    x = g.op(f"{prefix}/act", activation(flags["projector_activation"]), x, role=R.VISION_ACT, label="act")
    return g.op(f"{prefix}/linear_2", ops.Linear(d, d, bias=bias), x, role=R.VISION_PROJECTOR,
                label="linear 2")                                                             # (1, B·N·t, d)


def _vision(g, x, flags, prefixes):
    m = sympy.Integer(flags["merge_size"])
    feats = projector(g, flags, pixtral_tower(g, flags, prefixes[0]), prefixes[1])
    # a config whose grid the merger cannot split still counts its parameters: refused only with images
    g.require("le", N_img * sympy.frac(S_img / P_patch / m), "an image's patch grid side S_img/P_patch must be a "
              f"multiple of the patch merger's side {m} (spatial_merge_size)", id="patches_divide_image")
    g.require("le", N_img * tokens_per_image(flags) - T, "T must count the N_img images' tokens (N_img·t "
              "positions)", id="image_tokens_within_sequence")
    return g.op("merge_image_tokens", ops.ScatterImageTokens(N_img), x, feats, role=R.IMAGE_MERGE,
                label="merge image features")                                                # (B, T, d)


def build(flags, bound, name="mistral3", labels=None, prefixes=("vision_tower", "multi_modal_projector")):
    """*prefixes*: the tower's and the projector's module paths (LightOnOCR: vision_encoder,
    vision_projection)."""
    return with_encoder(flags, bound, name, labels, partial(_vision, flags=flags, prefixes=prefixes),
                        tuple(f"{p}/" for p in prefixes) + ("merge_image_tokens",))

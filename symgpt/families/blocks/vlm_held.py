"""A decoder of the generic builder with modules beside it whose parameters are held (``ops.Held``:
counted, not run), for ``families/vlm_held.py``.

- ``molmo2`` (transformers' ``Molmo2ForConditionalGeneration``): the token embedding's
  ``additional_vocab_size`` extra rows; ``Molmo2VisionModel`` (a position table of n_pos·d_v, a
  linear patch embedding P²·C_img -> d_v with bias, L_v layers of two LayerNorms, attention
  q/k/v/o of h_v heads of width d_hv (k, v: h_kv_v heads), biases by attention_bias, and a GELU
  MLP d_v -> d_ff_v -> d_v with biases); ``Molmo2Adapter`` (``image_pooling_2d``: attention
  whose q/k/v read the n_f concatenated ViT features, n_f·d_a wide, o back to d_a, biases by its
  attention_bias; ``image_projector``: a SwiGLU d_a -> f_a -> text_hidden_size, gate/up biases by mlp_bias).
- ``idefics`` (``IdeficsForVisionText2Text``): ``IdeficsVisionTransformer`` (CLIP's: a class
  vector, a P×P patch convolution without bias, (S_img/P)² + 1 positions, pre- and
  post-LayerNorms, L_v layers with biases), the optional ``IdeficsPerceiverResampler`` (latents
  n_lat·d_v, per block two LayerNorms, q/k/v of h_r·d_r without bias, an output projection, the
  LayerNorm / 4·d_v ReLU MLP without biases; a final LayerNorm), L / interval gated
  cross-attention layers (queries from d, keys and values from d_v, h heads of d/h; per-head
  RMSNorms by qk_layer_norms; two RMSNorms; the SwiGLU MLP; two tanh gates of 1 or d values),
  and the ``additional_vocab_size`` extra rows of the embedding and of the head.
- ``evolla`` (``EvollaForProteinText2Text``): the protein encoder ``EvollaSaProtProteinEncoder``
  (SaProt, an ESM-2-style encoder: token table, L_p post-attention-LayerNorm layers with biases,
  ``emb_layer_norm_after``), ``EvollaSequenceCompressorResampler`` (latents, blocks of LayerNorms,
  to_q / to_kv / to_out and a GELU feed-forward without biases, a LayerNorm of d, a projector d_p ->
  d with bias) and the ``EvollaSequenceAlignerCrossAttention`` adapters of every
  L // aligner_num_add_layers-th layer (query, key_protein, value_protein with biases, an RMSNorm,
  out_proj with aligner_enable_bias, a LayerNorm and GELU feed-forward, two scalar gates), which
  a forward without a protein skips.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import B, C_img, L_v, N_img, P_patch, S_img, T, d, d_ff, d_ff_v, d_v
from ...graph import roles as R
from ...graph.arch import Builder
from .decoder import build as decoder_build


def _held(g, path, op, width, label, role=R.HELD_EMBEDDING, unpriced=None):
    """*op*'s parameters, held; *unpriced*: the reason every forward that would run it is refused."""
    held = ops.Held(op, (B, width)) if unpriced is None else ops.HeldUnpriced(op, (B, width), unpriced)
    g.op(path, held, role=role, label=f"{label} (not run)")


def _linear(g, path, n_in, n_out, bias, role=R.HELD_EMBEDDING, unpriced=None):
    _held(g, path, ops.Linear(n_in, n_out, bias=bias), n_in, path.rsplit("/", 1)[-1], role, unpriced)


IDEFICS_FORWARD = ("IDEFICS runs its gated cross-attention layers over images in every forward (IdeficsModel): its "
                   "forward is not modelled, only its parameters")


def _int(flags, key):
    v = flags[key] or 0  # none: 0
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise SymgptError(f"flag {key} must be a non-negative integer, got {v!r}")
    return sympy.Integer(v)


def _attention(g, path, n_in, heads, kv, dh, out, bias):
    """q/k/v/o projections of *heads* query and *kv* key/value heads of width *dh*."""
    _linear(g, f"{path}/q_proj", n_in, heads * dh, bias)
    _linear(g, f"{path}/k_proj", n_in, kv * dh, bias)
    _linear(g, f"{path}/v_proj", n_in, kv * dh, bias)
    _linear(g, f"{path}/o_proj", heads * dh, out, bias)


def _molmo2(g, flags):
    bias, pos = bool(flags["tower_bias"]), _int(flags, "tower_positions")
    _held(g, "vision_tower/positional_embedding", ops.Embedding(pos, d_v), d_v, "positions")
    _linear(g, "vision_tower/patch_embedding", C_img * P_patch ** 2, d_v, True)
    heads, kv, dh = _int(flags, "tower_heads"), _int(flags, "tower_kv_heads"), _int(flags, "tower_head_dim")
    with g.repeat("vision_tower/layers", L_v, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("layer_norm1", "layer_norm2"):
            _held(g, n, ops.LayerNorm(d_v), d_v, n)
        _attention(g, "self_attn", d_v, heads, kv, dh, d_v, bias)
        _linear(g, "mlp/fc1", d_v, d_ff_v, True)
        _linear(g, "mlp/fc2", d_ff_v, d_v, True)
    da, ff = _int(flags, "adapter_d"), _int(flags, "adapter_ff")
    _attention(g, "multi_modal_projector/image_pooling_2d", _int(flags, "adapter_features") * da,
               _int(flags, "adapter_heads"), _int(flags, "adapter_kv_heads"), _int(flags, "adapter_head_dim"), da,
               bool(flags["adapter_bias"]))
    for n in ("gate_proj", "up_proj"):
        _linear(g, f"multi_modal_projector/image_projector/{n}", da, ff, bool(flags["adapter_mlp_bias"]))
    _linear(g, "multi_modal_projector/image_projector/down_proj", ff, _int(flags, "adapter_out"), False)


def _perceiver(g, flags):
    depth = _int(flags, "resampler_depth")
    if not depth:
        return
    inner = _int(flags, "resampler_heads") * _int(flags, "resampler_head_dim")
    _held(g, "perceiver_resampler/latents", ops.Embedding(_int(flags, "resampler_latents"), d_v), d_v, "latents")
    with g.repeat("perceiver_resampler/blocks", depth, label="resampler block (held)", role=R.STACK,
                  length=sympy.Integer(1)):
        for n in ("context_layer_norm", "latents_layer_norm"):
            _held(g, f"attn/{n}", ops.LayerNorm(d_v), d_v, n)
        if flags["resampler_qk_norms"]:
            dr = _int(flags, "resampler_head_dim")
            for n in ("q_layer_norm", "k_layer_norm"):
                _held(g, f"attn/{n}", ops.LayerNorm(dr), dr, n)
        for n in ("q_proj", "k_proj", "v_proj"):
            _linear(g, f"attn/{n}", d_v, inner, False)
        _linear(g, "attn/output_proj", inner, d_v, False)
        _held(g, "mlp/ln", ops.LayerNorm(d_v), d_v, "ln")
        _linear(g, "mlp/fc", d_v, 4 * d_v, False)
        _linear(g, "mlp/c_proj", 4 * d_v, d_v, False)
    _held(g, "perceiver_resampler/layer_norm", ops.LayerNorm(d_v), d_v, "layer_norm")


def _idefics(g, flags):
    v = "vision_model"
    _held(g, f"{v}/class_embedding", ops.ChannelScale(d_v), d_v, "class vector")
    _linear(g, f"{v}/patch_embedding", C_img * P_patch ** 2, d_v, False)  # Conv2d P×P, stride P, no bias
    _held(g, f"{v}/position_embedding", ops.Embedding((S_img / P_patch) ** 2 + 1, d_v), d_v, "positions")
    for n in ("pre_layrnorm", "post_layernorm"):
        _held(g, f"{v}/{n}", ops.LayerNorm(d_v), d_v, n)
    with g.repeat(f"{v}/layers", L_v, label="vision layer (held)", role=R.STACK, length=sympy.Integer(1)):
        for n in ("layer_norm1", "layer_norm2"):
            _held(g, n, ops.LayerNorm(d_v), d_v, n)
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            _linear(g, f"self_attn/{n}", d_v, d_v, True)
        _linear(g, "mlp/fc1", d_v, d_ff_v, True)
        _linear(g, "mlp/fc2", d_ff_v, d_v, True)
    _perceiver(g, flags)
    cross, X = _int(flags, "cross_layers"), R.HELD_CROSS_ATTENTION
    with g.repeat("gated_cross_attn_layers", cross, label="gated cross-attention layer (held)", role=R.STACK):
        _linear(g, "cross_attn/q_proj", d, d, False, X, unpriced=IDEFICS_FORWARD)
        for n in ("k_proj", "v_proj"):
            _linear(g, f"cross_attn/{n}", d_v, d, False, X)
        _linear(g, "cross_attn/o_proj", d, d, False, X)
        if flags["cross_qk_norms"]:
            dh = d / sympy.Integer(flags["cross_heads"])
            for n in ("q_layer_norm", "k_layer_norm"):
                _held(g, f"cross_attn/{n}", ops.RMSNorm(dh), dh, n, X)
        for n in ("input_layernorm", "post_attention_layernorm"):
            _held(g, n, ops.RMSNorm(d), d, n, X)
        for n in ("gate_proj", "up_proj"):
            _linear(g, f"mlp/{n}", d, d_ff, False, X)
        _linear(g, "mlp/down_proj", d_ff, d, False, X)
        gate = d if flags["alpha_vector"] else sympy.Integer(1)
        for n in ("alpha_cross_attn", "alpha_dense"):
            _held(g, n, ops.ChannelScale(gate), gate, f"{n} (tanh gate)", X)
    g.require("le", T, IDEFICS_FORWARD, id="forward_not_modelled")


def _evolla(g, flags):
    n = {k: _int(flags, k) for k in ("protein_d", "protein_ff", "protein_layers", "protein_vocab", "resampler_depth",
                                     "resampler_heads", "resampler_head_dim", "resampler_latents", "resampler_ff",
                                     "cross_layers", "cross_ff")}
    dp, p = n["protein_d"], "protein_encoder/model"
    _held(g, f"{p}/embeddings/word_embeddings", ops.Embedding(n["protein_vocab"], dp), dp, "protein tokens")
    if flags["protein_positions"]:
        _held(g, f"{p}/embeddings/position_embeddings", ops.Embedding(_int(flags, "protein_positions"), dp), dp,
              "protein positions")
    if flags["protein_norm_before"]:
        _held(g, f"{p}/embeddings/layer_norm", ops.LayerNorm(dp), dp, "layer_norm")
    with g.repeat(f"{p}/encoder/layer", n["protein_layers"], label="protein layer (held)", role=R.STACK,
                  length=sympy.Integer(1)):
        for name in ("query", "key", "value"):
            _linear(g, f"attention/self/{name}", dp, dp, True)
        _linear(g, "attention/output/dense", dp, dp, True)
        _held(g, "attention/LayerNorm", ops.LayerNorm(dp), dp, "LayerNorm")
        _linear(g, "intermediate/dense", dp, n["protein_ff"], True)
        _linear(g, "output/dense", n["protein_ff"], dp, True)
        _held(g, "LayerNorm", ops.LayerNorm(dp), dp, "LayerNorm")
    _held(g, f"{p}/encoder/emb_layer_norm_after", ops.LayerNorm(dp), dp, "emb_layer_norm_after")
    r, inner = "protein_encoder/sequence_compressor_resampler", n["resampler_heads"] * n["resampler_head_dim"]
    _held(g, f"{r}/latents", ops.Embedding(n["resampler_latents"], dp), dp, "latents")
    with g.repeat(f"{r}/layers", n["resampler_depth"], label="resampler block (held)", role=R.STACK,
                  length=sympy.Integer(1)):
        for name in ("attn/norm_media", "attn/norm_latents", "ff/norm"):
            _held(g, name, ops.LayerNorm(dp), dp, name)
        _linear(g, "attn/to_q", dp, inner, False)
        _linear(g, "attn/to_kv", dp, 2 * inner, False)
        _linear(g, "attn/to_out", inner, dp, False)
        _linear(g, "ff/fc1", dp, n["resampler_ff"], False)
        _linear(g, "ff/fc2", n["resampler_ff"], dp, False)
    _held(g, f"{r}/norm", ops.LayerNorm(d), d, "norm")
    _linear(g, f"{r}/protein_projector", dp, d, True)
    X, ff = R.HELD_CROSS_ATTENTION, n["cross_ff"]
    with g.repeat("adapters", n["cross_layers"], label="sequence-aligner cross-attention (held)", role=R.STACK):
        for name in ("query", "key_protein", "value_protein"):
            _linear(g, name, d, d, True, X)
        _held(g, "attention_norm", ops.RMSNorm(d), d, "attention_norm", X)
        _linear(g, "out_proj", d, d, bool(flags["cross_bias"]), X)
        _held(g, "ff/norm", ops.LayerNorm(d), d, "ff norm", X)
        _linear(g, "ff/fc1", d, ff, False, X)
        _linear(g, "ff/fc2", ff, d, False, X)
        for name in ("gate_attention", "gate_ffw"):
            _held(g, name, ops.ChannelScale(sympy.Integer(1)), sympy.Integer(1), f"{name} (tanh gate)", X)


_EXTRAS = {"molmo2": _molmo2, "idefics": _idefics, "evolla": _evolla}


def build(flags, bound, name):
    """The generic decoder for *flags*, with *name*'s held modules and the extra token rows."""
    return build_with(flags, bound, name, _EXTRAS[name])


def build_with(flags, bound, name, extras, embeddings=None):
    """The generic decoder for *flags*, the extra token rows and the held modules *extras* declares;
    *embeddings* (``g, x -> x``): ops that run on the token embeddings (``blocks/decoder.py``'s hook)."""
    arch = decoder_build(flags, bound, name=name, vision=embeddings)
    g = Builder(arch.name, declared_roles=True)
    g.graph, g.groups, g.order, g.constraints = arch.graph, dict(arch.groups), list(arch.order), list(arch.constraints)
    extra = _int(flags, "extra_rows")
    if extra:
        _held(g, "embedding/extra_rows", ops.Embedding(extra, d), d, "the token embedding's extra rows")
        if flags["extra_head_rows"]:
            _linear(g, "lm_head/additional_fc", d, extra, False)
    extras(g, flags)
    if name != "evolla":  # Evolla reads proteins, not images: a protein's cost is not modelled (the notes)
        g.require("le", N_img, f"the cost of an image is not modelled for {name}: N_img must be 0 (the forward "
                  "over token ids)", id="images_not_modelled")
    return g.build(output=arch.output, loss=arch.loss, flags=arch.flags)

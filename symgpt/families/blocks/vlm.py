"""Vision--language models: a ViT-style vision tower (SigLIP, Zhai et al. 2023; CLIP, Radford et
al. 2021) and a multi-modal projector beside a text decoder, whose image features take the places
of the image tokens in the decoder's input (``inputs_embeds.masked_scatter``).

Images: N_img per sequence, each resized by the model's processor to the tower's S_img × S_img
(Gemma 3 and LLaVA-1.5 resize every image, or every pan-and-scan crop, to that side), so the
tower reads (B·N_img, C_img, S_img, S_img) pixels and runs over n = (S_img/P_patch)² patches
(+ 1 class token for CLIP). The tower's own sizes are symbols of their own: d_v, h_v, L_v, d_ff_v.

Tokens per image the decoder sees (a closed form of the sizes and flags):

- Gemma 3 (``Gemma3MultiModalProjector``): the n patches average-pooled in k × k windows,
  t = (S_img/P_patch)² / k² with k = (S_img/P_patch) / √mm_tokens_per_image (896/14 = 64 patches
  a side, k = 4: 256 tokens);
- PaliGemma (``PaliGemmaMultiModalProjector``): every patch, t = (S_img/P_patch)² (224/14 = 16:
  256 tokens);
- LLaVA (``LlavaMultiModalProjector``, ``vision_feature_select_strategy='default'``): the class
  token dropped, t = (S_img/P_patch)² (336/14 = 24: 576 tokens).

The decoder's sequence length T counts these N_img·t image positions (they are tokens of the
prompt: ``input_ids`` holds one image token per position).

A learned position table interpolated to another resolution (``interpolate_pos_encoding``) has
the same parameters; it is not modelled here, since both processors resize to the native side.
The vision tower's keys and values are not cached: the tower runs once per image, in the prefill.
"""

from __future__ import annotations

from functools import partial

from ... import ops
from ...core.symbols import B, C_img, N_img, P_patch, S_img, T, d, d_ff_v, d_v, h_v, L_v
from ...graph import roles as R
from .attention import AttentionSpec, Projections, attention
from .decoder import build as decoder_build
from .decoder_layers import decoder_norm
from .encoder_layers import activation
from .ffn import FFNSpec, ffn

#: the node paths under which the vision tower and projector live
VISION_PREFIXES = ("vision_tower/", "multi_modal_projector/", "merge_image_tokens")

#: patches per image of the tower
PATCHES = (S_img / P_patch) ** 2


def tokens_per_image(flags):
    """The image tokens the decoder sees per image (module docstring)."""
    if flags["vlm_projector"] == "gemma3":
        return PATCHES / flags["image_pool"] ** 2
    if flags["vlm_projector"] == "paligemma":
        return PATCHES
    return PATCHES if flags["drop_cls"] else PATCHES + 1


def _layer(g, x, flags, act):
    a = g.op("layer_norm1", ops.LayerNorm(d_v), x, role=R.ATTENTION_NORM, label="LayerNorm_1")
    o = attention(g, a, AttentionSpec(
        d_v, h_v, dh=d_v / h_v, module="self_attn", causal=False,
        names={"q": "self_attn/q_proj", "k": "self_attn/k_proj", "v": "self_attn/v_proj", "o": "self_attn/out_proj"},
        projections=Projections(bias=True, out_bias=True)))
    x = g.op("attention_add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
    f = g.op("layer_norm2", ops.LayerNorm(d_v), x, role=R.FFN_NORM, label="LayerNorm_2")
    f = ffn(g, f, FFNSpec(d_v, d_ff_v, act, bias=True,
                          names={"up": "mlp/fc1", "act": "mlp/activation_fn", "down": "mlp/fc2"}))
    return g.op("ffn_add", ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")


def vision_tower(g, flags, prefix="vision_tower", count=None, lookup=False):
    """SigLIP's or CLIP's vision transformer (``SiglipVisionModel``, ``CLIPVisionModel``) over
    B·N_img images (*count* images where given: LLaVA-NeXT's crops); returns the tensor the
    projector reads. *prefix*: the tower's module path (Video-LLaVA's image_tower, Idefics3's
    vision_model). *lookup*: the positions are looked up with the ``position_ids`` buffer, whose
    ids the lookup keeps (ops.LookupPositions; the families whose saved tensors are compared);
    "per_image": with ids computed for each image (Idefics3)."""
    clip = flags["vision_tower"] == "clip"
    act = activation(flags["vision_activation"])
    n = PATCHES + 1 if clip else PATCHES
    count = B * N_img if count is None else count
    px = g.input("pixel_values", (count, C_img, S_img, S_img), dtype="act", label="pixels",
                 role=R.PIXELS)                                                               # (B·N, C, S, S)
    x = g.op(f"{prefix}/embeddings/patch_embedding", ops.Conv2d(C_img, d_v, P_patch, bias=not clip), px,
             role=R.PATCH_EMBEDDING, label="patches (conv P×P, stride P)")                   # (B·N, d_v, S/P, S/P)
    x = g.op(f"{prefix}/embeddings/flatten", ops.FlattenPatches(), x, role=R.PATCH_FLATTEN,
             label="patch sequence")                                                          # (B·N, n, d_v)
    if clip:
        x = g.op(f"{prefix}/embeddings/class_embedding", ops.ClassToken(d_v), x, role=R.CLASS_TOKEN,
                 label="[CLS] + patches")                                                     # (B·N, n+1, d_v)
    x = g.op(f"{prefix}/embeddings/position_embedding", _positions(n, lookup), x,
             role=R.POSITION_EMBEDDING, label="+ positions")                                  # (B·N, n, d_v)
    if clip:
        x = g.op(f"{prefix}/pre_layrnorm", ops.LayerNorm(d_v), x, role=R.EMBEDDING_NORM, label="pre-LN")
    with g.repeat(f"{prefix}/encoder/layers", L_v, label="vision layer", carry=x, role=R.STACK, length=n):
        x = _layer(g, x, flags, act)                                                          # (B·N, n, d_v)
    if clip:
        # CLIPVisionTransformer norms only the pooled class token: the weights are held, the
        # hidden states the projector reads are not normed
        cls = g.op(f"{prefix}/first_token", ops.FirstToken(), x, role=R.POOLED_TOKEN, label="X[:, 0]")
        g.op(f"{prefix}/post_layernorm", ops.LayerNorm(d_v), cls, role=R.VISION_NORM, label="post-LN (pooled)")
        return x
    x = g.op(f"{prefix}/post_layernorm", ops.LayerNorm(d_v), x, role=R.VISION_NORM, label="post-LN")
    if flags["vision_head"]:
        _attention_pool(g, x, act, prefix, lookup)
    return x


def _positions(n, lookup):
    if not lookup:
        return ops.AddPositions(n, d_v)
    return ops.LookupPositions(n, d_v, runs=N_img, per_image=lookup == "per_image")


def _attention_pool(g, x, act, prefix="vision_tower", copy=False):
    """SigLIP's multi-head attention-pooling head (``SiglipMultiheadAttentionPoolingHead``): a
    learned probe attends over the patches, then a LayerNorm and an MLP on a residual. Run by
    ``SiglipVisionModel``; its output is not used by the language model. *copy*: ``nn.MultiheadAttention``
    projects a sequence-first copy of the patches (ops.SequenceFirst), which its key projection keeps."""
    p = g.op(f"{prefix}/head/probe_slot", ops.DropTokens(PATCHES), x, role=R.VISION_PROBE,
             label="no positions")                                                            # (B·N, 0, d_v)
    p = g.op(f"{prefix}/head/probe", ops.ClassToken(d_v), p, role=R.VISION_PROBE, label="probe")  # (B·N, 1, d_v)
    o = attention(g, p, AttentionSpec(
        d_v, h_v, dh=d_v / h_v, module=f"{prefix}/head/attention", causal=False,
        names={"q": f"{prefix}/head/attention/in_proj_q", "k": f"{prefix}/head/attention/in_proj_k",
               "v": f"{prefix}/head/attention/in_proj_v", "o": f"{prefix}/head/attention/out_proj"},
        projections=Projections(bias=True, out_bias=True)), memory=g.op(
        f"{prefix}/head/attention/sequence_first", ops.SequenceFirst(), x, role=R.VISION_PROBE,
        label="(n, B·N, d_v) copy") if copy else x)                                                  # (B·N, 1, d_v)
    f = g.op(f"{prefix}/head/layernorm", ops.LayerNorm(d_v), o, role=R.FFN_NORM, label="LayerNorm")
    f = ffn(g, f, FFNSpec(d_v, d_ff_v, act, bias=True,
                          names={"up": f"{prefix}/head/mlp/fc1", "act": f"{prefix}/head/mlp/activation_fn",
                                 "down": f"{prefix}/head/mlp/fc2"}))
    return g.op(f"{prefix}/head/add", ops.Add(), o, f, role=R.FFN_RESIDUAL, label="probe + mlp")


def projector(g, flags, x):
    """The multi-modal projector: vision features (B·N_img, n, d_v) -> (B·N_img, t, d)."""
    if flags["vlm_projector"] == "gemma3":
        x = g.op("multi_modal_projector/avg_pool", ops.AvgPoolPatches(flags["image_pool"]), x,
                 role=R.VISION_POOL, label="avg pool")                                       # (B·N, t, d_v)
        norm = decoder_norm(flags, d_v)
        if not flags.get("image_newline") and norm.kind == "rmsnorm":  # tests/test_activations_vlm.py
            norm = ops.ImageRMSNorm(norm.dim, offset=norm.offset, affine=norm.affine, runs=N_img)
        x = g.op("multi_modal_projector/mm_soft_emb_norm", norm, x, role=R.VISION_NORM, label="RMSNorm")
        return g.op("multi_modal_projector/mm_input_projection", ops.Linear(d_v, d, bias=False), x,
                    role=R.VISION_PROJECTOR, label="projection")                             # (B·N, t, d)
    if flags["vlm_projector"] == "paligemma":  # PaliGemmaMultiModalProjector: one linear with bias
        return g.op("multi_modal_projector/linear", ops.Linear(d_v, d, bias=True), x, role=R.VISION_PROJECTOR,
                    label="projection")                                                       # (B·N, t, d)
    # LLaVA: the class token dropped (vision_feature_select_strategy 'default'), then a 2-layer MLP
    if flags["vision_tower"] == "clip" and flags["drop_cls"]:
        x = g.op("multi_modal_projector/select", ops.DropTokens(1), x, role=R.VISION_SELECT,
                 label="patches (CLS dropped)")                                               # (B·N, n, d_v)
    bias = bool(flags["projector_bias"])
    x = g.op("multi_modal_projector/linear_1", ops.Linear(d_v, d, bias=bias), x, role=R.VISION_PROJECTOR,
             label="linear 1")
    x = g.op("multi_modal_projector/act", activation(flags["projector_activation"]), x, role=R.VISION_ACT,
             label="act")
    return g.op("multi_modal_projector/linear_2", ops.Linear(d, d, bias=bias), x, role=R.VISION_PROJECTOR,
                label="linear 2")                                                             # (B·N, t, d)


def _vision(g, x, flags):
    k = flags.get("feature_layers")
    if k:
        # VipLlavaMultiModalProjector over k layers' features concatenated: held, with images refused
        vision_tower(g, flags)
        p = "multi_modal_projector"
        for path, op, shape in ((f"{p}/projector_layernorm", ops.LayerNorm(k * d_v), (B, k * d_v)),
                                (f"{p}/linear_1", ops.Linear(k * d_v, d, bias=True), (B, k * d_v)),
                                (f"{p}/linear_2", ops.Linear(d, d, bias=True), (B, d))):
            g.op(path, ops.Held(op, shape), role=R.HELD_EMBEDDING, label=f"{path.split('/')[-1]} (not run)")
        g.require("le", N_img, f"images are not modelled for ViP-LLaVA (its projector reads {k} layers' features "
                  "concatenated): N_img must be 0", id="images_not_modelled")
        return x
    if flags.get("image_newline") and flags.get("image_height") and flags.get("image_width"):  # blocks/llava_anyres.py
        from .llava_anyres import anyres_images

        return anyres_images(g, x, flags, (vision_tower, projector))
    if flags.get("image_newline"):
        # LlavaNextModel.image_newline: a (d,) parameter appended after each row of an image's tiles
        g.op("image_newline", ops.Held(ops.ClassToken(d), (B, T, d)), role=R.HELD_EMBEDDING,
             label="image newline (not run)")
        g.require("le", N_img, "LLaVA-NeXT and LLaVA-OneVision tile an image by its resolution: set image_height "
                  "and image_width (pixels) to price images; without them N_img must be 0", id="images_not_modelled")
    compared = not flags.get("image_newline")  # tests/test_activations_vlm.py: LLaVA, Gemma 3, PaliGemma
    feats = projector(g, flags, vision_tower(g, flags, lookup=compared))
    t = tokens_per_image(flags)
    g.require("integer", S_img / P_patch, "the image side S_img must be a multiple of the patch side P_patch",
              id="patches_divide_image")
    g.require("le", N_img * t - T, "T must count the N_img images' tokens (N_img·t positions)",
              id="image_tokens_within_sequence")
    merge = ops.ScatterImageTokens(N_img) if compared else ops.MergeImageTokens()
    return g.op("merge_image_tokens", merge, x, feats, role=R.IMAGE_MERGE,
                label="merge image features")                                                # (B, T, d)


def build(flags, bound, name="vlm", labels=None):
    """A text decoder (the decoder's flags) with a vision tower and projector beside it."""
    return with_encoder(flags, bound, name, labels, partial(_vision, flags=flags), VISION_PREFIXES)


def with_encoder(flags, bound, name, labels, encoder, prefixes):
    """The text decoder with *encoder* (a vision tower, an audio encoder: built after the
    embeddings, its features merged into the sequence) beside it; the encoder's ops, under
    *prefixes*, run once per input in the prefill: nothing of theirs is kept for decode."""
    arch = decoder_build(flags, bound, name=name, labels=labels, vision=encoder)
    for path in list(arch.graph.nodes):
        node = arch.graph.nodes[path]
        if path.startswith(prefixes) and node.get("kind") == "op":
            node["cached"] = False
    return arch

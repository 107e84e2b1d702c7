"""Fuyu (Adept 2023, the Fuyu-8B model card; transformers' ``FuyuForCausalLM``): a Persimmon decoder
whose image tokens are the image's patches, each P_patch × P_patch × C_img pixels flattened by the
processor and mapped by one linear layer with bias (``vision_embed_tokens``) into the token width.

Per image (S_img × S_img pixels, padded by the processor to whole patches): n = (S_img/P_patch)²
patch tokens. The processor also puts a newline token after each row of patches (S_img/P_patch
text tokens per image); T counts every one of them, the patch tokens and the newlines.
"""

from __future__ import annotations


from ... import ops
from ...core.symbols import B, C_img, N_img, P_patch, S_img, T, d
from ...graph import roles as R
from .vlm import with_encoder

#: patch tokens per image
PATCHES = (S_img / P_patch) ** 2


def _vision(g, x):
    width = C_img * P_patch ** 2
    px = g.input("pixel_values", (B * N_img, PATCHES, width), dtype="act", label="image patches", role=R.PIXELS)
    y = g.op("vision_embed_tokens", ops.Linear(width, d, bias=True), px, role=R.PATCH_EMBEDDING,
             label="patch projection")                                                  # (B·N, n, d)
    g.require("integer", S_img / P_patch, "the image side S_img must be a multiple of the patch side P_patch",
              id="patches_divide_image")
    g.require("le", N_img * (PATCHES + S_img / P_patch) - T, "T must count the N_img images' patch and newline "
              "tokens", id="image_tokens_within_sequence")
    return g.op("merge_image_tokens", ops.MergeImageTokens(), x, y, role=R.IMAGE_MERGE, label="merge image patches")


def build(flags, bound, name="fuyu", labels=None):
    return with_encoder(flags, bound, name, labels, _vision, ("vision_embed_tokens", "merge_image_tokens"))

"""LLaVA-NeXT and LLaVA-OneVision with images (the flags ``image_height`` and ``image_width``):
each of the N_img images, of height × width pixels, is tiled by resolution
(``families/llava_anyres.py``: c crops, t tokens); the vision tower runs over all B·N_img·c crops
of S_img × S_img pixels, the projector over each crop's features, and the features are unpadded
to the image's aspect ratio with an image-newline vector after each row of the grid (copies: no
arithmetic), t image positions of T per image.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import B, N_img, P_patch, S_img, T, d
from ...graph import roles as R
from ..llava_anyres import anyres, pinpoints_of


def crops_and_tokens(flags) -> tuple[int, int]:
    """(crops, tokens) of one image of the flags' image_height × image_width pixels."""
    from ...core.errors import SymgptError

    if not flags.get("grid_tiles"):
        raise SymgptError("this config's image_grid_pinpoints are not whole grids of at most 8 × 8 crops of the "
                          "tower's image_size (or its vision_aspect_ratio is not anyres_max_<m>): its tiling is not "
                          "modelled")
    return anyres(flags["image_height"], flags["image_width"], pinpoints_of(flags["grid_tiles"], flags["anyres_tile"]),
                  flags["anyres_tile"], flags["anyres_side"], flags.get("anyres_max"))


def anyres_images(g, x, flags, builders):
    """The images of an any-resolution LLaVA merged among the tokens *x*; *builders* is blocks/vlm.py's
    (vision_tower, projector) (passed in: that module calls this one)."""
    vision_tower, projector = builders
    crops, tokens = crops_and_tokens(flags)
    c, t, side = sympy.Integer(crops), sympy.Integer(tokens), sympy.Integer(flags["anyres_side"])
    g.op("image_newline", ops.Held(ops.ClassToken(d), (B, T, d)), role=R.HELD_EMBEDDING,
         label="image newline (a row copied after each grid row)")
    g.require("le", S_img / P_patch - side, f"the tiling was read for {flags['anyres_side']} features a side: "
              "S_img/P_patch must stay that", id="anyres_side")
    g.require("le", side - S_img / P_patch, f"the tiling was read for {flags['anyres_side']} features a side: "
              "S_img/P_patch must stay that", id="anyres_side_below")
    feats = projector(g, flags, vision_tower(g, flags, count=B * N_img * c))           # (B·N·c, p², d)
    feats = g.op("multi_modal_projector/crops", ops.Regroup(B * N_img, d), feats, role=R.VISION_SELECT,
                 label=f"{crops} crops of an image")                                    # (B·N, c·p², d)
    feats = g.op("multi_modal_projector/pack", ops.PadRows(t - c * side ** 2), feats, role=R.VISION_SELECT,
                 label="unpadded, a newline after each row")                            # (B·N, t, d)
    g.require("le", N_img * t - T, f"T must count the N_img images' tokens ({tokens} each)",
              id="image_tokens_within_sequence")
    return g.op("merge_image_tokens", ops.MergeImageTokens(), x, feats, role=R.IMAGE_MERGE,
                label="merge image features")                                          # (B, T, d)

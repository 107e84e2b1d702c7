"""Any-resolution tiling of LLaVA-NeXT (Liu et al. 2024, "LLaVA-NeXT: Improved reasoning, OCR,
and world knowledge") and LLaVA-OneVision (Li et al. 2024): how many crops of an image of
height × width pixels run through the vision tower, and how many image tokens the decoder sees,
read from transformers 5.24.0 (``image_processing_utils.select_best_resolution``,
``modeling_llava_next.image_size_to_num_patches``, ``get_anyres_image_grid_shape``,
``unpad_image``, ``LlavaNextModel.pack_image_features``, ``LlavaOnevisionModel.pack_image_features``).

With s the tile side (the tower's image_size), p = s / patch_size its feature side and (R_h, R_w)
the pinpoint select_best_resolution picks for (height, width):

- crops c = 1 + ⌈R_h/s⌉·⌈R_w/s⌉ (a base image resized to s × s, and the tiles of the grid);
- the grid's feature map of g_h·p × g_w·p (g_h = R_h // s, g_w = R_w // s) is unpadded to the
  image's aspect ratio: if width/height > (g_w·p)/(g_h·p), rows r = g_h·p − 2·⌊(g_h·p − h')/2⌋ with
  h' = int(round(height·g_w·p/width, 7)) and columns q = g_w·p; otherwise r = g_h·p and
  q = g_w·p − 2·⌊(g_w·p − w')/2⌋ with w' = int(round(width·g_h·p/height, 7));
- LLaVA-OneVision (``vision_aspect_ratio`` anyres_max_m): when r·q > 1.21·m·p² (the ratio
  ρ = √(r·q/(m·p²)) above 1.1) the map is interpolated (bilinear: no matmul) to ⌊r/ρ⌋ × ⌊q/ρ⌋;
- an image-newline vector after each of the r rows: tokens t = p² + r·(q + 1) (the base image's
  p² features first).

The arithmetic is exact (rationals, integer square roots) where transformers computes in floats.
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil, isqrt

from ..core.errors import SymgptError


#: the largest grid side (in crops) the flag grid_tiles can name
GRID_MAX = 8


def grid_mask(pinpoints, tile: int) -> int | None:
    """image_grid_pinpoints ([[h, w], ...] in pixels) as the flag ``grid_tiles``: bit
    8·(h/tile − 1) + (w/tile − 1) set for each pinpoint; None when one is not a whole grid of
    at most 8 × 8 crops of *tile* pixels."""
    mask = 0
    for h, w in pinpoints:
        if h % tile or w % tile or not (1 <= h // tile <= GRID_MAX and 1 <= w // tile <= GRID_MAX):
            return None
        mask |= 1 << (GRID_MAX * (h // tile - 1) + w // tile - 1)
    return mask


def pinpoints_of(mask: int, tile: int) -> tuple[tuple[int, int], ...]:
    """The pinpoints (h, w) in pixels the flag ``grid_tiles`` names, in the order of their bits."""
    return tuple((tile * (1 + i // GRID_MAX), tile * (1 + i % GRID_MAX)) for i in range(GRID_MAX ** 2)
                 if mask >> i & 1)


def _pinpoints(value, where: str):
    ok = isinstance(value, list) and value and all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in p)
        for p in value)
    if not ok:
        raise SymgptError(f"{where}: image_grid_pinpoints must be a list of [height, width] pairs")
    return value


def select_best_resolution(height: int, width: int, pinpoints) -> tuple[int, int]:
    """transformers' ``select_best_resolution``: the pinpoint (h, w) that keeps the most of the
    image's pixels once it is scaled to fit, then the one that wastes the fewest."""
    best, best_eff, best_waste = None, -1, None
    for h, w in pinpoints:
        scale = min(Fraction(w, width), Fraction(h, height))
        eff = min(int(width * scale) * int(height * scale), width * height)
        waste = w * h - eff
        if eff > best_eff or (eff == best_eff and waste < best_waste):
            best, best_eff, best_waste = (h, w), eff, waste
    return best


def _unpad(height: int, width: int, rows: int, cols: int) -> tuple[int, int]:
    """``unpad_image``: the rows and columns of a rows × cols map kept for the image's aspect ratio."""
    if Fraction(width, height) > Fraction(cols, rows):
        new = int(round(Fraction(height * cols, width), 7))
        return rows - 2 * ((rows - new) // 2), cols
    new = int(round(Fraction(width * rows, height), 7))
    return rows, cols - 2 * ((cols - new) // 2)


def anyres(height: int, width: int, pinpoints, tile: int, side: int, max_patches: int | None = None) -> tuple[int, int]:
    """(crops, tokens) of one image of height × width pixels (module docstring): *tile* the tower's
    image_size, *side* its feature side (image_size // patch_size), *max_patches* OneVision's
    anyres_max (None: none, LLaVA-NeXT)."""
    if height < 1 or width < 1:
        raise SymgptError("an image's height and width must be positive")
    bh, bw = select_best_resolution(height, width, pinpoints)
    crops = 1 + ceil(Fraction(bh, tile)) * ceil(Fraction(bw, tile))
    rows, cols = _unpad(height, width, (bh // tile) * side, (bw // tile) * side)
    if max_patches and 100 * rows * cols > 121 * max_patches * side * side:
        # ρ = √(r·q / (m·p²)); ⌊r/ρ⌋ = ⌊√(r²·m·p²/(r·q))⌋ = isqrt(⌊r·m·p²/q⌋), likewise for q
        m = max_patches * side * side
        rows, cols = isqrt(rows * m // cols), isqrt(cols * m // rows)
    return crops, side * side + rows * (cols + 1)


#: LlavaNextConfig's and LlavaOnevisionConfig's image_grid_pinpoints when a config has none
_NEXT_DEFAULT = [[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]]
_ONEVISION_DEFAULT = [[384 * i, 384 * j] for i in range(1, 7) for j in range(1, 7)]


def read_anyres(f, flags: dict, sizes: dict, tile: int, onevision: bool) -> None:
    """The tiling's fields of a LlavaNextConfig or LlavaOnevisionConfig (*tile*: the vision
    config's image_size), and the notes that say how an image is priced."""
    pins = f.cfg.get("image_grid_pinpoints")
    f.used.add("image_grid_pinpoints")
    pins = (_ONEVISION_DEFAULT if onevision else _NEXT_DEFAULT) if pins is None else pins
    flags.update(grid_tiles=grid_mask(_pinpoints(pins, f.where), tile), anyres_tile=tile,
                 anyres_side=sizes["S_img"] // sizes["P_patch"])
    if onevision:
        ratio = f.str("vision_aspect_ratio", "anyres_max_9")
        cap = ratio[len("anyres_max_"):] if ratio.startswith("anyres_max_") else ""
        if cap.isdigit() and int(cap) > 0:
            flags["anyres_max"] = int(cap)
        else:  # transformers reads int(vision_aspect_ratio.strip("anyres_max_")): another form fails there
            flags["grid_tiles"] = None
    name = "LLaVA-OneVision" if onevision else "LLaVA-NeXT"
    f.notes[:] = [n for n in f.notes if not n.startswith(("images: ", "images are not modelled"))]
    f.notes.append(f"images: N_img per sequence (0 here), each tiled by its resolution: --set image_height=H --set "
                   f"image_width=W --set N_img=1 prices images of H × W pixels ({name}'s processor: the "
                   "best-fitting image_grid_pinpoints resolution, a base crop and the grid's crops of "
                   f"{tile} px through the vision tower, the grid's features unpadded to the image's aspect ratio"
                   + (", interpolated down past vision_aspect_ratio" if onevision else "")
                   + ", an image-newline vector after each row); T counts the image tokens "
                   "(families/llava_anyres.py). The image-newline vector (d parameters) is copied, not computed"
                   + ("; each image tiled, as transformers' forward without batch_num_images does (the processor "
                      "tiles only a prompt's single image)" if onevision else ""))


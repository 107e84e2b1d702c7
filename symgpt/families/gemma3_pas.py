"""Gemma 3's pan and scan (Gemma Team 2025, "Gemma 3 Technical Report", Sec. 2.1; transformers
5.24.0's ``Gemma3ImageProcessor.pan_and_scan``, off unless ``do_pan_and_scan``): an image of
height × width pixels whose longer side is at least ``min_ratio`` times the shorter is cut along
it into k crops; the model then reads the image resized whole and each crop resized, 1 + k
images of S_img × S_img, each ``mm_tokens_per_image`` tokens (the processor writes
"Here is the original image <image> and here are some crops to help you see better <image> ...").
So an image costs what 1 + k images cost: set N_img to the sum of 1 + k over a sequence's images.

For a landscape image (width ≥ height): k = min(max_crops, max(2, min(⌊width/height + 1/2⌋,
⌊width/min_crop⌋))) crops of ⌈width/k⌉ × height, none when width/height < min_ratio or a crop's
side would be under min_crop; a portrait image likewise along its height. Exact (rationals) where
transformers computes in floats.
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil, floor

from ..core.errors import SymgptError

#: Gemma3ImageProcessor's defaults: pan_and_scan_min_crop_size, pan_and_scan_max_num_crops,
#: pan_and_scan_min_ratio_to_activate
MIN_CROP, MAX_CROPS, MIN_RATIO = 256, 4, Fraction(6, 5)


def pan_and_scan_crops(height: int, width: int, min_crop: int = MIN_CROP, max_crops: int = MAX_CROPS,
                       min_ratio: Fraction = MIN_RATIO) -> int:
    """The crops k pan and scan cuts an image of height × width pixels into (0: none; the model
    reads 1 + k images)."""
    if height < 1 or width < 1:
        raise SymgptError("an image's height and width must be positive")
    long, short = (width, height) if width >= height else (height, width)
    if Fraction(long, short) < min_ratio:
        return 0
    k = min(max_crops, max(2, min(floor(Fraction(long, short) + Fraction(1, 2)), long // min_crop)))
    if min(ceil(Fraction(long, k)), short) < min_crop:
        return 0
    return k


def images_seen(height: int, width: int, **options) -> int:
    """The images Gemma 3 reads for one image under pan and scan: the whole image and its crops."""
    return 1 + pan_and_scan_crops(height, width, **options)

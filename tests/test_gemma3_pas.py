"""Gemma 3's pan-and-scan crop count (``symgpt/families/gemma3_pas.py``) against transformers'
own ``Gemma3ImageProcessorPil.pan_and_scan``: its source, read from the installed transformers
and run on an image array of each size (PIL and torchvision, which the image processors import,
are not installed here), and a hand-worked example."""

from __future__ import annotations

import ast
import itertools
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import transformers
from symgpt.families.gemma3_pas import images_seen, pan_and_scan_crops

SIZES = [(896, 896), (500, 600), (500, 599), (300, 1000), (1000, 300), (256, 2000), (300, 530), (200, 900),
         (896, 2000), (1024, 1228), (100, 5000), (2000, 520), (600, 2560), (257, 514)]


def _transformers_pan_and_scan():
    path = Path(transformers.__file__).parent / "models" / "gemma3" / "image_processing_pil_gemma3.py"
    tree = ast.parse(path.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Gemma3ImageProcessorPil")
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "pan_and_scan")
    scope = {"math": math, "itertools": itertools, "np": np,
             "get_image_size": lambda image, channel_dim: tuple(image.shape[-2:])}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), str(path), "exec"), scope)
    return scope["pan_and_scan"]


@pytest.mark.parametrize("min_crop,max_crops,ratio", [(256, 4, 1.2), (128, 6, 1.5)])
def test_crops_as_transformers_cuts_them(min_crop, max_crops, ratio):
    cut = _transformers_pan_and_scan()
    for h, w in SIZES:
        crops = cut(None, np.zeros((3, h, w), dtype=np.uint8), min_crop, max_crops, ratio)
        assert pan_and_scan_crops(h, w, min_crop, max_crops, Fraction(ratio).limit_denominator(10)) == len(crops)


def test_hand_worked():
    """896 × 2000 px (height × width): 2000/896 = 2.23, ⌊2.73⌋ = 2 crops (⌊2000/256⌋ = 7 allows
    them, 2 ≤ 4), each 1000 × 896 px (both sides ≥ 256): the image and 2 crops, 3 images of 256
    tokens at Gemma 3's mm_tokens_per_image; a square image is not cut."""
    assert pan_and_scan_crops(896, 2000) == 2 and images_seen(896, 2000) == 3
    assert images_seen(896, 896) == 1

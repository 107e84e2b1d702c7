"""HyperCLOVA X Vision v2 (NAVER Cloud; transformers' ``HyperCLOVAXVisionV2ForConditionalGeneration``):
a HyperCLOVA X decoder with Qwen2.5-VL's vision tower (``blocks/qwen_vl.py``) and a linear projector
with bias (``Linear(out_hidden_size, d)``) beside it, held: the forward over token ids runs neither."""

from __future__ import annotations

from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, d
from ...graph import roles as R
from .decoder import build as decoder_build
from .qwen_vl import _tower


def _vision(g, x, flags):
    x = _tower(g, x, flags)
    out = sympy.Integer(flags["vision_out_dim"])
    g.op("projector", ops.Held(ops.Linear(out, d, bias=True), (B, out)), role=R.HELD_EMBEDDING,
         label="projector (not run)")
    return x


def build(flags, bound, name="hyperclovax_vision", labels=None):
    return decoder_build(flags, bound, name=name, labels=labels, vision=partial(_vision, flags=flags))

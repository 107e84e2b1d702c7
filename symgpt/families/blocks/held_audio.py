"""Audio towers held, not run: their parameters declared (``ops.Held``) at transformers' module
paths, beside a text decoder whose forward over token ids is counted. Used by the speech models
whose audio encoders symgpt does not yet run (Qwen3-ASR's chunked conv-downsampled encoder).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import B
from ...graph import roles as R


def held(g, path, op, width, label):
    """The parameters of *op* (reading rows of *width*), held at *path*."""
    g.op(path, ops.Held(op, (B, width)), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def linear(g, path, n_in, n_out, bias, label=None):
    held(g, path, ops.Linear(n_in, n_out, bias=bias), n_in, label or path.split("/")[-1])


def layer_norm(g, path, width, label=None):
    held(g, path, ops.LayerNorm(width), width, label or path.split("/")[-1])


def refuse_audio(g, N, what):
    g.require("le", N, f"audio input is not modelled for {what} (its audio tower is held, its parameters "
              "counted): N_aud must be 0", id="audio_not_modelled")


def one():
    return sympy.Integer(1)

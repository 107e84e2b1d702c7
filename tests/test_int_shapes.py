"""A builder may declare a dimension as a plain int (a held tower's mel bins, a window): the graph
stores every dimension as a SymPy expression, so every renderer can bind it. Found by the diagram
and the shape table of Qwen3-ASR, whose audio input declared an int dimension (an AttributeError
on ``xreplace``)."""

from __future__ import annotations

from pathlib import Path

import sympy

import symgpt
from symgpt.render.dotparts import _at

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_every_dimension_is_an_expression_and_the_shapes_bind():
    for name in ("qwen3-asr-example-config.json", "granite-speech-example-config.json"):
        m = symgpt.load(str(EXAMPLES / name), B=1, T=512, N_aud=1)
        g = m.arch.graph
        for n in g.nodes:
            a = g.nodes[n]
            if a["kind"] != "param":
                assert all(isinstance(x, sympy.Basic) for x in a["shape"]), (name, n, a["shape"])
        shapes = m.shapes()
        assert shapes and all(all(isinstance(x, sympy.Basic) for x in t.shape) for t in shapes)


def test_a_plain_int_dimension_is_drawn():
    b = {sympy.Symbol("d", integer=True, positive=True): 8}
    assert _at(3, b) == 3 and isinstance(_at(3, b), sympy.Integer)
    assert _at(sympy.Symbol("d", integer=True, positive=True) * 2, b) == 16

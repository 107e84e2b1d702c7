"""The op registry and graph builder are loud: duplicates and missing rules raise."""

from dataclasses import dataclass

import pytest
import sympy

from symgpt import SymgptError
from symgpt.graph.arch import Builder
from symgpt.ops import Linear, MissingRule, Op, register, registered_kinds
from symgpt.core.symbols import B, T, d


def test_registering_a_kind_twice_raises():
    with pytest.raises(SymgptError, match="registered twice"):
        @register
        @dataclass(frozen=True)
        class Again(Op):
            kind = "linear"


def test_an_op_with_no_rule_raises_instead_of_counting_zero():
    @dataclass(frozen=True)
    class Half(Op):
        kind = "half_test_op"

        def shape(self, inputs):
            return inputs[0]

    op = Half()
    with pytest.raises(MissingRule, match="no forward rule"):
        op.forward(((B, T, d),), (B, T, d))
    with pytest.raises(MissingRule, match="no params rule"):
        op.params(((B, T, d),))


def test_unregistered_op_cannot_enter_a_graph():
    @dataclass(frozen=True)
    class Stray(Op):
        kind = "stray_test_op"

    g = Builder("t")
    x = g.input("x", (B, T, d))
    with pytest.raises(SymgptError, match="not registered"):
        g.op("stray", Stray(), x)


def test_builder_rejects_duplicates_and_bad_shapes():
    g = Builder("t")
    x = g.input("x", (B, T, d))
    g.op("a", Linear(d, 2 * d), x)
    with pytest.raises(SymgptError, match="declared twice"):
        g.op("a", Linear(d, 2 * d), x)
    with pytest.raises(SymgptError, match="expects last dimension"):
        g.op("b", Linear(3 * d, d), x)


def test_every_registered_op_defines_every_rule():
    from symgpt.ops.base import _REGISTRY

    for kind in registered_kinds():
        cls = _REGISTRY[kind]
        for rule in ("shape", "params", "forward", "backward", "saved"):
            assert getattr(cls, rule) is not getattr(Op, rule), f"{kind} lacks {rule}"


def test_tying_is_an_edge():
    import symgpt

    g = symgpt.load("gpt2-small").graph
    tied = [(u, v) for u, v, a in g.edges(data=True) if a.get("tied")]
    assert tied == [("embedding/token.weight", "lm_head")]
    untied = symgpt.load("gpt2-small", tied=False).graph
    assert not [1 for *_, a in untied.edges(data=True) if a.get("tied")]
    assert "lm_head.weight" in untied


def test_block_held_once():
    import symgpt

    g = symgpt.load("gpt3-175b").graph
    assert sum(1 for n, a in g.nodes(data=True) if a.get("kind") == "op" and a["group"] == "blocks") < 40
    assert symgpt.load("gpt3-175b").arch.groups["blocks"].repeat == sympy.Symbol("L", integer=True, positive=True)

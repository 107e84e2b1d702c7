"""A repeated group's carried tensor (the residual stream) vs a tensor every copy shares."""

import pytest

from symgpt import SymgptError
from symgpt.derive.walk import loop_invariant
from symgpt.graph.arch import Builder
from symgpt.ops import Embedding, Linear, Mul
from symgpt.core.symbols import B, L, T, V, d


def _arch(carry: bool):
    g = Builder("t")
    ids = g.input("input_ids", (B, T))
    x = g.op("emb", Embedding(V, d), ids)          # (B, T, d): the stream
    side = g.op("side", Embedding(V, d), ids)      # (B, T, d): made once, read by every block
    with g.repeat("blocks", L, carry=x if carry else None):
        y = g.op("mix", Mul(), x, side)
        x = g.op("out", Linear(d, d), y)
    x = g.op("head", Linear(d, V), x)              # what the blocks hand on goes on
    return g.build(output=x)


def test_declared_carry_tells_a_shared_tensor_from_the_stream():
    arch = _arch(carry=True)
    assert loop_invariant(arch, "side", "blocks/mix")       # one tensor for all L copies
    assert not loop_invariant(arch, "emb", "blocks/mix")    # each copy reads its own input


def test_without_a_declaration_the_shape_test_cannot_tell_them_apart():
    arch = _arch(carry=False)
    assert not loop_invariant(arch, "side", "blocks/mix")   # same shape as the stream


def test_carry_must_be_declared():
    g = Builder("t")
    with pytest.raises(SymgptError, match="carried tensor 'nope' is not declared"):
        with g.repeat("blocks", L, carry="nope"):
            pass

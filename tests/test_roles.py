"""Roles: every node of every built-in family says what it is, and consumers can find it."""

import pytest

import symgpt
from symgpt import roles
from symgpt.errors import SymgptError
from symgpt.families import families
from symgpt.graph import Builder
from symgpt import ops
from symgpt.symbols import B, L, T, d, V


#: the encoder, encoder-decoder and vision families: tests/test_encdec_roles.py
ENCDEC = {"bert", "roberta", "distilbert", "t5", "bart", "transformer", "vit"}


@pytest.mark.parametrize("family", sorted(set(families()) - ENCDEC))
@pytest.mark.parametrize("dropout", [False, True])
def test_every_op_has_a_role(family, dropout):
    arch = symgpt.load(family, dropout=dropout).arch
    missing = [n for n, a in arch.ops() if arch.role(n) is None]
    assert missing == []
    assert [g.name for g in arch.stacks()] == ["blocks"]
    assert arch.stacks()[0].repeat == L and arch.stacks()[0].length == T
    # one token embedding, one LM head, keys and values in the stack
    assert len(arch.find(roles.TOKEN_EMBEDDING)) == 1
    assert arch.first(roles.HEAD) == arch.output
    assert arch.find(roles.KEY_HEADS, stack="blocks") and arch.find(roles.VALUE_HEADS, stack="blocks")
    assert arch.stack_of(arch.first(roles.HEAD)) is None


def test_mixture_declares_experts():
    arch = symgpt.load("mixtral").arch
    (experts,) = arch.groups_with(roles.EXPERTS)
    assert arch.find(roles.FFN_UP) == [f"{experts.name}/up"]
    assert arch.stack_of(f"{experts.name}/up") == "blocks"


def test_declared_roles_free_the_paths():
    g = Builder("free")
    ids = g.input("tokens", (B, T), role=roles.TOKENS)
    x = g.op("wte", ops.Embedding(V, d), ids, role=roles.TOKEN_EMBEDDING)
    with g.repeat("h", L, carry=x):
        x = g.op("mlp/c_fc", ops.Linear(d, 4 * d), x, role=roles.FFN_UP)
    arch = g.build(output=x)
    assert arch.find(roles.FFN_UP) == ["h/mlp/c_fc"]
    assert arch.first(roles.TOKEN_EMBEDDING) == "wte"
    assert [s.name for s in arch.stacks()] == ["h"]


def test_unknown_role_is_refused():
    g = Builder("bad")
    ids = g.input("input_ids", (B, T))
    with pytest.raises(SymgptError, match="unknown role"):
        g.op("x", ops.Embedding(V, d), ids, role="attention.qq")

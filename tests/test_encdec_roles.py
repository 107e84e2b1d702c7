"""Roles of the encoder, encoder--decoder and vision families: every op says what it is, each
stack has its own sequence length, cross-attention is found by its own roles and reads the
encoder's output, the relative position bias and the class token are outside the stacks."""

import pytest

import symgpt
from symgpt.graph import roles
from symgpt.core.symbols import L, L_dec, P_patch, S_img, T, T_dec, T_enc

ENCODERS = ("bert", "roberta", "distilbert", "camembert", "xlm-roberta", "data2vec-text", "ernie",
            "electra", "megatron_bert", "xlm_roberta_xl", "roberta_prelayernorm", "bert_generation",
            "roformer", "rembert", "roc_bert", "xmod", "big_bird", "xlm")
ENCDEC = ("t5", "bart", "transformer")


@pytest.mark.parametrize("family", ENCODERS + ENCDEC + ("vit", "seq2seq_decoder"))
@pytest.mark.parametrize("dropout", [False, True])
def test_every_op_has_a_role(family, dropout):
    arch = symgpt.load(family, dropout=dropout).arch
    assert [n for n, a in arch.ops() if arch.role(n) is None] == []
    assert arch.stack_of(arch.output) is None


@pytest.mark.parametrize("family", ENCODERS)
def test_encoders_one_bidirectional_stack(family):
    arch = symgpt.load(family).arch
    (stack,) = arch.stacks()
    assert (stack.repeat, stack.length) == (L, T)
    assert arch.find(roles.MASK) == [] and arch.find(roles.CROSS_SCORES) == []
    (scores,) = arch.find(roles.SCORES)
    assert arch.node(scores)["op"].causal is False
    assert arch.first(roles.HEAD) == arch.output  # the masked-LM decoder
    tied = arch.node(arch.output)["params"]["weight"] == arch.first(roles.TOKEN_EMBEDDING) + ".weight"
    assert tied == arch.flags.get("tied", True)  # RemBERT's decoder is its own


def test_a_decoder_alone_holds_its_cross_attention_and_runs_none():
    """BartForCausalLM and kin: one causal stack over T; each layer's cross-attention (four
    projections and a LayerNorm) is held -- parameters that no tensor reaches and no op reads."""
    arch = symgpt.load("seq2seq_decoder").arch
    (stack,) = arch.stacks()
    assert (stack.repeat, stack.length) == (L, T)
    (scores,) = arch.find(roles.SCORES)
    assert arch.node(scores)["op"].causal is True
    assert arch.find(roles.CROSS_SCORES) == [] and arch.find(roles.CROSS_KEY) == []
    held = arch.find(roles.HELD_CROSS_ATTENTION, stack=stack.name)
    assert len(held) == 5
    for n in held:
        assert arch.inputs_of(n) == [] and list(arch.graph.successors(n)) == []
        assert arch.params_of(n)
    assert all(arch.find(r, stack=stack.name) for r in roles.PLAIN_CACHE)
    assert arch.first(roles.HEAD) == arch.output


@pytest.mark.parametrize("family", ENCDEC)
def test_encoder_decoders_two_stacks_two_lengths(family):
    arch = symgpt.load(family).arch
    enc, dec = arch.stacks()
    assert (enc.repeat, enc.length, dec.repeat, dec.length) == (L, T_enc, L_dec, T_dec)
    self_scores = arch.find(roles.SCORES)
    assert [arch.stack_of(n) for n in self_scores] == [enc.name, dec.name]
    assert [arch.node(n)["op"].causal for n in self_scores] == [False, True]
    (cross,) = arch.find(roles.CROSS_SCORES)
    assert arch.stack_of(cross) == dec.name and arch.shape(cross)[-2:] == (T_dec, T_enc)
    # keys and values of cross-attention come from the encoder's output, made outside the decoder
    for role in (roles.CROSS_KEY, roles.CROSS_VALUE):
        (node,) = arch.find(role)
        (src,) = arch.inputs_of(node)
        assert arch.stack_of(src) != dec.name and arch.shape(src)[1] == T_enc
    assert arch.find(roles.CROSS_QUERY, stack=enc.name) == []
    assert len(arch.find(roles.TOKEN_EMBEDDING)) == 2  # one per stack, one shared table
    assert len(arch.find(roles.TOKENS)) == 2


def test_t5_relative_bias_once_per_stack():
    arch = symgpt.load("t5").arch
    biases = arch.find(roles.RELATIVE_BIAS)
    assert len(biases) == 2 and all(arch.stack_of(b) is None for b in biases)
    assert [arch.node(b)["op"].bidirectional for b in biases] == [True, False]
    assert [arch.stack_of(n) for n in arch.find(roles.POSITION_BIAS)] == ["encoder/block", "decoder/block"]


def test_vit_patches_class_token_and_length():
    arch = symgpt.load("vit").arch
    (stack,) = arch.stacks()
    assert stack.length == (S_img / P_patch) ** 2 + 1
    assert arch.first(roles.PIXELS) == "pixel_values"
    assert arch.first(roles.PATCH_EMBEDDING) and arch.first(roles.CLASS_TOKEN)
    assert arch.first(roles.HEAD) == arch.output == "classifier"
    assert arch.first(roles.POOLED_TOKEN) == "first_token"

"""Inference of encoder--decoders against transformers generating with a cache.

Oracle (tests/oracles/hf_encdec.py ``generation_steps``): the transformers model (the class of the
LM head: ``T5ForConditionalGeneration``, ``BartForConditionalGeneration``) on the meta device
runs a prefill -- the encoder over T_enc tokens and the decoder over a prompt of T_dec tokens,
``use_cache=True`` -- then one decode step with the returned ``EncoderDecoderCache`` and the
encoder's outputs passed back (the encoder does not run again). ``FlopCounterMode`` counts each
call; the cache's bytes are its self- and cross-attention tensors' ``numel * element_size``.
symgpt's ``inference.prefill.flops``, ``inference.decode.flops`` and ``inference.kv_cache``
(fp32) must equal them, with the two lengths and the two stacks' depths varied independently.
"""

import json
from pathlib import Path

import pytest
import sympy

import symgpt
from oracles.hf_encdec import build, generation_steps

CONFIGS = Path(__file__).parent / "configs" / "encdec"
#: config file -> (transformers class, the symgpt flags that match it, its encoder/decoder layer fields)
CASES = {
    "t5-small.json": ("T5ForConditionalGeneration", {}, ("num_layers", "num_decoder_layers")),
    # transformers 5 ties T5's head whatever tie_word_embeddings says; the config's own is untied
    "t5-v1_1-small.json": ("T5ForConditionalGeneration", {"tied": True}, ("num_layers", "num_decoder_layers")),
    "bart-base.json": ("BartForConditionalGeneration", {"head": "lm"}, ("encoder_layers", "decoder_layers")),
}
#: (B, T_enc, T_dec)
LENGTHS = ((2, 8, 5), (2, 5, 8), (1, 3, 3))


def _cut(name, L, L_dec):
    cls, flags, (enc, dec) = CASES[name]
    cfg = json.loads((CONFIGS / name).read_text())
    cfg = {**cfg, enc: L, dec: L_dec}
    cfg.pop("num_hidden_layers", None)  # BART's alias of encoder_layers
    return build(cfg, cls, device="meta"), symgpt.load(CONFIGS / name, L=L, L_dec=L_dec, **flags)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("layers", [(2, 3), (3, 1)])
def test_prefill_decode_and_cache_equal_transformers_generating(name, layers):
    hf, m = _cut(name, *layers)
    for B, T_enc, T_dec in LENGTHS:
        measured = generation_steps(hf, B, T_enc, T_dec)
        mb = m.with_(B=B, T_enc=T_enc, T_dec=T_dec)
        assert mb.quantity("inference.decode.flops") == measured["decode"], (name, layers, B, T_enc, T_dec)
        assert mb.quantity("inference.prefill.flops") == measured["prefill"], (name, layers, B, T_enc, T_dec)
        assert mb.quantity("inference.kv_cache", act_bits=32) == measured["kv_cache"]


@pytest.mark.parametrize("name", ["t5-small", "bart-base"])
def test_the_whole_presets_on_meta(name):
    """The presets whole (six and six layers), against their published configs."""
    hf, _ = _cut(f"{name}.json", 6, 6)
    m = symgpt.load(name, B=2, T_enc=9, T_dec=4)
    measured = generation_steps(hf, 2, 9, 4)
    assert m.quantity("inference.decode.flops") == measured["decode"]
    assert m.quantity("inference.prefill.flops") == measured["prefill"]
    assert m.quantity("inference.kv_cache", act_bits=32) == measured["kv_cache"]


def test_decode_runs_no_encoder_and_reads_both_caches():
    """By hand, for T5 (no biases): a decode step is the decoder alone at one token -- per layer
    Q, K, V, O of self-attention (4 d·h·d_head), Q and O of cross-attention (2 d·h·d_head), the
    FFN (2 d·d_ff), Q·Kᵀ and A·V over T_dec + 1 cached positions and over the T_enc cached
    encoder outputs -- and the LM head; 2 FLOPs per multiply-add. The cache: K and V of both."""
    from symgpt.core.symbols import B, L_dec, T_dec, T_enc, V, d, d_ff, d_head, h

    m = symgpt.load("t5")
    per_layer = 6 * d * h * d_head + 2 * d * d_ff + 2 * h * d_head * (T_dec + 1) + 2 * h * d_head * T_enc
    want = 2 * B * (L_dec * per_layer + d * V)
    assert sympy.expand(m.quantity("inference.decode.flops").expr - want) == 0
    cache = 2 * B * L_dec * h * d_head * (T_dec + T_enc) * 2  # K and V, 16-bit
    assert sympy.expand(m.quantity("inference.kv_cache").expr - cache) == 0
    assert m.quantity("inference.kv_cache", act_bits=32).expr == m.quantity("memory.kv_cache", precision="fp32").expr

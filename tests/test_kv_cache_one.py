"""One KV cache: ``memory.kv_cache`` and ``inference.kv_cache`` price the same tensors
(``symgpt.derive.kvcache``), and both equal what transformers caches.

Oracles: the bytes of every key and value tensor in the cache a transformers model returns with
``use_cache=True`` (tests/oracles/inference.py ``cache_nbytes`` for causal LMs,
tests/oracles/hf_encdec.py ``kv_cache_bytes`` for encoder--decoders); for encoders, what
transformers does: ``BertModel`` forces ``use_cache=False`` unless ``config.is_decoder`` and
returns no cache, ``ViTModel.forward`` takes no cache at all. Under tensor parallelism
(Megatron-LM, Shoeybi et al. 2019) each rank holds the K/V of its h/tp heads, of self- and
cross-attention alike; an MLA latent is one vector per token shared by every head (DeepSeek-V2,
Sec. 2.1.2), so each rank keeps all of it (hand arithmetic below). A decoder with grouped-query
attention: tests/test_inference_hf.py ``test_kv_cache_of_a_tiny_real_model_on_cpu``.
"""

import inspect
import json
from pathlib import Path

import pytest
import sympy
import torch

import symgpt
from oracles.hf_encdec import build, kv_cache_bytes
from oracles.inference import cache_nbytes
from oracles.measure import _hf_model
from test_arch_decoders import _tiny, _tiny_hf

CONFIGS = Path(__file__).parent / "configs"
B, T = 2, 6
T_ENC, T_DEC = 7, 5


def _both(m, bits):
    """(memory.kv_cache, inference.kv_cache) at *bits* per element."""
    precision = {32: "fp32", 16: "bf16"}[bits]
    return (m.quantity("memory.kv_cache", precision=precision).value,
            m.quantity("inference.kv_cache", act_bits=bits).value)


def test_gpt2_on_meta_in_bf16():
    cfg = {**json.loads((CONFIGS / "gpt2.json").read_text()), "n_layer": 2}
    nbytes, bits = cache_nbytes(_hf_model(cfg, "meta", "eager").to(torch.bfloat16), B, T)
    assert bits == 16
    assert _both(symgpt.load(CONFIGS / "gpt2.json", B=B, T=T, L=2), bits) == (nbytes, nbytes)


def test_bert_caches_nothing_as_transformers_does():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=97, hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=40, max_position_embeddings=32)
    with torch.no_grad():
        out = BertModel(cfg).eval()(input_ids=torch.randint(0, 97, (B, T)), use_cache=True)
    assert out.past_key_values is None  # an encoder (is_decoder=False) returns no cache
    m = symgpt.load("bert", L=2, d=16, h=4, V=97, d_ff=40, T_max=32, B=B, T=T)
    assert _both(m, 32) == (0, 0)


def test_vit_takes_no_cache():
    from transformers import ViTModel

    assert "use_cache" not in inspect.signature(ViTModel.forward).parameters
    assert "past_key_values" not in inspect.signature(ViTModel.forward).parameters
    assert _both(symgpt.load("vit-base", B=B), 32) == (0, 0)


@pytest.mark.parametrize("family,cfg,cls,sizes", [
    ("t5", {"model_type": "t5", "vocab_size": 97, "d_model": 16, "d_kv": 4, "d_ff": 40, "num_heads": 4,
            "dropout_rate": 0.0, "relative_attention_num_buckets": 8, "num_layers": 2, "num_decoder_layers": 3},
     "T5ForConditionalGeneration", dict(L=2, L_dec=3, d_head=4, buckets=8, d=16, h=4, V=97, d_ff=40)),
    ("bart", {"model_type": "bart", "vocab_size": 97, "d_model": 16, "encoder_layers": 3, "decoder_layers": 2,
              "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 40,
              "decoder_ffn_dim": 40, "max_position_embeddings": 32}, "BartForConditionalGeneration",
     dict(L=3, L_dec=2, T_max=32, d=16, h=4, V=97, d_ff=40)),
])
def test_encoder_decoders_cache_self_and_cross_attention(family, cfg, cls, sizes):
    torch.manual_seed(0)
    measured = kv_cache_bytes(build(cfg, cls, device="cpu"), B, T_ENC, T_DEC)
    # by hand: K and V x L_dec x B x 4 heads x 4 dims x (T_dec self + T_enc cross positions) x 4 bytes
    assert measured == 2 * sizes["L_dec"] * B * 16 * (T_DEC + T_ENC) * 4
    m = symgpt.load(family, B=B, T_enc=T_ENC, T_dec=T_DEC, **sizes)
    assert _both(m, 32) == (measured, measured)
    # tensor parallelism: each of 2 ranks holds half the heads of both caches
    half = (m.quantity("memory.kv_cache", precision="fp32", tp=2).value,
            m.quantity("inference.kv_cache", act_bits=32, chips=2).value)
    assert half == (measured // 2, measured // 2)


def test_encoder_decoder_cross_attention_is_split_like_self_attention():
    """At a decode step on 2 chips, each cross-attention op's FLOPs are half its 1-chip FLOPs
    (Megatron splits cross-attention's heads as it splits self-attention's)."""
    from symgpt.graph import roles

    m = symgpt.load("t5-small", B=B, T_enc=T_ENC, T_dec=T_DEC)
    one = m.quantity("inference.decode.flops").values()
    two = m.quantity("inference.decode.flops", chips=2).values()
    cross = [n for n in one if roles.part_of(m.arch.role(n)) == "cross_attention"]
    assert cross and all(two[n] * 2 == one[n] for n in cross)


@pytest.mark.parametrize("model_type", ["deepseek_v2", "deepseek_v3"])
def test_mla_caches_the_latent_and_the_rotary_key(model_type, tmp_path):
    cfg = _tiny(model_type)
    path = tmp_path / f"tiny-{model_type}.json"
    path.write_text(json.dumps(cfg))
    nbytes, bits = cache_nbytes(_tiny_hf(cfg).eval(), B, T)
    # by hand: 3 layers x (kv_lora_rank 32 + qk_rope_head_dim 8) x B x T x 4 bytes
    assert (nbytes, bits) == (3 * (32 + 8) * B * T * 4, 32)
    m = symgpt.load(path, B=B, T=T)
    assert _both(m, 32) == (nbytes, nbytes)
    # the latent is shared by every head: a rank holding half the heads keeps all of it
    assert m.quantity("memory.kv_cache", precision="fp32", tp=2).value == nbytes
    assert m.quantity("inference.kv_cache", act_bits=32, chips=2).value == nbytes


@pytest.mark.parametrize("preset", ["gpt2-small", "llama-70b", "mistral-7b", "gemma-2-9b", "deepseek-v3",
                                    "t5-base", "bart-base", "bert-base", "vit-base"])
def test_the_two_quantities_are_one_formula(preset):
    m = symgpt.load(preset)
    mem = m.quantity("memory.kv_cache", precision="bf16").expr
    inf = m.quantity("inference.kv_cache").expr
    assert sympy.expand(mem - inf) == 0

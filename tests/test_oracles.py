"""Trust checks for the independent oracles in tests/oracles (no symgpt here).

The oracles are checked against each other (from-scratch torch GPT-2 vs the
HuggingFace GPT-2, meta vs CPU, eager vs SDPA) and against hand arithmetic.
"""
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tests.oracles import measure as M  # noqa: E402
from tests.oracles.torch_gpt2 import GPTConfig, build  # noqa: E402

SMALL = dict(vocab_size=1000, block_size=64, n_layer=2, n_head=4, n_embd=64)
HF_GPT2 = {"model_type": "gpt2", "n_layer": 12, "n_head": 12, "n_embd": 768,
           "vocab_size": 50257, "n_positions": 1024}
HF_SMALL = {"model_type": "gpt2", "n_layer": 2, "n_head": 4, "n_embd": 64,
            "vocab_size": 1000, "n_positions": 64}


def meta(**kw):
    return build(GPTConfig(**kw), device="meta")


def hand_params(V, T, L, d, ff=None, tied=True, bias=True, qkv_bias=True):
    ff = 4 * d if ff is None else ff
    b = 1 if bias else 0
    qb = 1 if (bias and qkv_bias) else 0
    ln = d * (1 + b)
    block = (2 * ln + 3 * d * d + 3 * d * qb + d * d + d * b
             + d * ff + ff * b + ff * d + d * b)
    return V * d + T * d + L * block + ln + (0 if tied else V * d)


# ------------------------------------------------------------------ params
# GPT-2 small by hand (V=50257, T=1024, d=768, L=12, ff=3072):
#   wte 50257*768 = 38,597,376; wpe 1024*768 = 786,432
#   block = ln_1 1,536 + c_attn 1,769,472+2,304 + attn.c_proj 589,824+768
#         + ln_2 1,536 + c_fc 2,359,296+3,072 + mlp.c_proj 2,359,296+768 = 7,087,872
#   12 blocks 85,054,464; ln_f 1,536  ->  tied 124,439,808
#   untied: + 38,597,376 = 163,037,184;  no qkv bias: - 12*2,304 = 124,412,160
# bias=False (weights only): block = 2*768 + 12*768^2 = 7,079,424; ln_f 768
#   V=50257 -> 124,337,664  (this is the 124,337,664 figure; vocab NOT padded)
#   V=50304 (vocab_multiple=64, +47*768 = 36,096) -> 124,373,760
#   (nanoGPT prints 123.59M = 124,373,760 - wpe 786,432 for its bias=False/50304 run)
# bias=True with V=50304 -> 124,439,808 + 36,096 = 124,475,904
@pytest.mark.parametrize("kw,expected", [
    (dict(), 124_439_808),
    (dict(tied=False), 163_037_184),
    (dict(qkv_bias=False), 124_412_160),
    (dict(bias=False), 124_337_664),
    (dict(bias=False, qkv_bias=True), 124_337_664),  # qkv_bias ignored when bias=False
    (dict(bias=False, vocab_multiple=64), 124_373_760),
    (dict(vocab_multiple=64), 124_475_904),
])
def test_gpt2_small_param_counts(kw, expected):
    m = meta(**kw)
    assert M.param_count(m) == expected
    cfg = m.config
    assert expected == hand_params(cfg.padded_vocab, 1024, 12, 768, tied=cfg.tied,
                                   bias=cfg.bias, qkv_bias=cfg.qkv_bias)


def test_padded_vocab_and_custom_dff():
    assert GPTConfig(vocab_multiple=64).padded_vocab == 50304
    assert GPTConfig(vocab_multiple=None).padded_vocab == 50257
    m = meta(**SMALL, d_ff=100, tied=False)
    assert M.param_count(m) == hand_params(1000, 64, 2, 64, ff=100, tied=False)


def test_param_count_by_module_and_tying():
    tied, untied = meta(), meta(tied=False)
    assert tied.lm_head.weight is tied.transformer.wte.weight
    bt, bu = M.param_count_by_module(tied), M.param_count_by_module(untied)
    assert sum(bt.values()) == M.param_count(tied)
    assert sum(bu.values()) == M.param_count(untied)
    assert "lm_head.weight" not in bt and bu["lm_head.weight"] == 50257 * 768
    assert bt["transformer.h.0.attn.c_attn.bias"] == 3 * 768
    # dtype conversion must keep the tie
    m16 = build(GPTConfig(**SMALL), dtype=torch.bfloat16)
    assert m16.lm_head.weight is m16.transformer.wte.weight
    assert m16.lm_head.weight.dtype == torch.bfloat16


def test_hf_param_count_matches_torch_gpt2():
    assert M.hf_param_count(HF_GPT2) == 124_439_808 == M.param_count(meta())
    untied = dict(HF_GPT2, tie_word_embeddings=False)
    assert M.hf_param_count(untied) == 163_037_184 == M.param_count(meta(tied=False))
    # HF n_inner is d_ff
    small = dict(HF_SMALL, n_inner=100)
    assert M.hf_param_count(small) == M.param_count(meta(**SMALL, d_ff=100))


# ------------------------------------------------------------------- FLOPs
def hand_fwd_flops(B, T, L, d, V, ff=None):
    """2 FLOPs/MAC over linears + lm_head, plus q@k^T and att@v (full T^2)."""
    ff = 4 * d if ff is None else ff
    linear = 2 * B * T * L * (4 * d * d + 2 * d * ff)
    attn = L * 2 * (2 * B * T * T * d)
    return linear + attn + 2 * B * T * d * V


@pytest.mark.parametrize("attention", ["eager", "sdpa"])
def test_flop_count_small_cpu_meta_hf_hand(attention):
    B, T = 2, 16
    m = build(GPTConfig(**SMALL, attention=attention))
    fwd = M.flop_count(m, B, T)
    assert fwd == hand_fwd_flops(B, T, 2, 64, 1000) == 10_649_600
    assert M.flop_count(m, B, T, device="meta") == fwd
    assert M.flop_count(meta(**SMALL, attention=attention), B, T) == fwd
    bwd = M.flop_count(m, B, T, backward=True)
    assert bwd == 3 * fwd  # backward = grad-input + grad-weight matmuls = 2x fwd
    assert M.flop_count(m, B, T, backward=True, with_loss=True) == bwd  # CE uncounted
    assert M.hf_flop_count(HF_SMALL, B, T, device="meta") == fwd
    assert M.hf_flop_count(HF_SMALL, B, T, device="cpu") == fwd
    assert M.hf_flop_count(HF_SMALL, B, T, backward=True) == bwd
    ops = M.flop_count_by_op(m, B, T)
    assert ops["aten.bmm"] == 2 * 2 * (2 * B * T * T * 64)  # attention is counted
    assert sum(ops.values()) == fwd


def test_flop_count_gpt2_small_meta_matches_hf():
    B, T = 2, 16
    m = meta(attention="sdpa")
    fwd = M.flop_count(m, B, T)
    assert fwd == hand_fwd_flops(B, T, 12, 768, 50257)
    assert M.hf_flop_count(HF_GPT2, B, T, device="meta") == fwd
    hf_bwd = M.hf_flop_count(HF_GPT2, B, T, backward=True, device="meta")
    assert M.flop_count(m, B, T, backward=True) == hf_bwd == 3 * fwd
    hf = M._hf_model(HF_GPT2, "meta", "eager")
    assert hf.config._attn_implementation == "eager"
    assert M.flop_count_by_op(hf, B, T)["aten.bmm"] == 12 * 2 * (2 * B * T * T * 768)


# ------------------------------------------------------------------ shapes
def test_record_shapes_tiny():
    B, T = 2, 8
    m = build(GPTConfig(**SMALL, d_ff=96, vocab_multiple=64))
    shapes = M.record_shapes(m, B, T)
    d = dict(shapes)
    names = [n for n, _ in shapes]
    assert d["transformer.h.0.attn.q"] == (B, 4, T, 16)
    assert d["transformer.h.1.attn.v"] == (B, 4, T, 16)
    assert d["transformer.h.0.attn.scores"] == (B, 4, T, T)
    assert d["transformer.h.0.attn.probs"] == (B, 4, T, T)
    assert d["transformer.h.0.attn.y"] == (B, T, 64)
    assert d["transformer.h.0.attn.c_attn"] == (B, T, 192)
    assert d["transformer.h.0.mlp.c_fc"] == (B, T, 96)
    assert d["transformer.wpe"] == (T, 64)
    assert d["lm_head"] == (B, T, 1024)  # padded vocab
    assert names.index("transformer.h.0.attn.q") < names.index("transformer.h.0.attn.scores") \
        < names.index("transformer.h.0.attn.y") < names.index("transformer.h.0.attn.c_proj")
    assert names[-1] == "lm_head"
    assert all(mod.recorder is None for mod in m.modules() if hasattr(mod, "recorder"))
    s = dict(M.record_shapes(meta(**SMALL, attention="sdpa"), B, T))  # meta works too
    assert "transformer.h.0.attn.scores" not in s and s["transformer.h.0.attn.y"] == (B, T, 64)


# ------------------------------------------------------- saved activations
def test_saved_activations_eager_vs_sdpa():
    B, T, L, h = 2, 16, 2, 4
    torch.manual_seed(0)
    eager = build(GPTConfig(**SMALL, attention="eager"))
    sdpa = build(GPTConfig(**SMALL, attention="sdpa"))
    se, ss = M.saved_activation_bytes(eager, B, T), M.saved_activation_bytes(sdpa, B, T)
    assert se > ss
    # Per layer, eager keeps contiguous copies of q, k, v (3BTC fp32), the (T,T)
    # bool mask, fp32 probs (B,h,T,T) and a fresh (B,T,C) c_proj input; CPU flash
    # SDPA keeps the whole c_attn output storage (3BTC), logsumexp (B,h,T) and its
    # output, which is already laid out (B,T,h,hd) so it IS the c_proj input.
    assert se - ss == L * (T * T + 4 * B * h * T * T - 4 * B * h * T)
    lst = M.saved_tensors(eager, B, T)
    ptrs = [e["storage_ptr"] for e in lst]
    assert len(ptrs) == len(set(ptrs))
    assert not set(ptrs) & {p.untyped_storage().data_ptr() for p in eager.parameters()}
    assert {"shape", "dtype", "nbytes", "storage_ptr"} <= set(lst[0])
    assert any(e["shape"] == (B, h, T, T) for e in lst)
    # the loss adds log-softmax (B*T, V) fp32 + targets (B*T,) int64 + a scalar
    nl = M.saved_activation_bytes(eager, B, T, with_loss=False)
    assert se - nl == B * T * 1000 * 4 + B * T * 8 + 4


def test_saved_activations_bf16():
    B, T = 2, 16
    m32 = build(GPTConfig(**SMALL))
    m16 = build(GPTConfig(**SMALL), dtype=torch.bfloat16)
    b32 = M.saved_activation_bytes(m32, B, T, dtype=torch.float32, with_loss=False)
    b16 = M.saved_activation_bytes(m16, B, T, dtype=torch.bfloat16, with_loss=False)
    assert b16 < b32
    assert {e["dtype"] for e in M.saved_tensors(m16, B, T)} >= {torch.bfloat16}
    with pytest.raises(ValueError):
        M.saved_activation_bytes(m32, B, T, dtype=torch.bfloat16)
    with pytest.raises(ValueError):
        M.saved_activation_bytes(meta(**SMALL), B, T)

"""FLOPs derived from the graph against seeds 000 and 002 and against PyTorch's FlopCounterMode."""

import math

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.core.symbols import B, L, T, d

from oracles.measure import flop_count
from oracles.torch_gpt2 import GPTConfig, build


def near(x, printed, unit):
    """*x* agrees with a seed's *printed* figure to within one unit of its last digit (the seeds
    sometimes truncate: 24·1024·768² = 1.4496 × 10¹⁰ is printed 1.449 × 10¹⁰)."""
    return abs(float(x) - printed) < unit


def sig(x, digits):
    """*x* rounded to *digits* significant digits (as the seeds print them)."""
    x = float(x)
    return round(x, digits - 1 - int(math.floor(math.log10(abs(x)))))


@pytest.fixture(scope="module")
def small():
    return symgpt.load("gpt2-small", B=8, T=1024)


# --- lecture note 7.3 §5 ---------------------------------------------------------------------------------
def test_note73_per_block_formula():
    # §5: "#FLOPs/block forward = 24·T·d² + 4·T²·d" (one sequence, one block)
    fwd = symgpt.load("gpt2").quantity("flops.forward", per="sequence")
    assert sympy.expand(fwd.part("blocks").expr / L - (24 * T * d**2 + 4 * T**2 * d)) == 0


def test_note73_section5_numbers(small):
    fwd = small.quantity("flops.forward")
    per_block_per_seq = fwd.part("blocks").value / 12 / 8
    assert near(per_block_per_seq, 1.771e10, 1e7)          # §5.1: 1.771 × 10¹⁰
    assert near(24 * 1024 * 768**2, 1.449e10, 1e7) and near(4 * 1024**2 * 768, 3.221e9, 1e6)
    assert sig(fwd.part("blocks").value / 8, 3) == 2.13e11  # ≈ 2.13 × 10¹¹ per batch slot
    assert sig(fwd.part("blocks").value, 3) == 1.70e12      # ≈ 1.70 × 10¹² at B = 8
    assert sig(fwd.part("lm_head").value, 2) == 6.3e11      # 2BTVd ≈ 6.3 × 10¹¹
    assert sig(fwd.value, 2) == 2.3e12                      # total forward ≈ 2.3 × 10¹²
    train = small.quantity("flops.train")
    assert sig(train.value, 1) == 7e12                      # §5.2: ≈ 7 × 10¹² per step
    assert train.value == 3 * fwd.value                     # "≈ 3 · forward": exact for GPT-2


def test_note73_6nd():
    # §5.2: 6 · 124 × 10⁶ · 8192 = 6.1 × 10¹², "close enough" to the derived 7 × 10¹²
    m = symgpt.load("gpt2-small", B=8, T=1024)
    six_nd = 6 * m.params.value * 8 * 1024
    assert sig(six_nd, 2) == 6.1e12
    assert 1 < m.quantity("flops.train").value / six_nd < 1.2


# --- lesson LM4-T5 ------------------------------------------------------------------------------------
def test_lm4t5_forward_flops_per_token():
    # "2 · 124,412,160 ≈ 249 million ... plus the attention products 4 · n · d per layer per token,
    # which at n = 1,024 adds 4 · 1,024 · 768 · 12 ≈ 37.7 million"
    m = symgpt.load("gpt2-small", qkv_bias=False, B=1, T=1024)
    fwd = m.quantity("flops.forward", per="token")
    attention = m.value(fwd["blocks/attention/scores"] + fwd["blocks/attention/values"])
    assert attention == 37_748_736 and sig(attention, 3) == 37.7e6
    assert 2 * m.params.value == 248_824_320 and sig(2 * m.params.value, 3) == 249e6
    # the graph counts 2 per matmul weight (12Ld² + Vd); the seed's 2 per parameter adds the
    # biases, norms and position table, which enter no matmul: within 1 %
    dense = fwd.value - attention
    assert dense == 2 * (12 * 12 * 768**2 + 50257 * 768)
    assert abs(dense / (2 * m.params.value) - 1) < 0.01


# --- FlopCounterMode -----------------------------------------------------------------------------
CONFIGS = [  # (torch config, symgpt flags)
    (dict(), {}),
    (dict(tied=False), {"tied": False}),
    (dict(bias=False), {"bias": False}),
    (dict(qkv_bias=False, tied=False), {"qkv_bias": False, "tied": False}),
    (dict(attention="sdpa"), {}),
    (dict(d_ff=100), {}),
    (dict(vocab_multiple=64), {"vocab_multiple": 64}),
]


@pytest.mark.parametrize("cfg,flags", CONFIGS)
@pytest.mark.parametrize("B_,T_", [(2, 16), (3, 7)])
def test_default_convention_equals_flopcountermode(cfg, flags, B_, T_):
    tm = build(GPTConfig(vocab_size=1000, block_size=64, n_layer=2, n_head=4, n_embd=64, **cfg), device="meta")
    sizes = dict(L=2, h=4, d=64, V=1000, T_max=64, B=B_, T=T_)
    if "d_ff" in cfg:
        sizes["d_ff"] = cfg["d_ff"]
    m = symgpt.load("gpt2", **flags, **sizes)
    assert m.quantity("flops.forward") == flop_count(tm, B_, T_)
    assert m.quantity("flops.train") == flop_count(tm, B_, T_, backward=True, with_loss=True)
    assert m.quantity("flops.backward").value == m.quantity("flops.train").value - m.quantity("flops.forward").value


def test_gpt2_small_equals_flopcountermode_on_meta():
    tm = build(GPTConfig(), device="meta")
    m = symgpt.load("gpt2-small", B=1, T=1024)
    assert m.quantity("flops.forward") == flop_count(tm, 1, 1024)
    assert m.quantity("flops.train") == flop_count(tm, 1, 1024, backward=True, with_loss=True)


# --- convention flags ----------------------------------------------------------------------------
def test_views_per_sequence_and_token(small):
    batch = small.quantity("flops.train").value
    assert small.quantity("flops.train", per="sequence").value * 8 == batch
    assert small.quantity("flops.train", per="token").value * 8 * 1024 == batch


def test_macs_and_causal_halving():
    g = symgpt.load("gpt2")
    two = g.quantity("flops.forward").expr
    assert sympy.expand(2 * g.quantity("flops.forward", flops_per_mac=1).expr - two) == 0
    causal = g.quantity("flops.forward", causal_halving=True)
    assert sympy.expand(two - causal.expr - 2 * B * L * T**2 * d) == 0  # half of 4BLT²d


def test_elementwise_prices_count_elements():
    g = symgpt.load("gpt2", bias=False)
    q = g.quantity("flops.forward", softmax=3)
    from symgpt.core.symbols import h
    assert sympy.expand(q.expr - g.quantity("flops.forward").expr - 3 * B * L * h * T**2) == 0


def test_unknown_convention_lists_known():
    with pytest.raises(SymgptError, match="known conventions: default, .*kaplan.*chinchilla"):
        symgpt.load("gpt2-small").quantity("flops.forward", convention="nope")
    with pytest.raises(SymgptError, match="recompute"):
        symgpt.load("gpt2-small").quantity("flops.train", recompute="some")


def test_quantity_metadata(small):
    q = small.quantity("flops.train", convention="kaplan")
    assert q.convention == "kaplan" and q.unit == "FLOPs"
    assert any("Kaplan" in n for n in q.notes)
    assert "blocks/attention/values" not in q.paths()           # Kaplan: Q·Kᵀ only
    assert small.quantity("flops.train", convention="kaplan", per="batch").convention == "kaplan (per=batch)"
    assert sum(small.quantity("flops.train").values().values()) == small.quantity("flops.train").value


def test_hardware_flops_add_the_recomputed_forward(small):
    model = small.quantity("flops.train", recompute="full")
    hw = small.quantity("flops.train", recompute="full", hardware=True)
    fwd = small.quantity("flops.forward")
    assert hw.value - model.value == fwd.part("blocks").value
    sel = small.quantity("flops.train", recompute="selective", hardware=True)
    assert sel.value - model.value == fwd["blocks/attention/scores"].subs(small.bindings) * 2



@pytest.mark.parametrize("B_,h_,T_,dh", [(2, 4, 16, 8), (3, 12, 1024, 64)])
def test_flash_attention_backward_equals_torch_sdpa_formulas(B_, h_, T_, dh):
    # FlopCounterMode prices fused SDPA kernels (CUDA flash / memory-efficient) with
    # sdpa_flop_count and sdpa_backward_flop_count: the backward recomputes Q·Kᵀ (2.5 × forward)
    from torch.utils.flop_counter import sdpa_backward_flop_count, sdpa_flop_count

    m = symgpt.load("gpt2", L=1, h=h_, d=h_ * dh, V=100, T_max=T_, B=B_, T=T_)
    core = ("blocks/attention/scores", "blocks/attention/values")
    fwd = m.quantity("flops.forward", attention="flash")
    bwd = m.quantity("flops.backward", attention="flash")
    shape = (B_, h_, T_, dh)
    assert m.value(sum(fwd[p] for p in core)) == sdpa_flop_count(shape, shape, shape)
    assert m.value(sum(bwd[p] for p in core)) == sdpa_backward_flop_count(shape, shape, shape, shape)

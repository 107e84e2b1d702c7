"""Each convention preset, derived from the graph, equals its paper's formula (SymPy proofs), with
numeric spot checks. Formulas are typed from the papers (see conventions.md), in their symbols,
then mapped to symgpt's: Megatron/Korthikanti l, h, s, a, b, v -> L, d, T, h, B, V."""

import pytest
import sympy

import symgpt
from symgpt.core.symbols import B, L, T, T_max, V, d, d_ff, h



def same(a, b):
    return sympy.simplify(sympy.expand(a - b)) == 0


G = symgpt.load("gpt2")


# --- FLOPs ---------------------------------------------------------------------------------------
def test_megatron_eq3():
    # Narayanan et al. 2021, Eq. 3: F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)), full recomputation
    s, l, hh = T, L, d
    eq3 = 96 * B * s * l * hh**2 * (1 + s / (6 * hh) + V / (16 * l * hh))
    assert same(G.quantity("flops.train", convention="megatron").expr, eq3)


def test_korthikanti_eq7_model_flops():
    # Korthikanti et al. 2022, Appendix A, Eq. 7: 72·B·L·s·h²·(1 + s/(6h) + v/(12hL))
    s, hh = T, d
    eq7 = 72 * B * L * s * hh**2 * (1 + s / (6 * hh) + V / (12 * hh * L))
    assert same(G.quantity("flops.train", convention="korthikanti").expr, eq7)
    assert same(G.quantity("flops.train").expr, eq7)  # the default convention's model FLOPs too


def test_korthikanti_eq8_as_printed_and_as_its_text_implies():
    s, hh = T, d
    printed = 72 * B * L * s * hh**2 * (1 + s / (3 * hh) + V / (12 * hh * L))
    assert same(G.quantity("flops.train", convention="korthikanti-eq8").expr, printed)
    model = G.quantity("flops.train", convention="korthikanti").expr
    text = G.quantity("flops.train", convention="korthikanti-hfu").expr
    # the text: selective recomputation reruns Q·Kᵀ and A·V forward, 4·B·s²·h per layer -> 16BLs²h
    assert same(text - model, 4 * B * L * s**2 * hh)
    assert sympy.Poly(sympy.expand(text), T).coeff_monomial(T**2) == 16 * B * L * d


def test_kaplan_c_forward():
    # Kaplan et al. 2020, Table 1: N = 2·d_model·n_layer·(2·d_attn + d_ff); C_forward = 2N + 2·n_layer·n_ctx·d_attn
    m = symgpt.load("gpt2", d_ff=3072)
    d_attn = d
    N = 2 * d * L * (2 * d_attn + d_ff)
    c_forward = 2 * N + 2 * L * T * d_attn
    assert same(m.quantity("flops.forward", convention="kaplan").expr, c_forward)
    assert same(m.quantity("flops.train", convention="kaplan").expr, 3 * c_forward)  # training ≈ 6N
    assert same(G.quantity("flops.forward", convention="kaplan").expr, 24 * L * d**2 + 2 * L * T * d)


def test_chinchilla_appendix_f():
    # Hoffmann et al. 2022, Appendix F, forward FLOPs per sequence (d_head·h = d)
    m = symgpt.load("gpt2", d_ff=3072)
    dh_h = d
    embeddings = 2 * T * V * d
    attention = (2 * 3 * T * d * dh_h + 2 * T**2 * dh_h + 3 * h * T**2 + 2 * T**2 * dh_h
                 + 2 * T * dh_h * d)
    dense = 2 * T * (d * d_ff + d * d_ff)
    logits = 2 * T * d * V
    forward = embeddings + L * (attention + dense) + logits
    assert same(m.quantity("flops.forward", convention="chinchilla").expr, forward)
    assert same(m.quantity("flops.backward", convention="chinchilla").expr, 2 * forward)
    assert same(m.quantity("flops.train", convention="chinchilla").expr, 3 * forward)


def test_palm_6n_plus_attention():
    # Chowdhery et al. 2022, Appendix B: 6N + 12·L·H·Q·T per token (H heads, Q = head dim)
    m = symgpt.load("gpt2", bias=False)
    H, Q = h, d / h
    N = 12 * L * d**2 + V * d  # the weights that enter a matmul (tied: the table once)
    assert same(m.quantity("flops.train", convention="palm").expr, 6 * N + 12 * L * H * Q * T)
    # PaLM's N is all parameters; GPT-2's differ by the position table and the norm scales
    assert same(m.params.expr - N, T_max * d + 2 * L * d + d)


def test_palm_mfu_example_spot_check():
    # 6N + 12LHQT for GPT-2-small at T = 1024 (tied, bias-free N = 12Ld² + Vd = 123,532,032)
    m = symgpt.load("gpt2-small", bias=False, B=1, T=1024)
    per_token = m.quantity("flops.train", convention="palm").value
    assert per_token == 6 * 123_532_032 + 12 * 12 * 12 * 64 * 1024


def test_flash_benchmark_convention():
    # FlashAttention benchmarks: forward 4·B·h·T²·d_head, halved when causal; backward 2.5 × forward
    q_fwd = G.quantity("flops.forward", convention="flash")
    q_bwd = G.quantity("flops.backward", convention="flash")
    attn_f = q_fwd["blocks/attention/scores"] + q_fwd["blocks/attention/values"]
    attn_b = q_bwd["blocks/attention/scores"] + q_bwd["blocks/attention/values"]
    assert same(attn_f, 4 * B * h * T**2 * (d / h) * L / 2)
    assert same(attn_b, sympy.Rational(5, 2) * attn_f)


# --- memory --------------------------------------------------------------------------------------
def k_blocks(**options):
    m = symgpt.load("gpt2", dropout=True)
    q = m.quantity("memory.activations", convention="korthikanti", **options)
    return q.part("blocks").expr / L


S, b, a, hh = T, B, h, d  # Korthikanti's s, b, a (heads), h (hidden)


def test_korthikanti_eq1_per_layer():
    # §4.1: activations per layer sbh(34 + 5as/h), 16-bit, masks 1 byte
    assert same(k_blocks(), S * b * hh * (34 + 5 * a * S / hh))


@pytest.mark.parametrize("t", [2, 8])
@pytest.mark.parametrize("options,row", [
    (dict(), lambda t: S * b * hh * (10 + sympy.Rational(24, t) + 5 * a * S / (hh * t))),
    (dict(sp=True), lambda t: S * b * hh * (sympy.Rational(34, t) + 5 * a * S / (hh * t))),
    (dict(recompute="selective"), lambda t: S * b * hh * (10 + sympy.Rational(24, t))),
    (dict(sp=True, recompute="selective"), lambda t: S * b * hh * sympy.Rational(34, t)),
])
def test_korthikanti_table2_rows(options, row, t):
    assert same(k_blocks(tp=t, **options), row(t))


def test_korthikanti_table2_full_recompute():
    assert same(k_blocks(recompute="full"), 2 * S * b * hh)


def test_korthikanti_spot_check_gpt3_175b():
    # §4: GPT-3 175B (a = 96, h = 12288, s = 2048), b = 1: sbh(34 + 5as/h) = 2048·12288·(34 + 80) bytes
    m = symgpt.load("gpt3-175b", dropout=True, B=1, T=2048)
    q = m.quantity("memory.activations", convention="korthikanti").part("blocks")
    assert q.value == 96 * 2048 * 12288 * (34 + 5 * 96 * 2048 // 12288)


ZERO_STAGES = [  # Rajbhandari et al. 2019, §3.1 / Figure 1: bytes per parameter, K = 12
    (0, lambda n: 2 + 2 + 12),
    (1, lambda n: 2 + 2 + sympy.Rational(12, n)),
    (2, lambda n: 2 + sympy.Rational(2 + 12, n)),
    (3, lambda n: sympy.Rational(2 + 2 + 12, n)),
]
ZERO_FIG1 = {0: 120, 1: 31.4, 2: 16.6, 3: 1.9}  # GB (10⁹) for Ψ = 7.5B, N_d = 64


@pytest.mark.parametrize("stage,per_param", ZERO_STAGES)
def test_zero_stages(stage, per_param):
    n_d = 64
    states = 0
    for name in ("memory.weights", "memory.gradients", "memory.optimizer"):
        states += G.quantity(name, precision="mixed-fp16", optimizer="adam", zero=stage, dp=n_d).expr
    assert same(states, per_param(n_d) * G.params.expr)
    total = G.quantity("memory.total", precision="mixed-fp16", optimizer="adam", zero=stage, dp=n_d)
    acts = G.quantity("memory.activations", precision="mixed-fp16")
    assert same(total.expr - acts.expr, states)
    assert float(per_param(n_d)) * 7.5e9 / 1e9 == pytest.approx(ZERO_FIG1[stage], rel=0.02)


@pytest.mark.parametrize("precision,optimizer,per_param", [
    # EleutherAI Transformer Math 101: model 2 or 4, gradients 2 or 4, AdamW 12, 8-bit Adam 6,
    # SGD with momentum 8 (fp32 copy + momentum) under mixed precision; lesson LM4-T5: fp32 Adam 16
    ("mixed-bf16", "adamw", 2 + 2 + 12),
    ("mixed-bf16", "adam8bit", 2 + 2 + 6),
    ("mixed-bf16", "momentum", 2 + 2 + 8),
    ("fp32", "adam", 4 + 4 + 8),
    ("fp32", "sgd", 4 + 4),
])
def test_bytes_per_parameter(precision, optimizer, per_param):
    states = sum(G.quantity(n, precision=precision, optimizer=optimizer).expr
                 for n in ("memory.weights", "memory.gradients", "memory.optimizer"))
    assert same(states, per_param * G.params.expr)


@pytest.mark.parametrize("precision,nbytes", [("bf16", 2), ("fp32", 4)])
def test_kv_cache_formula(precision, nbytes):
    # conventions.md §7: 2 (K and V) · L · h_kv · d_head · bytes per token; GPT-2: h_kv = h, d_head = d/h
    h_kv, d_head = h, d / h
    q = G.quantity("memory.kv_cache", precision=precision)
    assert same(q.expr, 2 * L * h_kv * d_head * nbytes * B * T)
    m = symgpt.load("gpt2-small", B=1, T=1024)
    assert m.quantity("memory.kv_cache", precision="bf16").value == 2 * 12 * 768 * 2 * 1024  # 37.7 MB

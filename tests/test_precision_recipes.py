"""Precision recipes as data: DeepSeek-V3's FP8 training (arXiv 2412.19437, Sec. 3.3) as a named
policy -- model states per parameter and the FP8-cached linear inputs with their 1x128 tile
scales -- against hand counts from the report's description and Korthikanti et al. 2022's
per-layer activation terms."""

import subprocess
import sys

import sympy

import symgpt
from symgpt.core.symbols import B, L, T, d, h
from symgpt.derive.options import PRECISIONS

R = sympy.Rational
FP8 = "fp8-deepseek-v3"


def test_policy_carries_its_source():
    p = PRECISIONS[FP8]
    assert "2412.19437" in p.source and p.tile == 128
    q = symgpt.load("gpt2-small").quantity("memory.total", precision=FP8)
    assert any("2412.19437" in n for n in q.notes)


def test_model_states_per_parameter():
    # BF16 weights 2 + FP32 gradients 4 + FP32 master 4 + BF16 AdamW moments 2 + 2 = 14 bytes
    m = symgpt.load("gpt2-small")
    psi = 124_439_808  # GPT-2 small's parameters (the released checkpoint)
    got = sum(m.quantity(f"memory.{n}", precision=FP8).value for n in ("weights", "gradients", "optimizer"))
    assert got == 14 * psi
    assert m.quantity("memory.optimizer", precision=FP8).value == (4 + 2 + 2) * psi


def test_fp8_cached_linear_inputs_korthikanti():
    # Korthikanti's per-layer sbh(34 + 5as/h) at 2 bytes; the four linear inputs (QKV 2sbh,
    # projection 2sbh, FFN in 2sbh, FFN out 8sbh = 14sbh) become 1 byte per element plus one fp32
    # scale per 128 elements: (1 + 4/128)·7sbh, with d and 4d multiples of 128
    m = symgpt.load("gpt2", B=2, T=256, L=4, d=512, h=8, V=1000, T_max=256)
    bf = m.quantity("memory.activations", convention="korthikanti", precision="mixed-bf16").part("blocks").value
    f8 = m.quantity("memory.activations", convention="korthikanti", precision=FP8).part("blocks").value
    s_, b_, h_, a_, L_ = 256, 2, 512, 8, 4
    assert bf == L_ * (34 * s_ * b_ * h_ + 5 * a_ * s_ * s_ * b_)
    assert f8 == L_ * (20 * s_ * b_ * h_ + 5 * a_ * s_ * s_ * b_ + R(33, 32) * 7 * s_ * b_ * h_)


def test_started_tiles_count_whole_scales():
    # d = 200 is one full tile and one started: 2 scales per row of 200 elements
    m = symgpt.load("gpt2", B=1, T=16, L=1, d=200, h=8, V=100, T_max=16)
    qkv = m.quantity("memory.activations", precision=FP8).part("blocks/attention/qkv").value
    assert qkv == 16 * (200 + 2 * 4)


def test_head_and_router_stay_bf16():
    m = symgpt.load("gpt2-small", B=1, T=64)
    head = lambda p: m.quantity("memory.activations", precision=p).part("lm_head").value  # noqa: E731
    assert head(FP8) == head("mixed-bf16")


def test_cli_lists_and_takes_the_policy():
    r = subprocess.run([sys.executable, "-m", "symgpt", "memory", "--help"], capture_output=True, text=True)
    assert FP8 in r.stdout
    r = subprocess.run([sys.executable, "-m", "symgpt", "memory", "gpt2-small", "--set", "B=1", "--set", "T=128",
                        "--precision", FP8], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "2412.19437" in r.stdout

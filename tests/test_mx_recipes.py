"""The OCP Microscaling (MX) precision recipes, mxfp8 and mxfp4: bits per element from the OCP MX v1.0
specification (blocks of 32 elements sharing one 8-bit E8M0 scale: 8 + 8/32 = 8.25 and 4 + 8/32 = 4.25
bits), the cached linear inputs against Korthikanti et al. 2022's per-layer activation terms, and the
step time with the linears' GEMMs at the datasheet's FP8 / FP4 peak, worked by hand for GPT-2 small."""

import json
import subprocess
import sys

import pytest
import sympy

import symgpt
from symgpt.derive.memory_activations import gemm_input_bytes
from symgpt.derive.options import PRECISIONS

R = sympy.Rational
# the spec's numbers: block size k = 32, scale 8 bits, element 8 (FP8 E4M3) or 4 (FP4 E2M1) bits
K, SCALE_BITS = 32, 8
ELEMENT_BITS = {"mxfp8": 8, "mxfp4": 4}


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "symgpt", *args], capture_output=True, text=True)


@pytest.mark.parametrize("name", ["mxfp8", "mxfp4"])
def test_bits_per_element_from_the_spec(name):
    bits = ELEMENT_BITS[name] + R(SCALE_BITS, K)
    assert bits == {"mxfp8": R(33, 4), "mxfp4": R(17, 4)}[name]          # 8.25 and 4.25
    for last in (768, 4096, 32):                                            # whole blocks
        assert gemm_input_bytes(PRECISIONS[name], last) * 8 == bits
    p = PRECISIONS[name]
    assert "OCP Microscaling" in p.source and "2310.10537" in p.source


@pytest.mark.parametrize("name", ["mxfp8", "mxfp4"])
def test_cached_linear_inputs_korthikanti(name):
    """Korthikanti's per-layer sbh(34 + 5as/h) at 2 bytes; the four linear inputs (QKV 2sbh, projection
    2sbh, FFN in 2sbh, FFN out 8sbh: 7sbh elements, 14sbh bytes) become MX elements at 8.25 or 4.25 bits."""
    m = symgpt.load("gpt2", B=2, T=256, L=4, d=512, h=8, V=1000, T_max=256)
    bf = m.quantity("memory.activations", convention="korthikanti", precision="mixed-bf16").part("blocks").value
    mx = m.quantity("memory.activations", convention="korthikanti", precision=name).part("blocks").value
    s_, b_, h_, a_, L_ = 256, 2, 512, 8, 4
    per = (ELEMENT_BITS[name] + R(SCALE_BITS, K)) / 8                       # bytes per element
    assert bf == L_ * (34 * s_ * b_ * h_ + 5 * a_ * s_ * s_ * b_)
    assert mx == L_ * (20 * s_ * b_ * h_ + 5 * a_ * s_ * s_ * b_ + per * 7 * s_ * b_ * h_)


@pytest.mark.parametrize("name,elem", [("mxfp8", 1), ("mxfp4", R(1, 2))])
def test_started_blocks_count_whole_scales(name, elem):
    # d = 200: six full blocks of 32 and one started (8 elements): 7 one-byte scales per row
    m = symgpt.load("gpt2", B=1, T=16, L=1, d=200, h=8, V=100, T_max=16)
    qkv = m.quantity("memory.activations", precision=name).part("blocks/attention/qkv").value
    assert qkv == 16 * (200 * elem + 7)


@pytest.mark.parametrize("name", ["mxfp8", "mxfp4"])
def test_model_states_as_mixed_bf16(name):
    # BF16 weights 2 + BF16 gradients 2 + FP32 master 4 + two FP32 AdamW moments 8 = 16 bytes
    m = symgpt.load("gpt2-small")
    psi = 124_439_808  # GPT-2 small's parameters (the released checkpoint)
    got = sum(m.quantity(f"memory.{n}", precision=name).value for n in ("weights", "gradients", "optimizer"))
    assert got == 16 * psi


def test_head_stays_bf16():
    m = symgpt.load("gpt2-small", B=1, T=64)
    head = lambda p: m.quantity("memory.activations", precision=p).part("lm_head").value  # noqa: E731
    assert head("mxfp8") == head("mxfp4") == head("mixed-bf16")


# --- time: the linears' GEMMs at the low-precision peak -------------------------------------------------
B, T, d, L, V = 1, 1024, 768, 12, 50257
# per training step of one micro-batch (forward + two backward matmuls each): the linears' 3·24·B·T·d²
# per layer, attention's Q·Kᵀ and A·V 3·4·B·T²·d per layer, the LM head's 3·2·B·T·d·V
LINEARS, ATTENTION, HEAD = 72 * B * T * d * d * L, 12 * B * T * T * d * L, 6 * B * T * d * V


def _step(*args):
    r = _cli("time", "gpt2-small", "--set", f"B={B}", "--set", f"T={T}", "--json", *args)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    return sympy.Rational(out["time.compute"].get("exact_value", out["time.compute"]["value"])), out


@pytest.mark.parametrize("hw,name,low,peak", [
    # NVIDIA H100 SXM datasheet: 1,979 TFLOP/s bf16 and 3,958 fp8 with sparsity (dense: half)
    ("h100-sxm", "mxfp8", 3958 * 10**12 // 2, 1979 * 10**12 // 2),
    ("h100-sxm", "fp8-deepseek-v3", 3958 * 10**12 // 2, 1979 * 10**12 // 2),
    # HGX B200: 18 PFLOP/s fp4 and 4.5 bf16 with sparsity
    ("b200", "mxfp4", 18 * 10**15 // 2, 45 * 10**14 // 2),
])
def test_linears_at_the_datasheet_low_precision_peak(hw, name, low, peak):
    compute, out = _step("--precision", name, "--hardware", hw)
    assert compute == R(LINEARS, low) + R(ATTENTION + HEAD, peak)
    assert out["machine"]["low_peak"]["value"] == str(low) and out["machine"]["low_peak"]["source"] == hw
    assert any(f"at the {PRECISIONS[name].gemm_dtype} peak" in n for n in out["time.step"]["notes"])


def test_given_low_precision_peak_wins():
    compute, _ = _step("--precision", "mxfp4", "--peak", "1e15", "--low-precision-peak", "4e15")
    assert compute == R(LINEARS, 4 * 10**15) + R(ATTENTION + HEAD, 10**15)


@pytest.mark.parametrize("args,words", [
    (["--precision", "mxfp4", "--hardware", "h100-sxm"], "gives no fp4 peak"),
    (["--precision", "fp8-deepseek-v3", "--hardware", "a100-80gb"], "gives no fp8 peak"),
    (["--precision", "mxfp8", "--peak", "1e15"], "--low-precision-peak"),
])
def test_refused_in_one_line(args, words):
    r = _cli("time", "gpt2-small", "--set", "B=1", "--set", "T=1024", *args)
    assert r.returncode == 2 and r.stderr.startswith("symgpt: error:") and words in r.stderr
    assert r.stderr.count("\n") == 1


def test_plain_policies_unchanged():
    # mixed-bf16: every op at the bf16 peak, as before
    compute, _ = _step("--precision", "mixed-bf16", "--hardware", "h100-sxm")
    assert compute == R(LINEARS + ATTENTION + HEAD, 1979 * 10**12 // 2)

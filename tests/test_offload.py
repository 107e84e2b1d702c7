"""Offloading to host memory: ZeRO-Offload's optimizer offload and per-layer activation offload --
device memory, host memory, the bytes across the host link per step and their seconds, each
against the paper's description or a hand-worked count."""

import subprocess
import sys

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.core.symbols import B, L, T, T_max, V, d, h

R = sympy.Rational
MIXED = dict(precision="mixed-fp16")


def _psi(Lv, dv, Vv=50257, Tv=1024):
    """GPT-2's parameter count by hand: per layer 12d² + 13d (QKV, projection, FFN weights and
    biases, two LayerNorms), the token and position tables, the final LayerNorm (tied head)."""
    return Lv * (12 * dv * dv + 13 * dv) + (Vv + Tv) * dv + 2 * dv


# --- ZeRO-Offload (Ren et al. 2021, Sec. 4.1): 2Ψ on the GPU, 12Ψ on the CPU, 4Ψ across PCIe ------
@pytest.mark.parametrize("name,Lv,dv", [("gpt2-small", 12, 768), ("gpt2-xl", 48, 1600)])
def test_zero_offload_single_gpu(name, Lv, dv):
    psi = _psi(Lv, dv)
    m = symgpt.load(name)
    assert m.quantity("memory.weights", **MIXED, offload=True).value == 2 * psi        # fp16 parameters
    assert m.quantity("memory.optimizer", **MIXED, offload=True).value == 0
    assert m.quantity("memory.host", **MIXED, offload=True).value == 12 * psi          # fp32 p, m, v
    t = m.quantity("offload.traffic", **MIXED, offload=True)
    assert t.value == 4 * psi                  # "fp16 gradients 2M down, fp16 parameters 2M back"
    assert t.part("optimizer/gradients to the host").value == 2 * psi
    assert t.part("optimizer/weights back to the device").value == 2 * psi


def test_zero_offload_ten_billion_by_hand():
    # A GPT-2-shaped 10-billion-class model: L = 50, d = 4096 gives Ψ = 10,276,... parameters;
    # the paper's single-GPU budget, by hand: 2Ψ fp16 on the GPU, 12Ψ of Adam state on the CPU
    m = symgpt.load("gpt2", L=50, d=4096, h=32, V=50257, T_max=1024)
    psi = _psi(50, 4096)
    assert 10 * 10**9 < psi < 11 * 10**9
    assert m.quantity("memory.weights", **MIXED, offload=True).value == 2 * psi
    assert m.quantity("memory.host", **MIXED, offload=True).value == 12 * psi
    # across a PCIe link of 32 GB/s per direction (a hand figure given by the user): 4Ψ / 32e9 s
    q = m.quantity("offload.time", **MIXED, offload=True, host_bandwidth=32 * 10**9)
    assert q.value == R(4 * psi, 32 * 10**9)


@pytest.mark.parametrize("zero", [1, 2])
def test_zero_offload_partitioned_over_data_parallel_ranks(zero):
    # multi-GPU ZeRO-Offload: each rank offloads and updates its 1/N_d partition
    psi = _psi(12, 768)
    m = symgpt.load("gpt2-small")
    assert m.quantity("offload.traffic", **MIXED, offload=True, zero=zero, dp=4).value == 4 * R(psi, 4)
    assert m.quantity("memory.host", **MIXED, offload=True, zero=zero, dp=4).value == 12 * R(psi, 4)


def test_nothing_offloaded_is_zero_and_default_unchanged():
    m = symgpt.load("gpt2-small")
    assert m.quantity("offload.traffic", **MIXED).value == 0
    base = m.quantity("memory.activations", **MIXED)
    assert m.quantity("memory.activations", **MIXED, offload=True).expr == base.expr


# --- activations per layer: Korthikanti et al. 2022's sbh(34 + 5as/h) per layer ------------------
def _per_layer():
    return T * B * d * (34 + 5 * h * T / d)


def test_activation_offload_keeps_two_layers():
    m = symgpt.load("gpt2")
    opts = dict(convention="korthikanti")
    base = m.quantity("memory.activations", **opts).part("blocks").expr
    assert sympy.expand(base - L * _per_layer()) == 0           # the paper's count, before offloading
    dev = m.quantity("memory.activations", **opts, offload_activations=True).part("blocks").expr
    assert sympy.expand(dev - sympy.Min(2, L) * _per_layer()) == 0
    host = m.quantity("memory.host", **opts, offload_activations=True).part("activations/blocks").expr
    assert sympy.expand(host - (L - sympy.Min(2, L)) * _per_layer()) == 0
    # outside the stack nothing moves
    full = m.quantity("memory.activations", **opts)
    off = m.quantity("memory.activations", **opts, offload_activations=True)
    assert sympy.expand((full.expr - full.part("blocks").expr) - (off.expr - off.part("blocks").expr)) == 0


@pytest.mark.parametrize("mb", [1, 4])
def test_activation_traffic_twice_the_offloaded_per_microbatch(mb):
    m = symgpt.load("gpt2-small", B=2, T=512)
    opts = dict(convention="korthikanti", offload_activations=True, microbatches=mb)
    t = m.quantity("offload.traffic", **opts).value
    Lv, dv, hv, Bv, Tv = 12, 768, 12, 2, 512
    per = Tv * Bv * dv * 34 + 5 * hv * Tv * Tv * Bv
    assert t == 2 * mb * (Lv - 2) * per


def test_activation_offload_refuses_pipeline_and_several_stacks():
    with pytest.raises(SymgptError, match="pp = 1"):
        symgpt.load("gpt2").quantity("memory.activations", offload_activations=True, pp=2, microbatches=2)
    with pytest.raises(SymgptError, match="one stack"):
        symgpt.load("t5-small").quantity("memory.activations", offload_activations=True)


# --- step time on the host link -------------------------------------------------------------------
def test_step_adds_the_host_link_not_overlapped():
    m = symgpt.load("gpt2-small", B=8, T=1024)
    opts = dict(precision="mixed-bf16", offload=True, peak=10**14, link_bandwidth=10**11, node_bandwidth=10**10)
    plain = m.quantity("time.step", precision="mixed-bf16", dp=1, tp=1, peak=10**14).value
    step = m.quantity("time.step", **opts, host_bandwidth=25 * 10**9).value
    assert step - plain == R(4 * _psi(12, 768), 25 * 10**9)
    with pytest.raises(SymgptError, match="host-bandwidth"):
        m.quantity("time.step", **opts)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "symgpt", *args], capture_output=True, text=True)


def test_cli_bare_offload_means_the_optimizer_and_repeats():
    r = _cli("memory", "gpt2-small", "--set", "B=1", "--set", "T=128", "--precision", "mixed-fp16",
             "--offload", "--offload", "activations", "--json")
    assert r.returncode == 0, r.stderr
    import json

    out = json.loads(r.stdout)
    assert out["options"]["offload"] is True and out["options"]["offload_activations"] is True
    assert int(out["offload.traffic"]["value"]) > 4 * _psi(12, 768)
    bad = _cli("memory", "gpt2-small", "--offload", "gradients")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
    r = _cli("time", "gpt2-small", "--set", "B=1", "--set", "T=128", "--offload", "--hardware", "a100-80gb")
    assert r.returncode == 2 and "--host-bandwidth" in r.stderr


def test_overlapped_transfers_take_the_larger_of_the_two():
    # max convention: compute + max(0, transfers - compute) = max(compute, transfers)
    m = symgpt.load("gpt2-small", B=8, T=1024)
    opts = dict(precision="mixed-bf16", offload=True, peak=10**14, link_bandwidth=10**11, node_bandwidth=10**10)
    compute = m.quantity("time.compute", **opts, host_bandwidth=1).value
    for bw in (10**8, 10**12):   # transfers longer than compute, then shorter
        host = R(4 * _psi(12, 768), bw)
        step = m.quantity("time.step", **opts, host_bandwidth=bw, overlap_offload=True).value
        assert step == max(compute, host)

"""`symgpt time --hardware NAME`: the profile's datasheet figures fill the peak, the bandwidths,
the node size and the device memory; flags given win; `--hfu` is the old boolean `--hardware`.

Oracles: the numbers the NVIDIA H100 datasheet prints (SXM column: 1,979 TFLOP/s bf16 with
sparsity, so 989.5e12 dense; 80 GB; NVLink 900 GB/s both directions, so 450e9 each way; one
400 Gb/s NIC per GPU in a DGX H100, 50e9 bytes/s) typed in by hand, and the engine's quantities
asked directly."""

from __future__ import annotations

import json

import sympy

import symgpt
from clirun import run as _run


def _cli(*args):
    return _run(list(args))

SIZES = ("--set", "B=8", "--set", "T=1024")
H100 = ("--peak", "989.5e12", "--link-bandwidth", "450e9", "--node-bandwidth", "50e9", "--node-size", "8")


def _json(*args):
    r = _cli(*args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _exact(q):
    """A quantity's exact value from --json (a Rational as text, an integer as a number)."""
    return sympy.Rational(str(q.get("exact_value", q["value"])))


def test_one_device_peak_from_the_profile_equals_the_datasheet_typed_in():
    by_profile = _json("time", "gpt2-small", *SIZES, "--convention", "megatron", "--hardware", "h100-sxm")
    typed = _json("time", "gpt2-small", *SIZES, "--convention", "megatron", "--peak", "989.5e12")
    assert _exact(by_profile["time.step"]) == _exact(typed["time.step"])
    # by hand: megatron's flops.train over 989.5e12 FLOP/s (its precision mixed-fp16: the fp16 peak)
    m = symgpt.load("gpt2-small", B=8, T=1024)
    flops = m.quantity("flops.train", convention="megatron", per="batch", hardware=False).value
    assert sympy.Rational(_exact(by_profile["time.step"])) == flops / (sympy.Integer(9895) * 10**11)
    mach = by_profile["machine"]
    assert mach["peak"] == {"value": str(9895 * 10**11), "source": "h100-sxm"}
    assert mach["profile"]["peak_dtype"] == "fp16" and "H100" in mach["profile"]["source"]
    assert mach["device_memory"] == {"value": str(80 * 10**9), "source": "h100-sxm"}


def test_a_cluster_step_from_the_profile_equals_the_datasheet_typed_in():
    layout = ("--precision", "mixed-bf16", "--pp", "4", "--dp", "4", "--microbatches", "8", "--zero", "1")
    by_profile = _json("time", "gpt2-small", *SIZES, *layout, "--hardware", "h100-sxm")
    typed = _json("time", "gpt2-small", *SIZES, *layout, *H100)
    for name in ("time.compute", "time.comm", "time.bubble", "time.step", "time.hfu"):
        assert by_profile[name]["exact_value"] == typed[name]["exact_value"], name
    assert "machine" in by_profile and typed["machine"]["peak"]["source"] == "--peak"


def test_given_flags_win_over_the_profile():
    out = _json("time", "gpt2-small", *SIZES, "--hardware", "a100-80gb", "--peak", "250e12", "--node-size", "4",
                "--tp", "2")
    assert out["machine"]["peak"] == {"value": str(250 * 10**12), "source": "--peak"}
    assert out["machine"]["node_size"] == {"value": "4", "source": "--node-size"}
    assert out["machine"]["link_bandwidth"] == {"value": str(300 * 10**9), "source": "a100-80gb"}  # 600 GB/s / 2
    assert out["options"]["node_size"] == 4 and out["options"]["peak"] == str(250 * 10**12)


def test_memory_per_device_is_shown_against_the_device_memory():
    args = ("time", "gpt2-small", *SIZES, "--precision", "mixed-bf16", "--dp", "8", "--zero", "3", "--hardware", "h100-sxm")
    out = _json(*args)
    m = symgpt.load("gpt2-small", B=8, T=1024)
    q = m.quantity("memory.total", precision="mixed-bf16", dp=8, zero=3)
    assert sympy.Integer(_exact(out["memory.total"])) == q.value
    text = _cli(*args).stdout
    assert "NVIDIA H100 Tensor Core GPU datasheet" in text and "[h100-sxm datasheet]" in text
    assert "fits" in text and "dense bf16" in text


def test_old_style_hardware_without_a_name_is_one_clear_line():
    for args in (("time", "gpt2-small", "--hardware"), ("flops", "gpt2-small", "--hardware"),
                 ("time", "gpt2-small", "--hardware", "--set", "B=1")):
        r = _cli(*args)
        assert r.returncode == 2 and r.stdout == ""
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("symgpt: error:") and "--hfu" in lines[0], r.stderr


def test_hfu_counts_the_recomputed_forward():
    """`--hfu` is the Python option hardware=True: full recomputation reruns the forward of the
    layers (not the LM head, 2·B·T·d·V by hand)."""
    args = ("flops", "gpt2-small", *SIZES, "--recompute", "full")
    hfu, mfu = _json(*args, "--hfu"), _json(*args)
    m = symgpt.load("gpt2-small", B=8, T=1024)
    fwd = m.quantity("flops.forward").value
    assert sympy.Integer(_exact(hfu["flops.train"])) - sympy.Integer(_exact(mfu["flops.train"])) == fwd - 2 * 8 * 1024 * 768 * 50257
    r = _cli("sweep", "gpt2-small", *SIZES, "--grid", "L=12,24", "--columns", "flops.train", "--recompute", "full",
             "--hfu", "--no-progress")
    assert r.returncode == 0, r.stderr
    row = r.stdout.splitlines()[1].split(",")
    assert int(row[-1]) == int(_exact(hfu["flops.train"]))


def test_a_profile_without_a_network_figure_says_which_flag_to_give():
    """The H100 PCIe datasheet prints no per-GPU network: a cluster step asks for --node-bandwidth."""
    r = _cli("time", "gpt2-small", *SIZES, "--hardware", "h100-pcie", "--tp", "2")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "h100-pcie's datasheet gives no node-bandwidth: give --node-bandwidth" in r.stderr
    ok = _json("time", "gpt2-small", *SIZES, "--hardware", "h100-pcie", "--tp", "2", "--node-bandwidth", "25e9")
    assert ok["machine"]["link_bandwidth"] == {"value": str(300 * 10**9), "source": "h100-pcie"}  # 600 GB/s bridge / 2

"""The cluster commands end to end: comm, time on a cluster, plan --json, schedule, optimal --json,
and their one-line errors."""

import json
import subprocess
import sys

import pytest
import sympy

import symgpt


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "symgpt", *args], capture_output=True, text=True)


def test_time_cluster_json_adds_up():
    r = _cli("time", "gpt3-1.3b", "--set", "B=1", "--set", "T=2048", "--precision", "mixed-bf16", "--tp", "2",
             "--pp", "4", "--dp", "2", "--microbatches", "8", "--peak", "312e12", "--link-bandwidth", "300e9",
             "--node-bandwidth", "25e9", "--tokens", "1e9", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    exact = lambda n: sympy.Rational(out[n].get("exact_value", out[n]["value"]))  # noqa: E731
    parts = [exact(f"time.{n}") for n in ("compute", "comm", "bubble")]
    assert exact("time.step") == sum(parts)
    assert parts[2] == parts[0] * sympy.Rational(3, 8)        # bubble (p - 1)/m
    # the pipeline's step is its slower stage's (the last: it holds the head): price that one too
    r2 = _cli("time", "gpt3-1.3b", "--set", "B=1", "--set", "T=2048", "--precision", "mixed-bf16", "--tp", "2",
              "--pp", "4", "--dp", "2", "--microbatches", "8", "--peak", "312e12", "--link-bandwidth", "300e9",
              "--node-bandwidth", "25e9", "--tokens", "1e9", "--json", "--stage", "last")
    assert r2.returncode == 0, r2.stderr
    last = json.loads(r2.stdout)["time.step"]
    slower = max(sum(parts), sympy.Rational(last.get("exact_value", last["value"])))
    assert slower > sum(parts)
    steps = sympy.Rational(10**9, 1 * 8 * 2 * 2048)            # D / (B·m·dp·T)
    assert exact("time.to_train") == steps * slower
    assert exact("time.device_hours") == steps * slower * 16 / 3600


def test_time_without_bandwidth_is_one_line():
    r = _cli("time", "gpt2-small", "--set", "B=1", "--set", "T=1024", "--tp", "2")
    assert r.returncode == 2 and r.stderr.startswith("symgpt: error:") and "--link-bandwidth" in r.stderr


def test_plan_json_schema_and_order():
    r = _cli("plan", "gpt2-small", "--set", "T=1024", "--devices", "8", "--global-batch", "32",
             "--device-memory", "16e9", "--peak", "100e12", "--link-bandwidth", "100e9", "--node-bandwidth",
             "10e9", "--recompute", "none", "--vp", "1", "--top", "5", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["strategies"]
    assert 0 < len(rows) <= 5
    for key in ("tp", "pp", "dp", "ep", "cp", "microbatch", "vp", "recompute", "zero", "sp", "memory", "time", "mfu"):
        assert key in rows[0]
    times = [sympy.Rational(x["time"]) for x in rows]
    assert times == sorted(times)
    assert all(sympy.Rational(x["memory"]) <= 16 * 10**9 for x in rows)
    assert all(x["tp"] * x["pp"] * x["dp"] * x["cp"] == 8 for x in rows)


@pytest.mark.parametrize("args,word", [
    (("--set", "T=1024", "--set", "B=2"), "do not --set B"),
    ((), "sequence length"),
    (("--set", "T=1024", "--recompute", "sometimes"), "expected one of"),
])
def test_plan_errors(args, word):
    r = _cli("plan", "gpt2-small", *args, "--devices", "8", "--global-batch", "32", "--device-memory", "16e9",
             "--peak", "1e14", "--link-bandwidth", "1e11", "--node-bandwidth", "1e10")
    assert r.returncode == 2 and r.stderr.startswith("symgpt: error:") and word in r.stderr, r.stderr


def test_schedule_svg_is_deterministic_and_bubble_matches(tmp_path):
    r = _cli("schedule", "--pp", "4", "--microbatches", "8", "--vp", "2")
    assert r.returncode == 0 and "bubble 3/16" in r.stdout and "equal" in r.stdout
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    for f in (a, b):
        assert _cli("schedule", "--pp", "4", "--microbatches", "8", "--format", "svg", "-o", str(f)).returncode == 0
    assert a.read_bytes() == b.read_bytes() and a.read_text().startswith("<svg")
    assert a.read_text().count("<rect") == 4 + 4 * 8 * 2        # a lane per device + every F and B
    r = _cli("schedule", "--pp", "4", "--microbatches", "6", "--vp", "2")
    assert r.returncode == 2 and "multiple of p" in r.stderr


def test_schedule_text_with_output_writes_the_file(tmp_path):
    """-o with the default text format writes what stdout would show (it once wrote nothing)."""
    f = tmp_path / "bubble.txt"
    shown = _cli("schedule", "--pp", "4", "--microbatches", "8", "--vp", "2")
    r = _cli("schedule", "--pp", "4", "--microbatches", "8", "--vp", "2", "-o", str(f))
    assert r.returncode == 0 and r.stdout == "", r.stderr
    assert f.read_text(encoding="utf-8") == shown.stdout
    # the bubble of interleaved 1F1B, (p - 1)/(v·m) = 3/16 (Narayanan et al. 2021, Sec. 2.2)
    assert "bubble 3/16 of the compute" in shown.stdout and "= 3/16: equal" in shown.stdout


def test_optimal_json():
    r = _cli("optimal", "--compute", "1e24", "--fit", "besiroglu2024", "--json")
    assert r.returncode == 0
    out = json.loads(r.stdout)
    assert out["fit"]["B"] == "208543/100" and float(out["optimal.compute"]["value"]) == 1e24


def test_symbolic_layout_memory_stays_symbolic():
    q = symgpt.load("gpt2").quantity("memory.total", pp=2, microbatches=4, tp=2, sp=True, precision="bf16")
    assert q.value is None and q.expr.free_symbols


def test_plan_with_a_hardware_profile_equals_the_datasheet_typed_in():
    """`--hardware h100-sxm` fills what the NVIDIA H100 datasheet prints (SXM column): 80 GB,
    1,979 TFLOP/s bf16 with sparsity (989.5 dense), NVLink 900 GB/s both ways (450 each way);
    the DGX H100 datasheet: one 400 Gb/s ConnectX-7 per GPU (50 GB/s), 8 GPUs a node."""
    common = ["plan", "gpt2-small", "--devices", "16", "--global-batch", "32", "--set", "T=1024", "--json"]
    by_profile = _cli(*common, "--hardware", "h100-sxm")
    typed = _cli(*common, "--device-memory", "80e9", "--peak", "989.5e12", "--link-bandwidth", "450e9",
                 "--node-bandwidth", "50e9", "--node-size", "8")
    assert by_profile.returncode == typed.returncode == 0, by_profile.stderr + typed.stderr
    assert json.loads(by_profile.stdout) == json.loads(typed.stdout)
    r = _cli("plan", "gpt2-small", "--devices", "8", "--global-batch", "8", "--hardware", "h100-pcie")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--node-bandwidth" in r.stderr


def test_time_on_a_pipeline_names_both_stages_and_the_slower():
    """The text output prices one stage; a note gives both end stages' steps (as --json gives
    them with --stage) and says the MFU uses the slower: GPT-2 small's last stage, with the head."""
    base = ["time", "gpt2-small", "--set", "B=8", "--set", "T=1024", "--hardware", "h100-sxm",
            "--precision", "mixed-bf16", "--pp", "4", "--dp", "2", "--microbatches", "8"]
    steps = {}
    for stage in ("first", "last"):
        r = _cli(*base, "--stage", stage, "--json")
        assert r.returncode == 0, r.stderr
        q = json.loads(r.stdout)["time.step"]
        steps[stage] = sympy.Rational(q.get("exact_value", q["value"]))
    r = _cli(*base)
    assert r.returncode == 0, r.stderr
    note = [ln for ln in r.stdout.splitlines() if "slower stage" in ln]
    assert len(note) == 1 and steps["last"] > steps["first"]
    assert f"first {float(steps['first']) * 1000:.4g} ms" in note[0]
    assert f"last {float(steps['last']) * 1000:.4g} ms" in note[0] and "use the last stage's" in note[0]

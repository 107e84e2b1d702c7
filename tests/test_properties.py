"""Property-based tests over random valid GPT-2 configurations. For each, the
symbolic total equals the sum of its breakdown, equals the integer it substitutes to, and equals
the parameter count of an independent PyTorch GPT-2 (tests/oracles/torch_gpt2.py) built on the
meta device; the shape trace is concrete and positive. Random invalid input through the CLI
always ends in exit 2 with one short line."""

import os
import subprocess
import sys
from pathlib import Path

import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symgpt
from attacks import check_cli, run_cli
from oracles.torch_gpt2 import GPTConfig, build
from symgpt.families import families, presets

FAMILY_NAMES = frozenset(families())  # a family's name is a model too (all sizes symbolic)
from symgpt.core.symbols import CANONICAL

PRESETS = presets()


@st.composite
def gpt2_configs(draw):
    h = draw(st.integers(1, 6))
    return dict(
        L=draw(st.integers(1, 4)), h=h, d=h * draw(st.integers(1, 12)),
        V=draw(st.integers(1, 600)), T_max=draw(st.integers(1, 64)),
        d_ff=draw(st.one_of(st.none(), st.integers(1, 200))),
        tied=draw(st.booleans()), bias=draw(st.booleans()), qkv_bias=draw(st.booleans()),
        vocab_multiple=draw(st.one_of(st.none(), st.sampled_from([1, 2, 8, 64, 128]))),
    )


def symgpt_model(c):
    sizes = {k: c[k] for k in ("L", "h", "d", "V", "T_max")}
    if c["d_ff"] is not None:
        sizes["d_ff"] = c["d_ff"]
    qkv = c["qkv_bias"] and c["bias"]  # qkv_bias=true under bias=false is a refused conflict
    return symgpt.load("gpt2", tied=c["tied"], bias=c["bias"], qkv_bias=qkv,
                       vocab_multiple=c["vocab_multiple"], **sizes)


def torch_count(c):
    cfg = GPTConfig(vocab_size=c["V"], block_size=c["T_max"], n_layer=c["L"], n_head=c["h"],
                    n_embd=c["d"], d_ff=c["d_ff"], tied=c["tied"], qkv_bias=c["qkv_bias"],
                    bias=c["bias"], vocab_multiple=c["vocab_multiple"])
    model = build(cfg, device="meta")
    return sum(p.numel() for p in model.parameters())  # shared (tied) tensors are listed once


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gpt2_configs())
def test_params_total_breakdown_value_and_pytorch_agree(c):
    m = symgpt_model(c)
    q = m.params
    assert sympy.expand(q.expr - sum(e for _, e in q.breakdown)) == 0
    value = q.value
    assert value is not None and value.is_Integer
    assert value == sum(v for v in q.values().values())
    assert q.expr.xreplace(m.bindings) == value
    assert int(value) == torch_count(c)


@settings(max_examples=40, deadline=None)
@given(gpt2_configs(), st.integers(1, 4), st.data())
def test_shapes_are_concrete_and_positive(c, B, data):
    m = symgpt_model(c)
    T = data.draw(st.integers(1, c["T_max"]))
    for t in m.shapes(B=B, T=T):
        assert all(x.is_Integer and x > 0 for x in t.shape), t


@settings(max_examples=40, deadline=None)
@given(gpt2_configs())
def test_symbolic_model_substitutes_to_the_bound_one(c):
    """The fully symbolic family, substituted, gives the bound model's count."""
    m = symgpt_model(c)
    free = symgpt.load("gpt2", tied=c["tied"], bias=c["bias"], qkv_bias=c["qkv_bias"] and c["bias"],
                       vocab_multiple=c["vocab_multiple"],
                       **({"d_ff": c["d_ff"]} if c["d_ff"] is not None else {}))
    bindings = {CANONICAL[k]: v for k, v in c.items() if k in CANONICAL and v is not None}
    assert free.params.expr.xreplace(bindings) == m.params.value


# --- random invalid input through the CLI: always exit 2 with one short line ----------------------
NAMES = set(CANONICAL) | set(symgpt.load("gpt2").flags)
not_integer = st.text(min_size=1, max_size=20).filter(
    lambda t: not t.strip(" \t").lstrip("+-").replace("_", "").isdigit() and "=" not in t
    and t.strip(" \t").lower() not in ("true", "false") and not any(c in "eE" for c in t))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["d", "h", "L", "V", "T_max", "B", "T", "d_ff"]),
       st.one_of(st.integers(max_value=0).map(str), not_integer))
def test_bad_sizes_exit_2(name, value):
    r = run_cli(["params", "gpt2-small", "--set", f"{name}={value}"])
    check_cli(r, allow=(2,))
    assert "positive integer" in r.err or "invalid value" in r.err or "expected NAME=VALUE" in r.err


@settings(max_examples=150, deadline=None)
@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True).filter(lambda n: n not in NAMES))
def test_unknown_settings_exit_2(name):
    r = run_cli(["shapes", "gpt2-small", "--set", f"{name}=1"])
    check_cli(r, allow=(2,))
    assert f"unknown setting '{name}'" in r.err


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1, max_size=40).filter(
    lambda n: n not in PRESETS and n not in FAMILY_NAMES and "/" not in n and not n.endswith(".json")
    and not n.startswith("-") and n != "--" and "\x00" not in n))
def test_unknown_models_exit_2(name):
    r = run_cli(["params", name])
    check_cli(r, allow=(2,))
    assert "unknown model" in r.err or "family" in r.err


def test_invalid_input_in_a_real_process_is_one_line():
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    for argv in (["params", "gpt2-small", "--set", "d=-1"], ["params", "nope\nnope"],
                 ["shapes", "gpt2-small", "--set", "T=1" + "0" * 50]):
        r = subprocess.run([sys.executable, "-m", "symgpt", *argv], capture_output=True, text=True,
                           env=env, timeout=120)
        assert r.returncode == 2 and r.stdout == "", (argv, r.stderr)
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("symgpt: error: "), r.stderr

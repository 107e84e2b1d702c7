"""Bugs found by pasting the README as a new user would (issue: paste-ready output)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cli(*args, cwd=ROOT):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "symgpt", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_report_on_a_family_name_with_T_bound(tmp_path):
    # was: internal error (TypeError: float() ... 'NoneType') in reportparts/costs.py
    r = cli("report", "gpt2", "--set", "T=2048", "--no-pdf", "-o", str(tmp_path / "r"))
    assert r.returncode == 0, r.stderr
    time_md = (tmp_path / "r" / "time.md").read_text()
    # hand arithmetic: a step is 3 forwards = 6·B·T·(12·L·d² + 2·L·T·d + V·d)/2 FLOPs ... at B=8,
    # T=2048, 300e12 FLOP/s: 6·16384·12/3e14 = 24/6103515625 per L·d²
    assert "24·L·d²/6103515625" in time_md, time_md
    assert "internal error" not in r.stderr


def test_latex_preamble_needs_no_model():
    r = cli("latex", "--preamble")
    assert r.returncode == 0, r.stderr
    for pkg in ("booktabs", "adjustbox", "amsmath", "siunitx", "pgfplots"):
        assert pkg in r.stdout
    r = cli("latex")
    assert r.returncode == 2 and r.stderr.startswith("symgpt: error:") and "MODEL" in r.stderr


import pytest  # noqa: E402

import clirun  # noqa: E402


@pytest.mark.parametrize("typo, meant", [("gpt2_small", "gpt2-small"), ("gpt-2", "gpt2"),
                                         ("llama2-7b", "llama-7b"), ("GPT2-Small", "gpt2-small")])
def test_a_mistyped_model_gets_a_suggestion(typo, meant):
    r = clirun.run(["params", typo])
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("symgpt: error: unknown model") and r.stderr.count("\n") == 1
    assert f"did you mean {meant}" in r.stderr, r.stderr


def test_a_binding_without_set_gets_a_suggestion():
    r = clirun.run(["flops", "gpt2-small", "T=1024"])
    assert r.returncode == 2 and "did you mean --set T=1024?" in r.stderr, r.stderr

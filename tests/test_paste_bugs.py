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


WIDE = [["check"], ["memory", "gpt2-small", "--set", "B=8", "--set", "T=1024"],
        ["flops", "gpt2-small", "--set", "B=8", "--set", "T=1024"], ["params", "mixtral-8x7b"],
        ["time", "gpt2-small", "--set", "B=8", "--set", "T=1024"], ["models", "--notes"],
        ["dominance", "gpt2-small", "memory.activations", "--as", "T", "--set", "B=8", "--set", "T=1024"],
        ["shapes", "gpt2-small", "--set", "B=8", "--set", "T=1024"],
        ["memory", "gpt3-175b", "--set", "B=1", "--set", "T=2048", "--convention", "korthikanti", "--tp", "8", "--sp"]]


@pytest.mark.parametrize("argv", WIDE, ids=" ".join)
def test_terminal_output_fits_80_columns(argv):
    # was: check ran to 365 columns, memory to about 220
    r = clirun.run(argv, columns=80)
    assert r.returncode == 0, r.stderr
    long = [line for line in r.stdout.splitlines() if len(line) > 80]
    assert not long, long[:3]
    # nothing is lost by wrapping: every grouped number of the wide output is in the narrow one
    import re

    wide = clirun.run(argv, columns=400).stdout
    numbers = re.findall(r"\d{1,3}(?:,\d{3})+", wide)
    assert all(n in r.stdout for n in numbers), argv  # (check: see the next test)


def test_check_keeps_every_figure_at_80_columns():
    narrow, wide = clirun.run(["check"], columns=80).stdout, clirun.run(["check"], columns=400).stdout
    for token in ("124439808", "Narayanan et al. 2021 Eq. 3", "-13·L·d - T_max·d", "Raschka 2024"):
        assert token in wide and token in narrow, token


def test_time_prints_one_style():
    # was: "MFU 2/5 = 40 %" for the input, "0.3889" for the result, "2.136e+06 s" beside × 10ⁿ elsewhere
    out = clirun.run(["time", "gpt2-small", "--set", "B=8", "--set", "T=1024", "--peak", "300e12", "--mfu", "0.4",
                      "--tokens", "300e9", "--measured", "0.06"], columns=100).stdout
    assert "MFU 40 %" in out and "e+" not in out
    # measured MFU = flops.train / (0.06 s · 3e14): 6,999,559,372,800 / 1.8e13 = 0.38886... (hand)
    assert "38.89 %" in out
    assert "time.mfu (%)" in out and "(ratio)" not in out   # a percentage, like the rest
    assert "2.136 × 10⁶ s" in out   # 6·(flops per token)·3e11 / (0.4·3e14)


# --- the report's shapes table: a longtable of mathematics ------------------------------------

@pytest.mark.parametrize("label,tex", [
    ("LayerNorm_1", r"\mathrm{LayerNorm}_{1}"),
    ("tok_emb", r"\mathrm{tok}_{\mathrm{emb}}"),
    ("S / √d_h", r"S/\sqrt{d_{h}}"),
    ("S = Q Kᵀ", r"S=Q\,K^{\mathsf{T}}"),
    ("X0", "X_{0}"),
    ("input ids", r"\mathrm{input}\ \mathrm{ids}"),
    ("a&b", r"a\text{\&}b"),   # anything else: escaped text
])
def test_node_labels_are_set_as_mathematics(label, tex):
    from symgpt.render.latex_escape import tex_label

    assert tex_label(label) == tex


def test_shapes_table_breaks_across_pages_and_has_no_literal_underscores():
    # was: a non-breaking float (a half-empty first page) with "LayerNorm\_1", "tok\_emb" as text
    import symgpt
    from symgpt.documents.latex_doc import fragment

    out = fragment(symgpt.load("gpt2-small", B=8, T=1024), "shapes")
    assert "(needs booktabs, amsmath, longtable)" in out
    assert r"\begin{longtable}" in out and r"\begin{table}" not in out
    assert r"\_" not in out
    assert r"$\mathrm{LayerNorm}_{1}$" in out and r"$S/\sqrt{d_{h}}$" in out


def test_unfitted_diagram_keeps_edge_labels_off_cluster_borders():
    # was: "(8, 1024, 768)" drawn on the block's dashed border (X0 -> LayerNorm_1)
    import symgpt
    from symgpt.documents.diagrams import dot_text

    m = symgpt.load("gpt2-small", B=8, T=1024)
    dot = dot_text(m)
    top = dot.split('subgraph "cluster_blocks"')[0]   # outside the block's cluster
    assert '"embedding/add -> blocks/norms/attention" [label=<(8, 1024, 768)>, shape=plain' in top
    assert '"embedding/add" -> "embedding/add -> blocks/norms/attention" [arrowhead=none];' in dot
    assert '"embedding/add" -> "blocks/norms/attention" [label=' not in dot
    # edges inside one cluster keep their ordinary labels
    assert '"blocks/norms/attention" -> "blocks/attention/qkv" [label=<(8, 1024, 768)>];' in dot

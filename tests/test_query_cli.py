"""The query commands: rule, dominance, crossover, compare -- JSON contract and human output.
Numbers are the seeds' (000: 124,439,808, 6d = 4,608; self-test (b)) and hand arithmetic."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from symgpt.cli import main


def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_rule_json(capsys):
    out = run_json(capsys, "rule", "gpt2-small", "params", "--as", "d", "--as", "V")
    assert out["rule"] == "12*L*d**2 + V*d"
    assert out["value"] == 124_439_808
    assert out["rule_value"] == 50257 * 768 + 12 * 12 * 768**2
    assert out["relative_error_exact"] == "-1182/162031"   # (123,532,032 - 124,439,808)/...
    assert abs(out["relative_error"] - (123_532_032 - 124_439_808) / 124_439_808) < 1e-15
    assert out["regime"]["growing"] == {"d": "1", "V": "1"}


def test_rule_in_terms_of_N(capsys):
    out = run_json(capsys, "rule", "gpt2", "flops.train", "--convention", "kaplan",
                   "--as", "d", "--let", "N=12*L*d^2")
    assert out["rewritten"]["N"]["rule"] == "6*N"
    out = run_json(capsys, "rule", "gpt2", "flops.forward", "--convention", "kaplan",
                   "--as", "d,T", "--let", "N=params.blocks")
    assert out["rule"] == "2*L*T*d + 24*L*d**2"


def test_rule_human_output_formula_above_number(capsys):
    assert main(["rule", "gpt2-small", "params", "--as", "d"]) == 0
    lines = capsys.readouterr().out.splitlines()
    i = lines.index("rule (leading order)")
    assert lines[i + 1].strip() == "12·L·d²" and lines[i + 2].strip() == "= 84,934,656"


def test_crossover_json_6d_and_lm_head_shift(capsys):
    out = run_json(capsys, "crossover", "gpt2-small", "flops.forward", "--as", "T",
                   "--part", "blocks")
    assert out["solution"] == "6*d" and out["value"] == 4608
    assert out["whole"]["solution"] == "6*d + V/(2*L)"
    assert out["whole"]["value_exact"] == "160849/24"
    assert out["whole"]["shift"] == "V/(2*L)" and out["whole"]["shift_value_exact"] == "50257/24"
    assert any("T_max" in n for n in out["notes"])


def test_crossover_against(capsys):
    out = run_json(capsys, "crossover", "gpt2-small", "flops.forward", "--as", "T",
                   "--part", "blocks/attention/scores,blocks/attention/values",
                   "--against", "blocks/attention/qkv,blocks/attention/proj,blocks/ffn")
    assert out["value"] == 4608


def test_dominance_json(capsys):
    out = run_json(capsys, "dominance", "gpt2", "params", "--as", "d")
    assert out["dominant"] == "12*L*d**2"
    assert [t["order"] for t in out["terms"]] == ["2", "1"]
    shares = {p["path"]: p["share_limit"] for p in out["parts"]}
    assert shares["embedding/token"] == "0" and shares["blocks/ffn/up"] == "1/3"


def test_dominance_without_as_ranks(capsys):
    out = run_json(capsys, "dominance", "gpt2-small", "memory.activations", "--set", "B=8",
                   "--set", "T=1024")
    assert out["parts"][0]["path"] == "blocks/attention/softmax"
    assert out["parts"][0]["value"] == 8 * 12 * 1024**2 * 4 * 12


def test_compare_json(capsys):
    out = run_json(capsys, "compare", "gpt2-small", "params", "V*d + 12*L*d^2 + 2*d")
    assert out["equal"] is False
    assert out["difference"] == "-13*L*d - T_max*d"
    assert out["difference_value"] == -906_240
    assert Fraction(out["relative_error_exact"]) == Fraction(-906_240, 124_439_808)
    out = run_json(capsys, "compare", "gpt2", "params", "12*L*d^2 + 13*L*d + V*d + T_max*d + 2*d")
    assert out["equal"] is True and out["difference"] == "0"


@pytest.mark.parametrize("argv", [
    ["compare", "gpt2-small", "params", "__import__('os').system('touch /tmp/pwned_q4_cli')"],
    ["compare", "gpt2-small", "params", "d", "--let", "N=__import__('os')"],
    ["rule", "gpt2-small", "params", "--as", "d:__import__('os')"],
    ["rule", "gpt2-small", "params", "--as", "os.system"],
    ["crossover", "gpt2-small", "flops.forward", "--as", "T", "--part", "nope"],
    ["compare", "gpt2-small", "flops.forward", "d", "--option", "x=$(touch /tmp/pwned_q4_cli)"],
    ["dominance", "gpt2", "params"],
])
def test_bad_input_one_line_exit_2(capsys, argv):
    pwned = Path("/tmp/pwned_q4_cli")
    pwned.unlink(missing_ok=True)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("symgpt: error: ") and err.count("\n") == 1
    assert not pwned.exists()


# --- human output, guarded by golden files (SYMGPT_REGEN_GOLDEN=1 regenerates them) --------



@pytest.mark.parametrize("name,argv", [
    ("query_rule_gpt2-small_params_d_V.txt", ["rule", "gpt2-small", "params", "--as", "d,V"]),
    ("query_crossover_gpt2-small_T_blocks.txt",
     ["crossover", "gpt2-small", "flops.forward", "--as", "T", "--part", "blocks"]),
    ("query_compare_gpt2-small_seed000_rule.txt",
     ["compare", "gpt2-small", "params", "V*d + 12*L*d^2 + 2*d"]),
    ("query_dominance_gpt2_params_d.txt", ["dominance", "gpt2", "params", "--as", "d", "--depth", "2"]),
])
def test_human_output_golden(capsys, name, argv):
    from helpers import golden

    assert main(argv) == 0
    golden(name, capsys.readouterr().out)

"""The core CLI contract: params/shapes/models/report, JSON, and one-line errors with exit 2."""

import json
import subprocess
import sys

import pytest

from symgpt.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_params_json_contract(capsys):
    code, out, err = run(capsys, "params", "gpt2-small", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["model"] == "gpt2-small"
    assert data["bindings"] == {"L": 12, "h": 12, "d": 768, "V": 50257, "T_max": 1024}
    assert data["flags"]["tied"] is True
    p = data["params"]
    assert p["value"] == 124_439_808 and isinstance(p["value"], int)
    assert p["expression"] == "12*L*d**2 + 13*L*d + T_max*d + V*d + 2*d"
    assert sum(e["value"] for e in p["breakdown"].values()) == 124_439_808
    assert p["breakdown"]["lm_head"] == {"expression": "0", "value": 0}
    assert p["breakdown"]["embedding/token"]["expression"] == "V*d"


@pytest.mark.parametrize("settings,expected", [
    (["tied=false"], 163_037_184),
    (["qkv_bias=false"], 124_412_160),
    (["tied=false", "qkv_bias=false"], 163_009_536),
    (["bias=false"], 124_337_664),
])
def test_set_flags(capsys, settings, expected):
    argv = ["params", "gpt2-small", "--json"]
    for s in settings:
        argv += ["--set", s]
    code, out, _ = run(capsys, *argv)
    assert code == 0 and json.loads(out)["params"]["value"] == expected


def test_params_human_output_has_formula_then_number(capsys):
    code, out, _ = run(capsys, "params", "gpt2-small")
    assert code == 0
    lines = out.splitlines()
    formula = next(i for i, line in enumerate(lines) if "12·L·d²" in line)
    assert lines[formula + 1].strip() == "= 124,439,808"
    assert "embedding/token" in out and "38,597,376" in out


def test_symbolic_family_has_null_value(capsys):
    code, out, _ = run(capsys, "params", "gpt2", "--json")
    assert code == 0 and json.loads(out)["params"]["value"] is None


def test_shapes_json(capsys):
    code, out, _ = run(capsys, "shapes", "gpt2-small", "--set", "B=8", "--set", "T=1024", "--json")
    tensors = json.loads(out)["tensors"]
    assert tensors[0] == {"name": "input_ids", "label": "input ids", "op": "input",
                          "shape": [8, 1024], "symbolic": ["B", "T"], "repeated": None}
    named = {t["name"]: t for t in tensors}
    assert named["blocks/attention/scores"]["shape"] == [8, 12, 1024, 1024]
    assert named["lm_head"]["shape"] == [8, 1024, 50257]


def test_models_lists_presets(capsys):
    code, out, _ = run(capsys, "models", "--json")
    models = {m["name"]: m for m in json.loads(out)["models"]}
    assert models["gpt2-small"]["params"] == 124_439_808
    assert models["gpt2-medium"]["params"] == 354_823_168  # released checkpoint (transformers)
    assert "1.3b" in " ".join(models) and models["gpt3-1.3b"]["note"]


BAD = [
    (["params", "no-such-model"], "unknown model 'no-such-model'"),
    (["params", "gpt2-small", "--set", "d=770"], "d must be divisible by h"),
    (["params", "gpt2-small", "--set", "d=0"], "d must be a positive integer"),
    (["params", "gpt2-small", "--set", "d=-5"], "d must be a positive integer"),
    (["params", "gpt2-small", "--set", "d=7.5"], "invalid value"),
    (["params", "gpt2-small", "--set", "T=2048"], "T must not exceed T_max"),
    (["params", "gpt2-small", "--set", "wat=1"], "unknown setting 'wat'"),
    (["params", "gpt2-small", "--set", "tied=3"], "flag tied takes true or false"),
    (["params", "gpt2-small", "--set", "d=__import__('os')"], "invalid value"),
    (["params", "gpt2-small", "--set", "nonsense"], "expected NAME=VALUE"),
    (["params"], "required"),
    (["frobnicate"], "invalid choice"),
]


@pytest.mark.parametrize("argv,message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("symgpt: error: ")
    assert message in err


def test_entry_point_runs_as_module():
    r = subprocess.run([sys.executable, "-m", "symgpt", "params", "gpt2-small", "--set", "h=0"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == "symgpt: error: h must be a positive integer, got 0"


def test_help_lists_commands():
    r = subprocess.run([sys.executable, "-m", "symgpt", "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    for cmd in ("models", "params", "shapes", "report"):
        assert cmd in r.stdout


def test_report_writes_core_files(tmp_path):
    out = tmp_path / "rep"
    r = subprocess.run([sys.executable, "-m", "symgpt", "report", "gpt2-small", "-o", str(out), "--no-pdf"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    params = json.loads((out / "params.json").read_text())
    assert params["params"]["value"] == 124_439_808
    assert params["bindings"]["B"] == 8 and params["bindings"]["T"] == 1024
    shapes = json.loads((out / "shapes.json").read_text())
    assert {t["name"]: t["shape"] for t in shapes["tensors"]}["lm_head"] == [8, 1024, 50257]
    assert "124,439,808" in (out / "params.md").read_text()
    assert (out / "index.md").exists()
    # no staging folders left behind
    assert [p.name for p in tmp_path.iterdir()] == ["rep"]

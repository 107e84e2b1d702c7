"""The flops / memory / time commands: JSON contract, human output, options, errors."""

import json

import pytest

from symgpt.cli import main

BT = ["--set", "B=8", "--set", "T=1024"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_flops_json_contract(capsys):
    code, out, err = run(capsys, "flops", "gpt2-small", *BT, "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["model"] == "gpt2-small" and data["convention"] == "default"
    assert data["bindings"]["B"] == 8
    train = data["flops.train"]
    assert train["value"] == 3 * data["flops.forward"]["value"]  # lecture note 7.3 §5.2: 3 × forward
    assert train["expression"] == "12*B*L*T**2*d + 72*B*L*T*d**2 + 6*B*T*V*d"
    assert sum(e["value"] for e in train["breakdown"].values()) == train["value"]
    assert train["convention"] == "default" and train["unit"] == "FLOPs"
    assert data["flops.forward"]["breakdown"]["lm_head"]["expression"] == "2*B*T*V*d"  # 2BTVd


def test_flops_human_output(capsys):
    code, out, _ = run(capsys, "flops", "gpt2-small", *BT, "--convention", "megatron")
    assert code == 0
    lines = out.splitlines()
    i = lines.index("flops.train (FLOPs), convention: megatron")
    assert lines[i + 1].strip() == "16·B·L·T²·d + 96·B·L·T·d² + 6·B·T·V·d"  # Megatron Eq. 3
    assert lines[i + 2].startswith("  = 8,700,366,422,016")
    assert "blocks/attention/qkv" in out and "Narayanan" in out


def test_flops_unbound_says_how_to_bind(capsys):
    code, out, _ = run(capsys, "flops", "gpt2-small")
    assert code == 0
    assert "(symbolic)" in out and "--set B=8 --set T=1024" in out


@pytest.mark.parametrize("per,value", [("sequence", 874_944_921_600), ("token", 854_438_400)])
def test_flops_per(capsys, per, value):
    code, out, _ = run(capsys, "flops", "gpt2-small", *BT, "--per", per, "--json")
    assert json.loads(out)["flops.train"]["value"] == value  # 6,999,559,372,800 / 8 (/ 1024)


def test_memory_json_contract(capsys):
    code, out, _ = run(capsys, "memory", "gpt2-small", *BT, "--precision", "mixed-fp16",
                       "--optimizer", "adam", "--json")
    assert code == 0
    data = json.loads(out)
    for name in ("memory.weights", "memory.gradients", "memory.optimizer", "memory.activations",
                 "memory.logits", "memory.kv_cache", "memory.total"):
        assert data[name]["unit"] == "bytes" and isinstance(data[name]["value"], int)
    assert data["memory.optimizer"]["value"] == 12 * 124_439_808  # lecture note 7.3 §5.4: 12 · #θ
    assert data["options"]["precision"] == "mixed-fp16"
    assert set(data["three_term_estimate"]["breakdown"]) == {"BTd", "BhT^2", "4BTd"}


def test_memory_human_output_labels_units(capsys):
    code, out, _ = run(capsys, "memory", "gpt2-small", *BT, "--zero", "3", "--dp", "8")
    assert code == 0
    assert "GB (10⁹) / GiB (2³⁰)" in out and "ZeRO stage 3 over dp = 8" in out
    assert "the textbook estimate, three named terms" in out


def test_memory_tp_sp(capsys):
    _, out1, _ = run(capsys, "memory", "gpt2-small", *BT, "--tp", "4", "--json")
    _, out2, _ = run(capsys, "memory", "gpt2-small", *BT, "--tp", "4", "--sp", "--json")
    a1, a2 = (json.loads(o)["memory.activations"]["value"] for o in (out1, out2))
    assert a2 < a1


def test_time_command(capsys):
    code, out, _ = run(capsys, "time", "gpt2-small", *BT, "--peak", "300e12", "--mfu", "0.5",
                       "--measured", "0.05", "--tokens", "1e9", "--json")
    assert code == 0
    data = json.loads(out)
    assert round(data["time.step"]["value"] * 1000, 1) == 46.7  # 7.0 × 10¹² / (1.5 × 10¹⁴)
    assert round(data["time.mfu"]["value"], 3) == 0.467
    assert round(data["loss.initial"]["value"], 2) == 10.82      # lesson LM4-T5
    code, out, _ = run(capsys, "time", "gpt2-small", *BT)
    assert "23.33 ms" in out and "10.8249 nats" in out


@pytest.mark.parametrize("argv,message", [
    (["flops", "gpt2-small", "--convention", "nope"], "known conventions: default"),
    (["memory", "gpt2-small", "--sp"], "set tp > 1"),
    (["memory", "gpt2-small", "--dp", "0"], "positive integer"),
    (["time", "gpt2-small", "--mfu", "2"], "mfu must be positive at most 1"),
    (["time", "gpt2-small", "--peak", "__import__('os')"], ""),
])
def test_errors_are_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("symgpt: error: ") and err.count("\n") == 1 and message in err


def test_report_costs_part(tmp_path):
    import symgpt

    from symgpt.documents.reportparts import costs

    m = symgpt.load("gpt2-small", B=8, T=1024)
    files = costs.write(m, tmp_path)
    assert files == ["flops.json", "flops.md", "memory.json", "memory.md", "time.md"]
    flops = json.loads((tmp_path / "flops.json").read_text())
    assert flops["flops.train"]["value"] == 6_999_559_372_800
    assert set(flops["conventions"]) >= {"default", "kaplan", "chinchilla", "megatron", "korthikanti", "palm"}
    assert "GiB" in (tmp_path / "memory.md").read_text()
    again = tmp_path / "again"
    again.mkdir()
    costs.write(m, again)
    for f in files:  # deterministic
        assert (again / f).read_bytes() == (tmp_path / f).read_bytes()


# --- human output, guarded by golden files (SYMGPT_REGEN_GOLDEN=1 regenerates them) --------------
@pytest.mark.parametrize("name,argv", [
    ("flops_gpt2-small_B8_T1024.txt", ["flops", "gpt2-small", *BT]),
    ("flops_gpt2_kaplan.txt", ["flops", "gpt2", "--convention", "kaplan"]),
    ("memory_gpt2-small_B8_T1024_mixed-bf16.txt", ["memory", "gpt2-small", *BT, "--precision", "mixed-bf16"]),
    ("time_gpt2-small_B8_T1024.txt", ["time", "gpt2-small", *BT, "--mfu", "0.4", "--tokens", "300e9"]),
])
def test_human_output_golden(capsys, name, argv):
    from helpers import golden

    assert main(argv) == 0
    golden(name, capsys.readouterr().out)

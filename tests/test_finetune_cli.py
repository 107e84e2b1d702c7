"""--finetune on params, flops, memory and time: the JSON's params.trainable and params.frozen
equal the API's (which tests/test_finetune.py checks against peft), every answer names what is
trained, bad values are one line and exit 2, and no --finetune leaves the answers as they were."""

import json

import pytest

import symgpt
from clirun import run
from symgpt.derive.finetune import FineTune, apply


def _json(argv):
    r = run([*argv, "--json"])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_params_json_gains_trainable_and_frozen():
    out = _json(["params", "llama-7b", "--finetune", "lora", "--lora-rank", "16", "--lora-targets", "q,v"])
    api = apply(symgpt.load("llama-7b"), FineTune("lora", 16, ("q", "v")))
    # by hand: r·(d + d) for q and for v (LLaMA-7B: no grouped KV heads), × 32 layers
    assert out["params.trainable"]["value"] == 32 * 2 * 16 * (4096 + 4096) == api.quantity("params.trainable").value
    assert out["params.frozen"]["value"] == 6_738_415_616
    assert out["params"]["value"] == 6_738_415_616 + 32 * 2 * 16 * 8192
    assert out["finetune"]["targets"] == ["q", "v"] and "Hu et al. 2021" in out["finetune"]["note"]


@pytest.mark.parametrize("command", ["flops", "memory", "time"])
def test_cost_commands_take_finetune(command):
    extra = ["--set", "B=1", "--set", "T=128"] + (["--peak", "1e15"] if command == "time" else [])
    out = _json([command, "gpt2-small", "--finetune", "lora", "--lora-targets", "q,k,v", *extra])
    m = apply(symgpt.load("gpt2-small", B=1, T=128), FineTune("lora", 8, ("q", "k", "v")))
    assert out["params.trainable"]["value"] == 12 * 8 * (768 + 3 * 768) == m.quantity("params.trainable").value
    if command == "flops":
        assert out["flops.train"]["value"] == m.quantity("flops.train").value
    if command == "memory":
        assert out["memory.gradients"]["value"] == 4 * out["params.trainable"]["value"]  # fp32 by default
    text = run([command, "gpt2-small", "--finetune", "lora", "--lora-targets", "q,k,v", *extra])
    assert text.returncode == 0 and "every base parameter frozen" in " ".join(text.stdout.split())


def test_without_finetune_nothing_changes():
    for argv in (["params", "gpt2-small"], ["flops", "gpt2-small", "--set", "B=2", "--set", "T=64"],
                 ["memory", "gpt2-small", "--set", "B=2", "--set", "T=64"]):
        plain, full = run([*argv, "--json"]), run([*argv, "--json", "--finetune", "full"])
        a, b = json.loads(plain.stdout), json.loads(full.stdout)
        assert "params.trainable" not in a
        assert b.pop("params.frozen")["value"] == 0
        assert b.pop("params.trainable")["value"] == symgpt.load("gpt2-small").params.value
        assert a == b


@pytest.mark.parametrize("argv,message", [
    (["params", "gpt2-small", "--finetune", "ia3"], "invalid choice"),
    (["params", "gpt2-small", "--lora-rank", "4"], "needs --finetune"),
    (["params", "gpt2-small", "--finetune", "lora", "--lora-rank", "0"], "positive integer"),
    (["params", "gpt2-small", "--finetune", "lora", "--lora-targets", "q"], "fused projection"),
    (["params", "gpt2-small", "--finetune", "lora", "--lora-targets", "q,x"], "unknown LoRA target"),
    (["params", "gpt2-small", "--finetune", "lora", "--lora-train", "norms"], "embedding and/or head"),
    (["params", "gpt2-small", "--finetune", "full", "--lora-rank", "4"], "no effect"),
    (["params", "gpt2-small", "--finetune", "lora", "--qlora-base", "int8"], "needs --finetune qlora"),
    (["memory", "gpt2-small", "--finetune", "lora", "--lora-dropout", "1.5"], "dropout"),
    (["memory", "gpt2-small", "--finetune", "lora", "--lora-alpha", "x"], "lora-alpha"),
    (["memory", "gpt2-small", "--finetune", "lora", "--tp", "2"], "tensor parallelism"),
    (["params", "mixtral-8x7b", "--finetune", "lora", "--lora-targets", "up"], "experts"),
])
def test_bad_values_are_one_line_and_exit_2(argv, message):
    r = run(argv)
    assert r.returncode == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("symgpt: error: ") and message in lines[0], r.stderr


def test_a_changed_copy_stays_fine_tuned():
    # a derivation that sets a flag (--dropout on GPT-2) works on a copy of the model
    m = apply(symgpt.load("gpt2-small", B=1, T=64), FineTune("lora", 8, ("q", "k", "v")))
    copy = m.with_(dropout=True)
    assert copy.quantity("params.trainable").value == m.quantity("params.trainable").value == 12 * 8 * 4 * 768
    assert copy.notes == m.notes
    grads = m.quantity("memory.gradients", dropout=True, precision="bf16").value
    assert grads == 2 * 12 * 8 * 4 * 768

"""symgpt plan and --finetune: full fine-tuning is the plan itself (every parameter trained);
adapters on a frozen base are planned with tp = cp = ep = 1; a LoRA option without adapters is
refused as params, flops and memory refuse it."""

import json

import pytest

from clirun import run

PLAN = ["plan", "gpt2-small", "--devices", "8", "--global-batch", "64", "--hardware", "h100-sxm",
        "--set", "T=1024", "--top", "3", "--microbatch", "1,2", "--vp", "1"]


def test_full_is_the_plan_itself():
    plain, full = run(PLAN), run([*PLAN, "--finetune", "full"])
    assert plain.returncode == 0, plain.stderr
    assert full.returncode == 0 and full.stdout == plain.stdout


@pytest.mark.parametrize("method", ["lora", "dora", "qlora"])
def test_adapters_are_planned_on_data_parallel_ranks(method):
    # the adapters' split over tensor, context and expert ranks is not modelled: those stay 1
    # (tests/test_finetune_cluster.py checks the numbers against hand-worked formulas)
    r = run([*PLAN, "--finetune", method, "--json"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["strategies"] and all((s["tp"], s["cp"], s["ep"]) == (1, 1, 1) for s in out["strategies"])
    assert any("tp, cp and ep held at 1" in n for n in out["notes"])


@pytest.mark.parametrize("extra,message", [(["--lora-rank", "4"], "--lora-rank needs --finetune"),
                                           (["--finetune", "full", "--lora-rank", "4"], "no effect with --finetune full"),
                                           (["--finetune", "ia3"], "--finetune")])
def test_bad_lora_options(extra, message):
    r = run([*PLAN, *extra])
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1

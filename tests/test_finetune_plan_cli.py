"""symgpt plan and --finetune: full fine-tuning is the plan itself (every parameter trained);
adapters on a frozen base are refused in one line naming what is not modelled; a LoRA option
without adapters is refused as params, flops and memory refuse it."""

import pytest

from clirun import run

PLAN = ["plan", "gpt2-small", "--devices", "8", "--global-batch", "64", "--hardware", "h100-sxm",
        "--set", "T=1024", "--top", "3", "--microbatch", "1,2", "--vp", "1"]


def test_full_is_the_plan_itself():
    plain, full = run(PLAN), run([*PLAN, "--finetune", "full"])
    assert plain.returncode == 0, plain.stderr
    assert full.returncode == 0 and full.stdout == plain.stdout


@pytest.mark.parametrize("method", ["lora", "dora", "qlora"])
def test_adapters_are_refused_in_one_line(method):
    r = run([*PLAN, "--finetune", method])
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"symgpt: error: plan --finetune {method} is not modelled")
    assert f"symgpt memory MODEL --finetune {method}" in r.stderr


@pytest.mark.parametrize("extra,message", [(["--lora-rank", "4"], "--lora-rank needs --finetune"),
                                           (["--finetune", "full", "--lora-rank", "4"], "no effect with --finetune full"),
                                           (["--finetune", "ia3"], "--finetune")])
def test_bad_lora_options(extra, message):
    r = run([*PLAN, *extra])
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1

"""LoRA on a cluster: the data-parallel collectives carry the adapters' gradients only (the frozen
base has none), checked against hand-worked ring formulas (an all-reduce of S bytes over n ranks
sends 2(n − 1)/n · S from each rank; a reduce-scatter or all-gather (n − 1)/n · S); multi-device
``time`` and ``plan --finetune`` priced from them; what stays refused, in one line."""

import json
from fractions import Fraction

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.derive.finetune import FineTune, apply

from clirun import run

# llama-7b (d 4096, d_ff 11008, L 32), LoRA r = 16 on every linear layer of the blocks:
# q, k, v, o are d -> d (r·2d each), gate and up d -> d_ff, down d_ff -> d (r·(d + d_ff) each)
L, D, DFF, R = 32, 4096, 11008, 16
LLAMA_ADAPTERS = L * R * (4 * 2 * D + 3 * (D + DFF))
# gpt2-small (d 768, L 12), r = 8 on q,k,v (c_attn, 768 -> 2304) and o (c_proj, 768 -> 768)
GPT2_ADAPTERS = 12 * 8 * ((768 + 2304) + (768 + 768))


def _llama():
    return apply(symgpt.load("llama-7b", B=1, T=2048), FineTune("lora", R))


def test_adapter_count_by_hand():
    assert _llama().quantity("params.trainable").value == LLAMA_ADAPTERS == 39_976_960


@pytest.mark.parametrize("dp", [2, 8, 64])
def test_dp_all_reduce_carries_the_adapters_gradients_only(dp):
    m = _llama()
    got = m.quantity("comm.dp", dp=dp, precision="bf16").value
    assert got == 2 * sympy.Rational(dp - 1, dp) * LLAMA_ADAPTERS * 2
    # against the same model fully trained: every parameter's gradient
    full = symgpt.load("llama-7b", B=1, T=2048).quantity("comm.dp", dp=dp, precision="bf16").value
    assert full == 2 * sympy.Rational(dp - 1, dp) * 6_738_415_616 * 2


def test_zero_1_and_2_reduce_scatter_gradients_and_gather_updated_adapters():
    # Megatron-LM's bf16 recipe: fp32 gradients (4 bytes), bf16 weights (2 bytes)
    for zero in (1, 2):
        q = _llama().quantity("comm.dp", dp=8, zero=zero, precision="mixed-bf16-fp32grad")
        parts = q.values()
        assert parts["dp/gradient reduce-scatter"] == sympy.Rational(7, 8) * LLAMA_ADAPTERS * 4
        assert parts["dp/weight all-gather"] == sympy.Rational(7, 8) * LLAMA_ADAPTERS * 2
        assert q.value == sympy.Rational(7, 8) * LLAMA_ADAPTERS * 6


def test_offloaded_optimizer_moves_the_adapters_only():
    # ZeRO-Offload: the gradients down and the updated weights back, for the trained parameters
    q = _llama().quantity("offload.traffic", precision="mixed-bf16", offload=True)
    assert q.value == (2 + 2) * LLAMA_ADAPTERS


def test_a_frozen_tied_embedding_sends_no_gradient_between_pipeline_ends():
    base = symgpt.load("gpt2-small", B=1, T=1024)
    tied = [p for p in base.quantity("comm.pp", pp=2, precision="bf16").paths() if "tied" in p]
    assert tied  # fully trained: the first and last stage sum the tied weight's gradient
    lora = apply(base, FineTune("lora", 8, ("q", "k", "v", "o")))
    assert not [p for p in lora.quantity("comm.pp", pp=2, precision="bf16").paths() if "tied" in p]
    trained = apply(base, FineTune("lora", 8, ("q", "k", "v", "o"), train=("embedding",)))
    parts = trained.quantity("comm.pp", pp=2, precision="bf16").values()
    (key,) = [p for p in parts if "tied" in p]
    assert parts[key] == 2 * sympy.Rational(1, 2) * 50257 * 768 * 2  # all-reduce over 2 ranks, bf16


def test_time_on_data_parallel_ranks():
    argv = ["time", "gpt2-small", "--finetune", "lora", "--lora-targets", "q,k,v,o", "--dp", "8",
            "--link-bandwidth", "450e9", "--node-bandwidth", "50e9", "--precision", "bf16",
            "--set", "B=1", "--set", "T=1024", "--json"]
    r = run(argv)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    # 8 ranks in one node of 8: the link inside the node
    assert Fraction(out["time.comm"]["exact_value"]) == Fraction(2 * 7 * GPT2_ADAPTERS * 2, 8) / Fraction(450 * 10**9)
    assert out["params.trainable"]["value"] == GPT2_ADAPTERS
    text = run(argv[:-1])
    assert text.returncode == 0
    assert "data-parallel collectives carry the trainable parameters' gradients" in " ".join(text.stdout.split())


@pytest.mark.parametrize("extra,message", [
    (["--dp", "8", "--zero", "3", "--finetune", "qlora"], "ZeRO-3 with a quantized base (QLoRA) is not modelled"),
    (["--dp", "4", "--tp", "2"], "tensor parallelism of LoRA adapters is not modelled"),
    (["--dp", "2", "--cp", "4"], "context parallelism with a frozen base is not modelled"),
])
def test_cluster_refusals_are_one_line(extra, message):
    r = run(["time", "llama-7b", "--finetune", "lora", "--hardware", "h100-sxm", "--set", "B=1", "--set", "T=2048",
             *extra])
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("symgpt: error: ") and message in lines[0], r.stderr


def test_expert_parallelism_of_a_frozen_base_is_refused():
    m = apply(symgpt.load("mixtral-8x7b", B=1, T=512), FineTune("lora", 8, ("q", "k", "v", "o")))
    with pytest.raises(SymgptError, match="expert parallelism with a frozen base is not modelled"):
        m.quantity("comm.ep", dp=8, ep=8)


PLAN = ["plan", "gpt2-small", "--devices", "8", "--global-batch", "64", "--hardware", "h100-sxm",
        "--set", "T=1024", "--top", "3", "--microbatch", "1,2", "--vp", "1"]


def test_plan_lora_prices_the_adapters_on_data_parallel_ranks():
    r = run([*PLAN, "--finetune", "lora", "--lora-targets", "q,k,v,o", "--json"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    rows = out["strategies"]
    assert rows and all((s["tp"], s["cp"], s["ep"], s["sp"]) == (1, 1, 1, False) for s in rows)
    assert any("tp, cp and ep held at 1" in n for n in out["notes"])
    for s in rows:
        if s["pp"] == 1:  # ZeRO-1 (the plan's default) over dp ranks: RS of bf16 gradients + AG of bf16 adapters
            n = s["dp"]
            assert Fraction(s["comm_bytes"]) == Fraction(n - 1, n) * GPT2_ADAPTERS * (2 + 2)
    # the best row is the one-layout derivation of the same strategy
    best = rows[0]
    one = run(["time", "gpt2-small", "--finetune", "lora", "--lora-targets", "q,k,v,o", "--hardware", "h100-sxm",
               "--precision", "mixed-bf16", "--dp", str(best["dp"]), "--pp", str(best["pp"]), "--zero",
               str(best["zero"]), "--microbatches", str(best["microbatches"]), "--recompute", best["recompute"],
               "--set", f"B={best['microbatch']}", "--set", "T=1024", "--json"])
    assert one.returncode == 0, one.stderr
    assert Fraction(json.loads(one.stdout)["time.step"]["exact_value"]) == Fraction(best["time"])


def test_plan_of_a_frozen_base_prices_zero_3():
    """plan --finetune lora --zero 3: every weight (the frozen base's 124,439,808 and the adapters) gathered
    in bf16 for forward and again for backward each micro-batch, the adapters' bf16 gradients
    reduce-scattered: m·(n − 1)/n·(2·2·(Ψ + A) + 2·A) bytes on one pipeline stage."""
    r = run([*PLAN, "--finetune", "lora", "--lora-targets", "q,k,v,o", "--zero", "3", "--json"])
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["strategies"]
    base = 12 * 12 * 768 ** 2 + 13 * 12 * 768 + 50257 * 768 + 1024 * 768 + 2 * 768
    assert base == 124_439_808 and rows and all(s["zero"] == 3 for s in rows)
    for s in rows:
        if s["pp"] == 1:
            n, m = s["dp"], s["microbatches"]
            assert Fraction(s["comm_bytes"]) == m * Fraction(n - 1, n) * (2 * 2 * (base + GPT2_ADAPTERS)
                                                                          + 2 * GPT2_ADAPTERS)


def test_dora_all_reduces_its_magnitudes_too():
    # DoRA's magnitude m is trained: d_out more gradients per adapted layer (q, k, v, o: d; gate,
    # up: d_ff; down: d)
    m = apply(symgpt.load("llama-7b", B=1, T=2048), FineTune("dora", R))
    trained = LLAMA_ADAPTERS + L * (5 * D + 2 * DFF)
    assert m.quantity("params.trainable").value == trained
    assert m.quantity("comm.dp", dp=8, precision="bf16").value == 2 * sympy.Rational(7, 8) * trained * 2

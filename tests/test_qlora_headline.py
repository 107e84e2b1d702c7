"""QLoRA's headline with the command line alone: LLaMA-65B fine-tuned on one 48 GB device
(Dettmers et al. 2023, abstract), with the llama-65b preset and the paged AdamW optimizer.

Oracles: the LLaMA paper's Table 2 (d 8,192, 64 heads, 80 layers; 65.2B parameters) and the
released code's FFN rule (d_ff = 256·ceil((2/3·4d)/256)); QLoRA's bytes worked by hand: NF4 at
4 + 8/64 + 32/(64·256) bits per block weight (Sec. 3), the head, embeddings and norms in bf16,
adapters and their gradients in bf16, bitsandbytes' PagedAdamW32bit's two fp32 states per adapter
parameter."""

import json
import math
from fractions import Fraction

import symgpt
from clirun import run

L, d, h, d_ff, V = 80, 8192, 64, 22016, 32000


def test_llama_65b_is_the_papers_table_2():
    assert 256 * math.ceil(Fraction(2, 3) * 4 * d / 256) == d_ff
    m = symgpt.load("llama-65b")
    assert (m.sizes["L"], m.sizes["d"], m.sizes["h"], m.sizes["d_ff"], m.sizes["V"]) == (L, d, h, d_ff, V)
    by_hand = L * (4 * d * d + 3 * d * d_ff + 2 * d) + 2 * V * d + d
    assert m.params.value == by_hand == 65_285_660_672
    assert by_hand // 10**8 == 652  # "65.2B": Table 2 truncates to a tenth of a billion (6.7B: 6,738,415,616)


def test_qlora_65b_under_48_gb_from_the_command_line():
    argv = ["memory", "llama-65b", "--finetune", "qlora", "--lora-rank", "64", "--precision", "bf16",
            "--optimizer", "paged-adamw-32bit", "--recompute", "full", "--set", "B=1", "--set", "T=512"]
    r = run([*argv, "--json"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    r_ = 64
    trainable = L * r_ * (4 * (d + d) + 2 * (d + d_ff) + (d_ff + d))
    assert out["params.trainable"]["value"] == trainable
    linear = L * (4 * d * d + 3 * d * d_ff)
    nf4 = Fraction(linear) * (4 + Fraction(8, 64) + Fraction(32, 64 * 256)) / 8
    weights = nf4 + 2 * (2 * V * d + 2 * L * d + d) + 2 * trainable
    assert Fraction(out["memory.weights"]["value"]) == weights
    assert out["memory.gradients"]["value"] == 2 * trainable
    assert out["memory.optimizer"]["value"] == 8 * trainable          # two fp32 states, no master copy
    total = out["memory.total"]["value"]
    assert total == weights + 10 * trainable + out["memory.activations"]["value"]
    assert 40e9 < total < 48e9                                          # "a single 48GB GPU"
    notes = " ".join(out["memory.total"]["notes"])
    assert "PagedAdamW32bit" in notes and "Dettmers et al. 2023" in notes
    text = run(argv)
    assert text.returncode == 0 and "44.8 GB" in text.stdout and "PagedAdamW32bit" in text.stdout


def test_paged_adamw_keeps_fp32_states_whatever_the_precision():
    m = symgpt.load("gpt2-small")
    n = m.params.value
    for precision, master in (("bf16", 0), ("mixed-bf16", 4), ("fp32", 0)):
        q = m.quantity("memory.optimizer", precision=precision, optimizer="paged-adamw-32bit")
        assert q.value == (master + 8) * n
    # no note added to the other optimizers' answers
    plain = m.quantity("memory.total", precision="bf16", optimizer="adamw")
    assert not any("PagedAdamW32bit" in note for note in plain.notes)

"""ZeRO-3 of a frozen base (LoRA, DoRA: a full-precision base) under the ZeRO paper's stage 3 (Rajbhandari
et al. 2019, Sec. 7.2.2): every weight, frozen or trained, partitioned over the data-parallel ranks and
all-gathered for forward and again for backward each micro-batch; only the trainable parameters have
gradients to reduce-scatter and optimizer state to shard. Oracles: hand-worked ring formulas (an
all-gather or reduce-scatter of S bytes over n ranks sends (n − 1)/n · S from each rank) and, for the full
case, the paper's volume (3Ψ per step against data parallelism's 2Ψ)."""

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.derive.finetune import FineTune, apply

# llama-7b (d 4096, d_ff 11008, L 32, V 32,000, untied head): Ψ parameters; LoRA r = 16 on every linear
# of the blocks: q, k, v, o d -> d (r·2d each); gate, up d -> d_ff and down d_ff -> d (r·(d + d_ff) each)
L, D, DFF, V, R = 32, 4096, 11008, 32000, 16
PSI = L * (4 * D * D + 3 * D * DFF + 2 * D) + 2 * V * D + D
ADAPTERS = L * R * (4 * 2 * D + 3 * (D + DFF))
OPT = dict(dp=8, zero=3, microbatches=2, precision="mixed-bf16-fp32grad")   # bf16 weights, fp32 gradients


def _lora(method="lora"):
    return apply(symgpt.load("llama-7b", B=1, T=2048), FineTune(method, R))


def test_counts_by_hand():
    assert PSI == 6_738_415_616 and ADAPTERS == 39_976_960
    assert _lora().quantity("params.trainable").value == ADAPTERS


def test_lora_zero3_collectives_by_hand():
    """dp = 8, m = 2: 2·(7/8)·2·(Ψ + A) bytes gathered for forward, the same for backward, and
    2·(7/8)·4·A bytes of fp32 gradients reduce-scattered."""
    parts = _lora().quantity("comm.dp", **OPT).values()
    gather = 2 * sympy.Rational(7, 8) * 2 * (PSI + ADAPTERS)
    q = _lora().quantity("comm.dp", **OPT)
    assert parts == {"dp/weight all-gather (forward, frozen and trainable)": gather,
                     "dp/weight all-gather (backward, frozen and trainable)": gather,
                     "dp/gradient reduce-scatter (trainable)": 2 * sympy.Rational(7, 8) * 4 * ADAPTERS}
    note = next(n for n in q.notes if n.startswith("ZeRO-3 of a frozen base"))
    assert "Not modelled: PyTorch FSDP keeps its root unit" in note


def test_lora_zero3_memory_per_device_by_hand():
    """Per device: every bf16 weight /8; the adapters' fp32 gradients /8; Adam's fp32 master, m and v
    of the adapters /8."""
    m = _lora()
    o = dict(dp=8, zero=3, precision="mixed-bf16-fp32grad")
    assert m.quantity("memory.weights", **o).value == sympy.Rational(2 * (PSI + ADAPTERS), 8)
    assert m.quantity("memory.gradients", **o).value == sympy.Rational(4 * ADAPTERS, 8)
    assert m.quantity("memory.optimizer", **o).value == sympy.Rational(3 * 4 * ADAPTERS, 8)


def test_full_case_is_the_zero_papers_three_psi():
    """Nothing frozen: Ψ gathered twice and Ψ reduce-scattered, (n − 1)/n each: 3Ψ at large n, 1.5x data
    parallelism's all-reduce (2Ψ), in bf16 (2 bytes each) for one micro-batch."""
    full = symgpt.load("llama-7b", B=1, T=2048)
    n = 64
    z3 = full.quantity("comm.dp", dp=n, zero=3, microbatches=1, precision="bf16").value
    dp = full.quantity("comm.dp", dp=n, zero=0, microbatches=1, precision="bf16").value
    assert z3 == 3 * sympy.Rational(n - 1, n) * PSI * 2 and z3 / dp == sympy.Rational(3, 2)
    # a LoRA graph whose every weight were trained would send the same: the frozen form's parts at A = Ψ + A
    lora = _lora().quantity("comm.dp", dp=n, zero=3, microbatches=1, precision="bf16").values()
    assert sum(v for k, v in lora.items() if "all-gather" in k) == 2 * sympy.Rational(n - 1, n) * (PSI + ADAPTERS) * 2


def test_dora_zero3_reduce_scatters_its_magnitudes():
    """DoRA trains a magnitude per output row as well: d_out more gradients per adapted linear."""
    mags = L * (4 * D + 2 * DFF + D)
    parts = _lora("dora").quantity("comm.dp", **OPT).values()
    assert parts["dp/gradient reduce-scatter (trainable)"] == 2 * sympy.Rational(7, 8) * 4 * (ADAPTERS + mags)


@pytest.mark.parametrize("name", ["comm.dp", "memory.weights", "time.step"])
def test_quantized_base_under_zero3_is_refused(name):
    m = _lora("qlora")
    with pytest.raises(SymgptError, match=r"ZeRO-3 with a quantized base \(QLoRA\) is not modelled"):
        m.quantity(name, **OPT)

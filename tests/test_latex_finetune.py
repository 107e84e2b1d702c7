"""The fine-tuning section of the LaTeX report (``symgpt latex MODEL --what finetune``): full
fine-tuning, LoRA and QLoRA of the same model at the report's workload.

Oracles: hand-worked counts of GPT-2 small (Radford et al. 2019: L = 12, d = 768, d_ff = 3072,
V = 50257, T_max = 1024) with rank 64 on every linear layer of the blocks (Dettmers et al. 2023's
setting); the bytes per parameter of the mixed-precision policy (Micikevicius et al. 2018: fp16
weights and gradients, an fp32 master copy; Adam's two fp32 moments) and of NF4 storage
(Dettmers et al. 2023, Sec. 3: 4 bits, one 8-bit absmax per 64 weights, one fp32 constant per
256 absmax values); the memory section of the same report for the full column."""

from __future__ import annotations

import re
from fractions import Fraction

import latexeq
import symgpt
from symgpt.core.notation import notation
from symgpt.documents.latex_doc import WHATS, context, expand, fragment
from symgpt.documents.workload import report_model

L, d, d_ff, V, T_max = 12, 768, 3072, 50257, 1024
#: per block: c_attn (d -> 3d), c_proj (d -> d), c_fc (d -> d_ff), c_proj (d_ff -> d)
LINEARS = [(d, 3 * d), (d, d), (d, d_ff), (d_ff, d)]
PARAMS = 124_439_808  # the released checkpoint (tied head)


def _model(name="gpt2-small"):
    return report_model(symgpt.load(name))


def _cells(tex: str, label: str) -> list[str]:
    row = next(line for line in tex.splitlines() if line.strip().startswith(label))
    return [c.strip() for c in row.rstrip(" \\").split("&")[1:]]


def _bytes(cell: str) -> Fraction:
    """``$249\\,\\mathrm{MB}$`` -> 249e6 (as printed, rounded)."""
    m = re.fullmatch(r"\$(?:\\mathbf\{)?([\d.]+)\\,\\mathrm\{([kMGT]?)B\}\}?\$", cell)
    assert m, cell
    return Fraction(m.group(1)) * 10 ** {"": 0, "k": 3, "M": 6, "G": 9, "T": 12}[m.group(2)]


def test_gpt2_small_by_hand():
    m = _model()
    tex = fragment(m, "finetune")
    r = 64
    trainable = L * sum(r * (i + o) for i, o in LINEARS)
    assert trainable == 9_437_184
    assert _cells(tex, "Trainable parameters") == ["$124{,}439{,}808$", "$9{,}437{,}184$", "$9{,}437{,}184$"]
    assert _cells(tex, "Frozen parameters") == ["$0$", "$124{,}439{,}808$", "$124{,}439{,}808$"]
    # mixed fp16 + Adam: 2-byte weights and gradients, 4 + 4 + 4 bytes of master copy and moments
    expect = {"Trained weights": [2 * PARAMS, 2 * trainable, 2 * trainable],
              "Gradients": [2 * PARAMS, 2 * trainable, 2 * trainable],
              "Optimizer state": [12 * PARAMS, 12 * trainable, 12 * trainable]}
    quantized = L * sum(i * o for i, o in LINEARS)            # every block linear but not the head
    nf4 = Fraction(quantized) * (4 + Fraction(8, 64) + Fraction(32, 64 * 256)) / 8
    frozen_qlora = nf4 + 2 * (PARAMS - quantized)
    assert frozen_qlora == 122_825_472
    expect["Frozen base weights"] = [0, 2 * PARAMS, frozen_qlora]
    for label, values in expect.items():
        for cell, v in zip(_cells(tex, label), values):
            got = _bytes(cell)
            assert abs(got - v) <= Fraction(v, 200) + 1, (label, cell, v)   # three significant digits
    assert "&= 122{,}825{,}472\\ \\text{bytes}" in tex
    assert "&= 9{,}437{,}184." in tex


def test_the_full_column_is_the_memory_section():
    m = _model()
    nota = notation("default")
    mem = context("memory", m, nota)
    ft = fragment(m, "finetune")
    assert _cells(ft, "\\textbf{Total}")[0] == f"$\\mathbf{{{mem['total_size']}}}$"
    assert _cells(ft, "Activations")[0] == f"${mem['act_size']}$"


def test_the_stacked_bars_add_up():
    """Each bar's segments abut and its length is its total over the largest total (100 units)."""
    ctx = context("finetune", _model(), notation("default"))
    totals = [c["total"] for c in ctx["columns"]]
    for bar, total in zip(ctx["bars"], totals):
        segs = bar["segments"]
        assert all(a["right"] == b["left"] for a, b in zip(segs, segs[1:]))
        assert abs(float(segs[-1]["right"]) - float(total * 100 / max(totals))) < 0.01
    assert len(ctx["bars"]) == 3 and len(ctx["bars"][0]["segments"]) == 4  # full: nothing frozen


def test_every_equation_is_true_for_a_mixture_on_its_attention():
    m = _model("mixtral-8x7b")
    tex = fragment(m, "finetune")
    n, false, _ = latexeq.check(tex, latexeq.symbols_of(notation("default")), m.bindings)
    assert n == 2 and false == []
    assert "$W_Q$, $W_K$, $W_V$, $W_O$" in tex and "experts, which transformers holds as 3-D" in tex
    # four projections of d -> h d_head, d -> h_kv d_head (twice), h d_head -> d per block, rank 64
    h, kv, dh, dm, layers = 32, 8, 128, 4096, 32
    shapes = [(dm, h * dh), (dm, kv * dh), (dm, kv * dh), (h * dh, dm)]
    assert _cells(tex, "Trainable parameters")[1] == "${:,}$".format(
        layers * sum(64 * (i + o) for i, o in shapes)).replace(",", "{,}")


def test_refused_in_one_sentence():
    tex = fragment(_model("deepseek-v3"), "finetune")
    body = [line for line in tex.splitlines() if line and not line.startswith("%")]
    assert len(body) == 1 and body[0].startswith("Low-rank adapters are not modelled for")
    assert "tabular" not in tex


def test_in_the_report():
    assert "finetune" in WHATS and "finetune" in expand("all")

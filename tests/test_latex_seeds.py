"""The LaTeX sections carry the seeds' numbers: lecture note 7.3 §3-§6 and the self-test, lesson LM4-T5's
breakdown and shapes. Expected values are typed from the seeds (where a seed rounds, the test
checks symgpt's exact value against the seed's rounding)."""

import re

import pytest

import symgpt
from symgpt.documents.latex_doc import fragment
from symgpt.documents.tables import scaling_table
from symgpt.documents.report import report_model


def g(n: int) -> str:
    """An integer as the LaTeX source writes it: 124{,}439{,}808 (typed independently)."""
    s = str(n)
    parts = []
    while len(s) > 3:
        parts.insert(0, s[-3:])
        s = s[:-3]
    return "{,}".join([s] + parts)


@pytest.fixture(scope="module")
def small():
    return report_model(symgpt.load("gpt2-small"))   # B = 8, T = 1024 (lecture note 7.3 §3)


def rows(tex: str) -> list[str]:
    return [r for r in tex.split(r"\\") if "&" in r]


def row_with(tex: str, *needles: str) -> str:
    found = [r for r in rows(tex) if all(n in r for n in needles)]
    assert found, f"no row with {needles}"
    return found[0]


# lecture note 7.3 §4.1: per-block table (one row per tensor; the seed pairs the LayerNorm's two)
NOTE73_BLOCK = [
    (r"W_{\mathrm{attn}}", "(d, 3 d)", "3 d^{2}", 1_769_472),
    (r"b_{\mathrm{attn}}", "(3 d,)", "3 d", 2_304),
    ("W_O", "(d, d)", "d^{2}", 589_824),
    ("b_O", "(d,)", "d", 768),
    ("W_1", "(d, 4 d)", "4 d^{2}", 2_359_296),
    ("b_1", "(4 d,)", "4 d", 3_072),
    ("W_2", "(4 d, d)", "4 d^{2}", 2_359_296),
    ("b_2", "(d,)", "d", 768),
    (r"\gamma_1", "(d,)", "d", 768), (r"\beta_1", "(d,)", "d", 768),   # 2d = 1,536 together
    (r"\gamma_2", "(d,)", "d", 768), (r"\beta_2", "(d,)", "d", 768),
]


@pytest.mark.parametrize("symbol,shape,formula,value", NOTE73_BLOCK)
def test_note73_block_table(small, symbol, shape, formula, value):
    r = row_with(fragment(small, "blocks"), f"${symbol}$")
    assert f"${shape}$" in r and f"${formula}$" in r and f"${g(value)}$" in r


def test_note73_block_totals(small):
    tex = fragment(small, "blocks")
    assert r"\mathbf{" + g(7_087_872) + "}" in tex                  # per block total
    assert g(85_054_464) in tex and r"\approx 85.05\,\mathrm{M}" in tex  # x 12 blocks


@pytest.mark.parametrize("symbol,value", [("E", 38_597_376), (r"W_{\mathrm{pos}}", 786_432),
                                          (r"\gamma_f", 768), (r"\beta_f", 768)])
def test_note73_embeddings_table(small, symbol, value):
    tex = fragment(small, "embeddings")
    assert g(value) in row_with(tex, f"${symbol}$")
    assert "(50{,}257, 768)" in tex and "(1{,}024, 768)" in tex
    assert r"(tied to $E$)" in row_with(tex, "LM head")               # LM head tied: 0
    assert r"\mathbf{" + g(39_385_344) + "}" in tex


def test_note73_grand_total(small):
    tex = fragment(small, "total")
    assert r"\begin{align*}" in tex
    assert f"{g(85_054_464)} + {g(39_385_344)}" in tex
    assert f"{g(124_439_808)} \\approx 124.4\\,\\mathrm{{M}}" in tex


def test_note73_rule_crosscheck(small):
    tex = fragment(small, "rule")
    # V d + 12 L d^2 + 2 d = 38,597,376 + 84,934,656 + 1,536 = 123,533,568, within 1 %
    assert g(123_533_568) in tex
    for term in (38_597_376, 84_934_656, 1_536):
        assert g(term) in tex
    err = re.search(r"relative error of \$(-?[0-9.]+)\\,\\%\$", tex)
    assert err and abs(float(err.group(1))) < 1.0


def test_note73_flops(small):
    tex = fragment(small, "flops")
    # §5.1: 24 T d^2 + 4 T^2 d at T = 1024: 1.449e10 + 3.221e9 = 1.771e10 (the seed truncates)
    assert r"4 \cdot 1{,}024^{2} \cdot 768 + 24 \cdot 1{,}024 \cdot 768^{2}" in tex
    assert r"3.221 \times 10^{9}" in tex
    block = float(re.search(r"&= ([0-9.]+) \\times 10\^\{10\}\.", tex).group(1)) * 1e10
    assert abs(block - 1.771e10) / 1.771e10 < 1e-3
    assert r"1.701 \times 10^{12}" in tex           # x 12 blocks x B = 8: ~1.70e12
    assert r"6.324 \times 10^{11}" in tex           # LM head 2BTVd ~ 6.3e11
    assert r"2.333 \times 10^{12}" in tex           # total forward ~ 2.3e12
    assert r"C_{\text{train}} = 7.000 \times 10^{12}" in tex   # ~ 7e12, 3x forward
    assert r"6.116 \times 10^{12}" in tex           # 6ND = 6.1e12


def test_note73_memory_budget(small):
    tex = fragment(small, "memory")
    # §5.6 under fp16 weights/gradients and fp32 Adam (master, m, v): ~250 MB, ~250 MB, ~1.5 GB
    assert row_with(tex, "Parameters").count(r"249\,\mathrm{MB}") == 1
    assert r"2\,\#\theta" in row_with(tex, "Parameters")
    assert r"249\,\mathrm{MB}" in row_with(tex, "Gradients")
    assert r"12\,\#\theta" in row_with(tex, "Optimizer") and r"1.49\,\mathrm{GB}" in row_with(tex, "Optimizer")
    # the seed's three named activation terms (BTd, BhT^2, 4BTd per block) beside the exact list
    assert "2 B L T^{2} h + 10 B L T d" in row_with(tex, "three terms")
    assert "Activations (every saved tensor)" in tex


def test_note73_shapes(small):
    tex = fragment(small, "shapes")
    for shape in ["(8, 1{,}024)", "(8, 1{,}024, 768)", "(8, 1{,}024, 2{,}304)", "(8, 12, 1{,}024, 64)",
                  "(8, 12, 1{,}024, 1{,}024)", "(8, 1{,}024, 3{,}072)", "(8, 1{,}024, 50{,}257)", "(1{,}024, 768)"]:
        assert shape in tex, shape
    assert r"repeated $L = 12$ times" in tex


def test_lm4t5_shapes_table():
    # lesson LM4-T5: B = 2, n = 16, GPT-2 small, in its notation
    m = symgpt.load("gpt2-small", B=2, T=16)
    tex = fragment(m, "shapes", "raschka")
    for sym, conc in [("(B, n)", "(2, 16)"), ("(B, n, d)", "(2, 16, 768)"), ("(B, H, n, d / H)", "(2, 12, 16, 64)"),
                      ("(B, H, n, n)", "(2, 12, 16, 16)"), ("(B, n, 4 d)", "(2, 16, 3{,}072)"),
                      ("(B, n, V)", "(2, 16, 50{,}257)")]:
        assert any(sym in r and conc in r for r in rows(tex)), (sym, conc)


LM4T5 = [  # label, formula, value (GPT-2 small without Q/K/V biases), share of the 124.4 M
    ("Token embedding", "V d", 38_597_376, "31.0"),
    ("Position embedding", "L d", 786_432, None),
    ("Attention, per block", "4 d^{2} + d", 2_360_064, "22.8"),
    ("Feed-forward, per block", "8 d^{2} + 5 d", 4_722_432, "45.5"),
    ("Layer norms, per block", "4 d", 3_072, "0.03"),
    ("All blocks", r"N \left(12 d^{2} + 10 d\right)", 85_026_816, None),
    ("Final LayerNorm", "2 d", 1_536, None),
]


@pytest.mark.parametrize("label,formula,value,share", LM4T5)
def test_lm4t5_breakdown(label, formula, value, share):
    m = symgpt.load("gpt2-small", qkv_bias=False)
    r = row_with(fragment(m, "breakdown", "raschka"), label)
    assert f"${formula}$" in r and f"${g(value)}$" in r
    if share:
        assert f"${share}\\,\\%$" in r


def test_lm4t5_totals_and_bar():
    m = symgpt.load("gpt2-small", qkv_bias=False)
    tex = fragment(m, "breakdown", "raschka")
    assert g(124_412_160) in tex
    # the stacked bar: 124.4 M tied, 163.0 M with a separate head (lesson LM4-T5's figure)
    assert r"124.4\,\mathrm{M}\ \text{parameters}" in tex and r"163.0\,\mathrm{M}\ \text{parameters}" in tex
    caption = tex[tex.index(r"\caption{Share"):]
    for part in ["feed-forward 45.5", "token embedding 31.0", "attention 22.8", "layer norms 0.03",
                 "feed-forward 34.8", "token embedding 23.7", "attention 17.4", "output head 23.7"]:
        assert part in caption, part
    assert "position embedding 0.63" in caption     # the seed rounds to 0.6


NOTE73_SCALING = [  # model, L, h, d, d_ff, T_max, params as the seed rounds them
    ("gpt2-small", 12, 12, 768, 3072, 1024, 124e6), ("gpt2-medium", 24, 16, 1024, 4096, 1024, 355e6),
    ("gpt2-large", 36, 20, 1280, 5120, 1024, 774e6), ("gpt2-xl", 48, 25, 1600, 6400, 1024, 1.5e9),
    ("gpt3-125m", 12, 12, 768, 3072, 2048, 125e6), ("gpt3-350m", 24, 16, 1024, 4096, 2048, 350e6),
    ("gpt3-1.3b", 24, 24, 2048, 8192, 2048, 1.3e9), ("gpt3-6.7b", 32, 32, 4096, 16384, 2048, 6.7e9),
    ("gpt3-13b", 40, 40, 5120, 20480, 2048, 13e9), ("gpt3-175b", 96, 96, 12288, 49152, 2048, 175e9),
    ("llama-7b", 32, 32, 4096, 11008, 4096, 6.7e9), ("llama-70b", 80, 64, 8192, 28672, 4096, 70e9),
]


def test_note73_scaling_table():
    t = scaling_table([r[0] for r in NOTE73_SCALING])
    assert t.models == tuple(r[0] for r in NOTE73_SCALING)
    for row, values in zip(NOTE73_SCALING, t.values):
        assert [int(v) for v in values[:5]] == list(row[1:6]), row[0]
        # the seed's numbers are the models' rounded names (1.5B for 1.558 B): within 4 %
        assert abs(float(values[5]) - row[6]) / row[6] < 0.04, row[0]
    tex = t.latex()
    assert r"gpt2-xl & $48$ & $25$ & $1{,}600$ & $6{,}400$ & $1{,}024$ & $1.558\,\mathrm{B}$" in tex
    md = t.markdown()
    assert "| gpt2-small | 12 | 12 | 768 | 3,072 | 1,024 | 124.4 M |" in md
    assert "gpt3-175b,96,96,12288,49152,2048,174604259328" in t.csv()


def test_selftest_answers(small):
    tex = fragment(small, "selftest")
    assert g(124_439_808) in tex and "12 L d^{2}" in tex             # (a)
    # (b) d = 4096, L = 32, V = 50000, T_max = 2048, by hand: 32 (12 d^2 + 13 d) = 6,444,154,880;
    #     V d = 204,800,000; T_max d = 8,388,608; 2d = 8,192 -> 6,657,351,680
    assert g(6_657_351_680) in tex
    assert g(50_000 * 4096 + 12 * 32 * 4096**2) in tex                # the rule Vd + 12Ld^2
    # (c) ~7e12 FLOPs per step at 300 TFLOP/s: 7e12 / 3e14 s = 23.3 ms
    assert r"7.00 \times 10^{12}" in tex and r"23.3\,\mathrm{ms}" in tex
    assert r"2 B L T^{2} h" in tex                                     # (d) the hT^2 term
    assert r"31.0\,\%" in tex and r"0.35\,\%" in tex                   # (e) 31 % vs 0.35 %

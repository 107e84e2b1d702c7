"""The LaTeX printers' small parts: numbers, escaping (LaTeX, Markdown, CSV), notation profiles.

Expected strings are typed by hand; no TeX needed here (tests/test_latex_compile.py compiles)."""

import json

import pytest
import sympy

from symgpt.core.errors import SymgptError
from symgpt.core.notation import builtin_names, load_profile, notation
from symgpt.render.latex import tex_expr, tex_shape
from symgpt.render.latex_escape import csv_cell, tex_escape, tex_texttt
from symgpt.render.latex_numbers import plain_number, tex_bytes, tex_int, tex_percent, tex_sci, tex_short
from symgpt.core.symbols import L, T, T_max, V, d, h


# --- numbers: the issue's three forms, and the seeds' rounding ------------------------------
@pytest.mark.parametrize("fn,value,expected", [
    (tex_int, 124_439_808, "124{,}439{,}808"),
    (tex_int, 768, "768"),
    (tex_int, sympy.Rational(3, 2), r"\frac{3}{2}"),
    (tex_short, 124_439_808, r"124.4\,\mathrm{M}"),
    (tex_short, 1_557_611_200, r"1.558\,\mathrm{B}"),
    (lambda v: tex_sci(v, 3), 17_716_740_096, r"1.77 \times 10^{10}"),
    (tex_sci, 17_716_740_096, r"1.772 \times 10^{10}"),
    (tex_sci, 632_371_331_072, r"6.324 \times 10^{11}"),
    (tex_bytes, 248_879_616, r"249\,\mathrm{MB}"),
    (tex_bytes, 1_493_277_696, r"1.49\,\mathrm{GB}"),
    (lambda v: tex_bytes(v, binary=True), 2**30, r"1\,\mathrm{GiB}"),
    (lambda v: tex_bytes(v, binary=True), 3 * 2**29, r"1.5\,\mathrm{GiB}"),
    (lambda v: tex_percent(v, 124_439_808), 38_597_376, r"31.0\,\%"),
    (lambda v: tex_percent(v, 124_412_160), 36_864 + 1_536, r"0.03\,\%"),
    (lambda v: plain_number(v, "short"), 124_439_808, "124.4 M"),
    (lambda v: plain_number(v, "sci"), 0, "0"),
])
def test_numbers(fn, value, expected):
    assert fn(value) == expected


# --- escaping -----------------------------------------------------------------------------------
@pytest.mark.parametrize("text,expected", [
    ("my_model&v2%#$.json", r"my\_model\&v2\%\#\$.json"),
    (r"\input{/etc/passwd}", r"\textbackslash{}input\{/etc/passwd\}"),
    (r"\write18{rm -rf /}", r"\textbackslash{}write18\{rm -rf /\}"),
    ("a~b^c", r"a\textasciitilde{}b\textasciicircum{}c"),
    ("two\nlines", "two lines"),
    ("S = Q Kᵀ", r"S = Q K\textsuperscript{T}"),
    ("漢字", "{[}U+6F22{]}{[}U+5B57{]}"),  # no glyph in pdflatex's fonts: the code points
    ("a\x01b\x1b", "a{[}U+0001{]}b{[}U+001B{]}"),
])
def test_tex_escape(text, expected):
    assert tex_escape(text) == expected


def test_texttt_uses_the_typewriter_glyphs():
    # every special becomes \char"XX of cmtt: nothing is a command, the PDF text is as typed
    assert tex_texttt("my_model&v2%#$") == r'\texttt{my\char"5F{}model\char"26{}v2\char"25{}\char"23{}\char"24{}}'
    assert r"\input" not in tex_texttt(r"\input{x}")


@pytest.mark.parametrize("text,expected", [
    ("plain", "plain"),
    ("=1+2", "\"'=1+2\""),
    ("+SUM(A1)", "\"'+SUM(A1)\""),
    ("-2", "\"'-2\""),
    ("@cmd", "\"'@cmd\""),
    ("a,b", '"a,b"'),
    ('say "hi"', '"say ""hi"""'),
])
def test_csv_cell(text, expected):
    assert csv_cell(text) == expected


# --- notation profiles ------------------------------------------------------------------------
def test_builtin_profiles():
    assert builtin_names() == ["default", "megatron", "kaplan", "raschka"]
    expr = 12 * L * d**2 + T_max * d + V * d
    # the same expression, four notations (the symbols are never renamed)
    assert tex_expr(expr, notation("default")) == r"12 L d^{2} + T_{\max} d + V d"
    assert tex_expr(expr, notation("megatron")) == r"12 l h^{2} + s_{\max} h + v h"
    assert tex_expr(expr, notation("kaplan")) == \
        r"12 n_{\mathrm{layer}} d_{\mathrm{model}}^{2} + n_{\mathrm{ctx}}^{\max} d_{\mathrm{model}} + n_{\mathrm{vocab}} d_{\mathrm{model}}"
    # raschka: L is the context length and N the layers; the profile maps, so no clash
    assert tex_expr(expr, notation("raschka")) == r"12 N d^{2} + L d + V d"
    assert tex_shape((T, 3 * d), notation("raschka")) == "(n, 3 d)"
    assert tex_shape((d / h,), notation("default")) == "(d / h,)"


def test_user_profile_json_and_text(tmp_path):
    j = tmp_path / "course.json"
    j.write_text(json.dumps({"name": "course", "base": "raschka", "symbols": {"d": r"d_{\mathrm{emb}}"},
                             "quantities": {"params": r"\#\mathrm{params}"}}))
    p = load_profile(j)
    assert (p.name, p.symbol("d"), p.symbol("L"), p.quantity("params")) == \
        ("course", r"d_{\mathrm{emb}}", "N", r"\#\mathrm{params}")
    t = tmp_path / "mine.txt"
    t.write_text("# my notation\nL = \\ell\nT = n_{\\mathrm{tok}}\nparams = P\n")
    p = notation(str(t))
    # a value ending in a control word is typeset braced, so that what follows it
    # (another symbol, a power) cannot run into it: \ell then n would read \elln
    assert (p.name, p.symbol("L"), p.symbol("T"), p.quantity("params")) == ("mine", r"{\ell}", r"n_{\mathrm{tok}}", "P")
    assert p.symbols["L"] == r"\ell"  # the value as given


@pytest.mark.parametrize("line,fault", [
    (r"L = \input{/etc/passwd}", r"\input is not allowed"),
    (r"L = \write18{ls}", r"\write is not allowed"),
    (r"L = x^^5cinput", "'^^' is not allowed"),
    ("L = a$b", "not allowed"),
    ("L = 50%", "not allowed"),
    ("L = a#1", "'#' is only allowed"),
    ("L = {a", "unbalanced braces"),
    ("L = a}", "unbalanced braces"),
    ("L = a_b_c", "double subscript"),
    ("L = a_", "needs an argument"),
    ("L = d", "would both be shown as 'd'"),
    ("Q = q", "unknown key 'Q'"),
    ("__import__('os').system('ls')", "expected 'name = latex'"),
    ("base = nope", "unknown base profile"),
    ("L = " + "x" * 80, "too long"),
])
def test_user_profile_refusals(tmp_path, line, fault):
    f = tmp_path / "bad.txt"
    f.write_text(line + "\n")
    with pytest.raises(SymgptError, match=None) as e:
        notation(str(f))
    assert fault in str(e.value)


def test_unknown_profile_and_bad_json(tmp_path):
    with pytest.raises(SymgptError, match="unknown notation"):
        notation("nope")
    f = tmp_path / "x.json"
    f.write_text('{"symbols": {"L": 3}}')
    with pytest.raises(SymgptError, match="must be text"):
        notation(str(f))
    f.write_text('{"symbols": [1]}')
    with pytest.raises(SymgptError, match="must be an object"):
        notation(str(f))


def test_notebook_reprs():
    import symgpt
    from symgpt.documents.latex_doc import derivation
    from symgpt.documents.tables import scaling_table

    m = symgpt.load("gpt2-small")
    assert m.params._repr_latex_() == \
        r"$\displaystyle 12 L d^{2} + 13 L d + T_{\max} d + V d + 2 d = 124{,}439{,}808$"
    t = scaling_table(["gpt2-small"], ["L", "params"])._repr_latex_()
    assert t.startswith(r"$$\begin{array}{lrr}") and r"\text{gpt2-small} & 12 & 124.4\,\mathrm{M}" in t
    d = derivation(m, "raschka")._repr_latex_()
    assert d.startswith(r"\begin{align*}") and r"{P}_{\text{" in d and "124{,}439{,}808" in d


@pytest.mark.parametrize("name,needles", [
    ("llama-7b", ["$W_Q$", r"$W_{\mathrm{gate}}$", "RMSNorm 1", "6{,}738{,}415{,}616"]),   # untied head, RoPE
    ("mistral-7b", [r"sliding", "7{,}241{,}732{,}096"]),   # Min(T, W): no crossover to draw
])
def test_other_families_render(name, needles):
    import symgpt
    from symgpt.documents.latex_doc import document
    from symgpt.documents.report import report_model

    tex = document(report_model(symgpt.load(name)))
    for n in needles:
        assert n in tex, n


def test_a_value_that_rounds_into_the_next_unit_moves_up():
    """999,776,258 bytes (GPT-2 small's activations on 8 devices with full recomputation) is
    0.9998 GB: three significant digits round it to 1.00 GB, never "1.000 MB" or "1e+03 MB"."""
    from symgpt.render.latex_numbers import tex_bytes
    from symgpt.render.units import scaled

    assert tex_bytes(999_776_258) == r"1.00\,\mathrm{GB}"
    assert tex_bytes(999_400_000) == r"999\,\mathrm{MB}"           # rounds down: stays in MB
    assert tex_bytes(2**30 - 2**19, binary=True) == r"1{,}020\,\mathrm{MiB}"   # 1023.5 MiB: 1020 < 1024
    assert tex_bytes(2**30 - 2**10, digits=4, binary=True) == r"1.000\,\mathrm{GiB}"   # 1024 MiB = 1 GiB
    assert tex_bytes(999_999) == r"1.00\,\mathrm{MB}"
    assert scaled(999_776_258) == "1 GB" and scaled(999_400_000) == "999 MB"
    assert scaled(999_999_999_999) == "1 TB" and scaled(999.7) == "1 kB" and scaled(12) == "12 B"


def test_the_symbols_node_labels_use_are_typeset_not_shown_as_code_points():
    """The MoE combine (Σ), a gated FFN's product (⊙) and the shared-expert gate (σ) are labels of
    Mixtral's, Qwen-MoE's and every gated family's graph: typeset as the symbols, never [U+03A3]."""
    from symgpt.render.latex_escape import no_glyph, tex_label

    for label, symbol in (("Σ weights · experts", r"\Sigma"), ("SiLU(G) ⊙ U", r"\odot"),
                          ("σ(gate) · shared", r"\sigma")):
        assert symbol in tex_label(label) and "U+" not in tex_label(label)
        assert not no_glyph(label)


def test_large_byte_counts_scale_up_to_tb_and_pb():
    """A terabyte-scale cache is written in TB/TiB, never as "1.34e+03 GB"; past a thousand PB as
    m × 10ⁿ PB. Oracle: the divisions by hand (10¹² and 2⁴⁰ = 1,099,511,627,776 bytes)."""
    from symgpt.render.units import bytes_text

    assert bytes_text(1_342_052_808_704) == "1,342,052,808,704 B = 1.34 TB = 1.22 TiB"
    assert bytes_text(5_773_287_513_145_344) == "5,773,287,513,145,344 B = 5.77 PB = 5.13 PiB"
    assert bytes_text(999_999_999_999) == "999,999,999,999 B = 1 TB = 931 GiB"   # 999.999... GB rounds up
    assert bytes_text(3 * 10**21) == "3,000,000,000,000,000,000,000 B = 3.00 × 10⁶ PB = 2.66 × 10⁶ PiB"
    assert bytes_text(16_060_522_496) == "16,060,522,496 B = 16.1 GB = 15 GiB"   # below a TB: GB as before

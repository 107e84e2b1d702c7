"""The interactive page without a browser: what the file holds, how it is built, the CLI.

What the page *shows* once its code has run is checked in a real browser
(tests/test_html_browser.py). Here: the closed forms in dp and tp against the derivation at
other values and against ZeRO's and Megatron-LM's own arithmetic, the printers, and the file's
promises (self-contained, small, deterministic, nothing internal cited)."""

import json
import re
from html.parser import HTMLParser

import pytest
import sympy

import symgpt
from symgpt.cli import main
from symgpt.documents.html import DP, READS, TP, fit, html, option_values, page
from symgpt.render.html import interactive_svg
from symgpt.render.html_js import js_expr, mathml_expr
from symgpt.core.symbols import L, T, V, d, h


@pytest.fixture(scope="module")
def gpt2_page():
    return page(symgpt.load("gpt2-small"))


@pytest.fixture(scope="module")
def gpt2_html():
    return html(symgpt.load("gpt2-small"))


def _total(p, name, **opts):
    q = next(q for q in p.quantities if q["name"] == name)
    v = q["variants"][q["pick"]["|".join(str(opts[r]) for r in q["reads"])]]
    return p.exprs.items[v["total"]]


# --- dp and tp as symbols ------------------------------------------------------------------------
def test_zero3_weights_are_the_papers_psi_k_over_nd(gpt2_page):
    # ZeRO (Rajbhandari et al. 2020, §5): stage 3 keeps Psi*K/N_d of the weights per device;
    # fp32 weights are 4 bytes each, so 124,439,808 * 4 / 7 on 7 ranks, an exact fraction
    e = _total(gpt2_page, "memory.weights", precision="fp32", zero=3)
    at = e.xreplace({**symgpt.load("gpt2-small").bindings, DP: 7, TP: 1})
    assert at == sympy.Rational(124_439_808 * 4, 7)


def test_tp_splits_what_megatron_splits(gpt2_page):
    # Megatron-LM: the block's four matrices and their column-parallel biases, the token
    # embedding and (tied) head are split tp ways; LayerNorms, row-parallel biases and the
    # position table are replicated.
    e = _total(gpt2_page, "memory.weights", precision="fp32", zero=0)
    b = symgpt.load("gpt2-small").bindings
    Lv, dv, Vv, Tm = 12, 768, 50257, 1024
    split = Lv * (12 * dv * dv + 3 * dv + 4 * dv) + Vv * dv
    replicated = Lv * (4 * dv + 2 * dv) + Tm * dv + 2 * dv
    assert e.xreplace({**b, DP: 1, TP: 4}) == 4 * (sympy.Rational(split, 4) + replicated)


@pytest.mark.parametrize("opts", [dict(precision="mixed-bf16", optimizer="adam", zero=2),
                                  dict(precision="bf16", optimizer="adam8bit", zero=3),
                                  dict(precision="fp32", optimizer="momentum", zero=1)])
def test_fitted_closed_forms_equal_the_derivation_elsewhere(gpt2_page, opts):
    m = symgpt.load("gpt2-small", B=8, T=1024)
    for name in (*READS, "memory.total"):
        e = _total(gpt2_page, name, **opts)
        for tp, dp in ((4, 3), (6, 16)):
            want = m.quantity(name, **opts, tp=tp, dp=dp).value
            assert e.xreplace({**m.bindings, TP: tp, DP: dp}) == want, (name, tp, dp)


def test_reads_lists_every_option_a_memory_quantity_reads():
    f = symgpt.load("gpt2-small").free("L", "d", "h", "V", "T_max")
    values = option_values()
    for name, reads in READS.items():
        for option in set(values) - set(reads):
            seen = {sympy.srepr(f.quantity(name, **{option: v}, tp=2, dp=3).expr) for v in values[option]}
            assert len(seen) == 1, (name, option)


def test_fit_refuses_what_is_not_of_its_form():
    from symgpt.derive.quantity import Quantity

    with pytest.raises(symgpt.core.errors.SymgptError, match="not of the form"):
        fit(lambda tp, dp: Quantity("x", (("a", tp * tp + dp),)))


# --- printers ------------------------------------------------------------------------------------
def test_js_printer_is_exact_and_covers_the_functions_symgpt_uses():
    assert js_expr(12 * L * d**2 + d / 7) == "A(M(Q(1n,7n),s.d),M(Q(12n),s.L,P(s.d,2)))"
    assert js_expr(sympy.ceiling(V / 64)) == "C(M(Q(1n,64n),s.V))"
    assert js_expr(sympy.Min(T, 4096)) == "N(Q(4096n),s.T)"
    assert js_expr(sympy.Integer(2) ** 70) == f"Q({2**70}n)"
    with pytest.raises(symgpt.core.errors.SymgptError, match="cannot compile"):
        js_expr(sympy.sqrt(h))


def test_mathml_is_presentation_mathml():
    m = mathml_expr(12 * L * d**2)
    assert m.startswith('<math display="inline">') and "<msup><mi>d</mi><mn>2</mn></msup>" in m


def test_svg_ops_are_focusable_and_named():
    svg = ('<?xml version="1.0"?>\n<!DOCTYPE svg>\n<svg width="10pt" height="20pt" viewBox="0 0 10 20">'
           '<g id="node1" class="node">\n<title>blocks/ffn/up</title></g>'
           '<g id="node2" class="node">\n<title>input_ids</title></g></svg>')
    out = interactive_svg(svg, {"blocks/ffn/up": "FFN up"})
    assert out.startswith("<svg") and 'width="10pt"' not in out
    assert 'tabindex="0" role="button" aria-pressed="false" data-op="blocks/ffn/up"' in out
    assert out.count("tabindex") == 1


# --- the file ------------------------------------------------------------------------------------
class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.append(dict(attrs))


def test_page_is_self_contained_small_and_cites_no_internal_notes(gpt2_html):
    assert len(gpt2_html.encode()) < 1_000_000
    doc = _Collect()
    doc.feed(gpt2_html)
    assert "link" not in doc.tags and "iframe" not in doc.tags and "img" not in doc.tags
    assert not [a for a in doc.attrs if "src" in a or ("href" in a and not a["href"].startswith("#"))]
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", gpt2_html))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    assert "url(" not in gpt2_html and "@import" not in gpt2_html and "fetch(" not in gpt2_html
    assert "seed" not in gpt2_html.lower()


def test_page_has_an_input_for_every_size_and_option(gpt2_html):
    doc = _Collect()
    doc.feed(gpt2_html)
    symbols = [a["data-symbol"] for a in doc.attrs if "data-symbol" in a]
    options = [a["data-option"] for a in doc.attrs if "data-option" in a]
    assert symbols == ["B", "T", "T_max", "d", "h", "L", "V", "block"]   # block: the serving panel's
    assert options == ["precision", "optimizer", "zero", "dp", "tp", "hardware"]
    shown = {a["data-quantity"] for a in doc.attrs if "data-quantity" in a}
    assert {"params", "flops.train", "memory.total", "crossover.T", "params[blocks/ffn/up]"} <= shown
    assert {"inference.decode.time", "inference.prefill.time", "inference.kv_cache",
            "inference.decode.tokens_per_s"} <= shown
    assert {"serving.kv_budget", "serving.kv_per_sequence", "serving.max_sequences"} <= shown
    profiles = [a["value"] for a in doc.attrs if "value" in a and "title" in a and "data-symbol" not in a]
    from symgpt.core.hardware import names
    assert profiles == list(names())   # every profile symgpt knows, in its order


def test_page_holds_each_profiles_roofline_numbers(gpt2_html):
    """The hardware profiles' F_peak (bf16, dense) and BW_mem as the datasheets give them
    (H100 SXM: 1,979/2 TFLOP/s bf16 with sparsity halved, 3.35 TB/s, 80 GB; A100 40GB: 312 TFLOP/s,
    1,555 GB/s, 40 GB), and the memory the serving panel binds as M_dev."""
    data = json.loads(re.search(r'<script type="application/json" id="symgpt-data">(.*?)</script>', gpt2_html, re.S)[1])
    assert data["hardware"]["h100-sxm"] == {"F_peak": str(1979 * 10**12 // 2), "BW_mem": str(3350 * 10**9),
                                            "M_dev": str(80 * 10**9)}
    assert data["hardware"]["a100-40gb"] == {"F_peak": str(312 * 10**12), "BW_mem": str(1555 * 10**9),
                                             "M_dev": str(40 * 10**9)}


def test_page_data_is_json_and_every_formula_has_mathml(gpt2_html):
    text = re.search(r'<script type="application/json" id="symgpt-data">(.*?)</script>', gpt2_html, re.S)[1]
    data = json.loads(text)
    for q in data["quantities"]:
        for v in q["variants"]:
            assert data["mathml"][v["total"]].startswith("<math")
    n = gpt2_html.count("(s)=>")
    assert n == len(data["mathml"])


def test_page_is_deterministic(gpt2_html):
    assert html(symgpt.load("gpt2-small")) == gpt2_html


# --- the command line ----------------------------------------------------------------------------
def test_cli_writes_the_page(tmp_path, capsys):
    out = tmp_path / "model.html"
    assert main(["html", "gpt2-small", "--set", "B=4", "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert 'data-symbol="B" data-default="4" value="4"' in text
    assert text.startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("argv, message", [
    (["nonesuch"], "unknown model"),
    (["gpt2-small", "--set", "d=770"], "d must be divisible by h"),
    (["gpt2", "--set", "T=8"], "bind every size"),
])
def test_cli_errors_are_one_line_and_write_nothing(tmp_path, capsys, argv, message):
    out = tmp_path / "x.html"
    assert main(["html", *argv, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("symgpt: error:") and message in err and err.count("\n") == 1
    assert not out.exists()

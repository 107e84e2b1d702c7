"""Models built from several stacks (DeepSeek-V3: 3 dense layers, then L - 3 MoE layers) are
typeset as they are built: each stack's count times one layer, never expanded into terms with
negative signs (``3 E L d d_ff - 9 E d d_ff``) or terms larger than the whole.

Oracles: the printed text read back by ``latexeq`` (independent of SymPy's printer) against the
model's own closed forms, and DeepSeek-V3's layer counts from its published config.json
(first_k_dense_replace = 3 of num_hidden_layers = 61)."""

from __future__ import annotations

import re

import sympy

import latexeq
import symgpt
from symgpt.core.notation import notation
from symgpt.core.symbols import CANONICAL
from symgpt.documents.latex_doc import fragment
from symgpt.documents.workload import report_model

SYMBOLS = latexeq.symbols_of(notation("default"))
L = CANONICAL["L"]


def _math(tex: str) -> list[str]:
    """Every inline ``$...$`` and every display line of *tex*."""
    return re.findall(r"\$([^$]+)\$", tex) + [ln for ln in tex.splitlines() if "&" in ln]


def test_the_forward_flops_of_a_mixed_model_read_as_3_dense_layers_plus_L_minus_3_moe_layers():
    m = report_model(symgpt.load("deepseek-v3"))
    tex = fragment(m, "flops")
    chain = next(c for c in latexeq.chains(tex) if "C_{\\text{forward}}" in c[0])
    grouped = chain[1]
    # a layer's sum too long for one row spans rows in \bigl( ... \bigr) (\left( \right) cannot)
    assert re.match(r"3 \\(left|bigl)\(", grouped) and re.search(r"\+ \\left\(L - 3\\right\) \\(left|bigl)\(", grouped)
    forward = m.quantity("flops.forward", per="batch").expr
    assert sympy.expand(latexeq.parse(grouped, SYMBOLS).value - forward) == 0
    # the parts of one layer times the count of its stack: 3 + 58 = 61 layers of the config
    assert m.value(L) == 61


def test_no_typeset_cost_of_a_mixed_model_has_a_negative_term():
    m = report_model(symgpt.load("deepseek-v3"))
    for section in ("flops", "selftest", "total", "blocks", "rule", "breakdown"):
        tex = fragment(m, section)
        if section == "total":  # its second line is the expanded polynomial, shown on purpose
            tex = tex.split("\\\\", 2)[0]
        for math in _math(tex):
            text = math.replace("L - 3", "L+3")  # the count of the MoE stack is a difference
            assert not re.search(r"- \d*\s*[A-Za-z]", text), (section, math)


def test_the_largest_term_of_a_mixed_model_is_a_share_of_its_whole():
    """Expanded, (L - 3)·3Ed·d_ff gives the term 3ELd·d_ff, 102 % of DeepSeek-V3's parameters; as
    built it is 97.4 % (58 of 61 layers' experts). Checked against the config's sizes by hand:
    58 · 3 · 256 · 7168 · 2048 = 653,908,770,816 of 671,026,404,352."""
    m = report_model(symgpt.load("deepseek-v3"))
    tex = fragment(m, "selftest")
    assert "\\left(L - 3\\right) \\cdot 3 E d d_{\\mathrm{ff}} = 653{,}908{,}770{,}816" in tex
    assert 58 * 3 * 256 * 7168 * 2048 == 653_908_770_816
    assert "$97.4\\,\\%$" in tex


def test_a_stack_of_a_fixed_count_is_not_said_twice():
    m = report_model(symgpt.load("deepseek-v3"))
    tex = fragment(m, "shapes")
    assert "repeated $3 = 3$" not in tex and "dense layer, repeated $3$ times" in tex
    assert "shared expert, once, in each MoE layer" in tex

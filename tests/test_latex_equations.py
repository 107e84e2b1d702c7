"""Every equation the LaTeX fragments typeset is true: each displayed chain and each inline
``$a = b$`` of every section, for every built-in preset at its report workload, read back by
``latexeq`` (a parser of the printed text, independent of SymPy's printer) and each ``=``
checked: symbolically where both sides are symbolic, exactly at the model's sizes where one
side is a number, within half a unit of the last printed digit where a side was rounded.

Oracle: the printed text itself (each side of an equation against the other) and hand-worked
expansions (the DeepSeek-V3 total below)."""

from __future__ import annotations

import pytest
import sympy

import latexeq
import presetsample
import symgpt
from symgpt.core.notation import notation
from symgpt.core.symbols import CANONICAL
from symgpt.documents.latex_doc import SECTIONS, fragment
from symgpt.documents.workload import report_model
from symgpt.families import MODULES, presets

#: one preset for each structure (SYMGPT_ALL_PRESETS=1: every preset; tests/presetsample.py)
BUILTIN_PRESETS = presetsample.sample()
#: the presets a report needs a sequence length for (encoder-decoders: both lengths)
SEQUENCES = {"transformer-base": {"T_enc": 128, "T_dec": 128},
             "transformer-big": {"T_enc": 128, "T_dec": 128},
             # state-space presets whose readers bind no position limit: the report's length given
             **{name: {"T": 2048} for name in ("mamba-130m", "mamba-370m", "mamba-1.4b", "mamba-2.8b",
                                               "falcon-mamba-7b", "jamba-1.5-mini",
                                               "nemotron-h-8b")},
             # a shared-block hybrid (Zamba2), likewise
             "zamba2-2.7b": {"T": 2048},
             # the recurrent and hybrid presets without a position limit, likewise
             **{name: {"T": 2048} for name in ("mamba-790m", "mamba2-2.7b", "xlstm-7b", "recurrentgemma-2b")},
             # the Mamba-2 hybrids with assembled files, likewise
             **{name: {"T": 2048} for name in ("bamba-9b", "granite-4.0-h-tiny")}}
SYMBOLS = latexeq.symbols_of(notation("default"))
#: the sections every model's report has (a held tower's stacks included: it counts no FLOPs)
ALWAYS = ("shapes", "blocks", "total", "breakdown", "flops", "rule")


def _model(name):
    return report_model(symgpt.load(name, **SEQUENCES.get(name, {})))


@pytest.mark.parametrize("name", BUILTIN_PRESETS)
def test_every_typeset_equation_is_true(name):
    m = _model(name)
    checked, false = 0, []
    for section in SECTIONS:
        try:
            tex = fragment(m, section)
        except symgpt.SymgptError:
            # a section the model has no answer for (refused in one line elsewhere); the report's
            # core sections every model has
            assert section not in ALWAYS, (section, name)
            continue
        n, wrong, _unparsed = latexeq.check(tex, SYMBOLS, m.bindings)
        checked += n
        false += [f"{section}: {w}" for w in wrong]
    assert false == []
    assert checked >= 8, checked   # the totals, block sums, FLOPs and rule lines at least


def test_a_sum_of_layers_keeps_its_parentheses():
    """DeepSeek-V3's total: 3 dense blocks + (L - 3) MoE blocks. Printed as ``L - 3 (...)``
    the line would read L - 3·(...), a different polynomial; the checker must see that."""
    m = _model("deepseek-v3")
    tex = fragment(m, "total")
    # the bracket of a long block spans rows: \bigl( ... \bigr) (\left( \right) cannot)
    assert "\\left(L - 3\\right) \\left(" in tex or "\\left(L - 3\\right) \\bigl(" in tex
    chain = latexeq.chains(tex)[0]
    first = latexeq.parse(chain[1], SYMBOLS).value
    L = CANONICAL["L"]
    assert sympy.expand(first - m.params.expr) == 0
    # the bracket is the per-block count: no term divided by (L - 3) is left in it
    assert all(not t.has(sympy.Pow) or t.as_numer_denom()[1] == 1 for t in sympy.Add.make_args(first))
    broken = chain[1].replace("\\left(L - 3\\right)", "L - 3")
    assert sympy.expand(latexeq.parse(broken, SYMBOLS).value - first) != 0
    assert L in first.free_symbols


def test_the_checker_finds_a_false_line():
    wrong = "\\begin{align*}\n x &= 12 L d^{2} \\\\\n &= 12 \\cdot 12 \\cdot 768^{2} + 1\n\\end{align*}"
    L, d = CANONICAL["L"], CANONICAL["d"]
    n, false, _ = latexeq.check(wrong, SYMBOLS, {L: 12, d: 768})
    assert n == 1 and len(false) == 1
    rounded = "$12 L d^{2} = 8.493 \\times 10^{7}$ and $12 L d^{2} = 8.494 \\times 10^{7}$"
    n, false, _ = latexeq.check(rounded, SYMBOLS, {L: 12, d: 768})   # 84,934,656
    assert n == 2 and len(false) == 1 and "8.494" in false[0]

"""The lecture notes fit the page: every formula of a model's standalone LaTeX stays inside the
text width. Oracle: TeX itself -- the "Overfull \\hbox (N pt too wide)" lines pdflatex writes to
its log for every line that sticks out of the margin. Models of several stacks and long
per-block sums are the cases that used to overflow (gpt-oss-20b's total 26 pt: a ten-term
block in unbreakable \\left( \\right); Gemma 2's FLOPs 204 pt: the block with its count left
in the denominators; DeepSeek-V3's rule difference 28 pt: a sum of MLA terms in one row; Jamba's
crossover 2,770 pt: a root of a quadratic in one unbreakable box). The set below is
representative: mixed stacks (dense then MoE, sliding and full attention, Mamba and attention),
multi-latent attention, an encoder--decoder, a vision transformer; benchmarks/overfull.py measures
every preset (a full pdflatex run each: minutes over all of them)."""

from __future__ import annotations

import re

import pytest

import helpers
import symgpt
from symgpt.documents.latex_doc import document
from symgpt.documents.workload import report_model

#: what TeX may overrun by: under a point (invisible in print)
TOLERANCE_PT = 1.0
#: the sequence lengths a report needs where a preset binds none
SEQUENCES = {"jamba-1.5-mini": {"T": 2048}}


#: one model of each kind that used to overflow; mixtral-8x7b, llama-3-8b, deepseek-v2-lite and
#: lfm2-1.2b, and every other preset, are measured by benchmarks/overfull.py (OVERFULL.md)
@pytest.mark.parametrize("name", ["gpt-oss-20b", "gemma-2-9b", "deepseek-v3", "t5-base", "jamba-1.5-mini",
                                  "vit-base"])
def test_no_formula_runs_off_the_page(name, tmp_path):
    tex = tmp_path / "notes.tex"
    tex.write_text(document(report_model(symgpt.load(name, **SEQUENCES.get(name, {})))), encoding="utf-8")
    code, log, _ = helpers.compile_tex(tex)
    assert code == 0, log[-2000:]
    over = [float(x) for x in re.findall(r"Overfull \\hbox \(([0-9.]+)pt too wide\)", log)]
    assert all(x <= TOLERANCE_PT for x in over), sorted(over)[-3:]


def test_a_bar_label_wider_than_its_segment_is_left_to_the_legend():
    """T5's cross attention is 12.7 % of the bar, its label about 19 of the bar's 100 units wide
    (0.85 a character, measured on the typeset bar): printed inside, it ran over the attention
    label beside it. It is left out of the bar and named in the caption with its share."""
    import re

    import symgpt

    text = symgpt.fragment(symgpt.load("t5-base"), "breakdown")
    inside = re.findall(r"\\node\[align=center[^\]]*\] at \(([\d.]+),0\.31\) \{([^}]*)\}", text)
    assert [label.split()[0] for _, label in inside] == ["feed-forward", "attention"] * 2
    assert "cross attention 12.7" in text           # the caption keeps it
    for x, label in inside:                          # every label inside fits its own segment
        share = float(re.search(r"([\d.]+)\\,", label).group(1))
        assert len(label.replace("\\,\\%", " %")) * 0.85 <= share

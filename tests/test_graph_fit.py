"""`symgpt graph --fit slide|page`: the drawing, placed in its box (a 16:9 slide 10 in wide, or
A4's text width, about 6.3 in by 9.2 in, on one page), keeps its smallest text at least 9 pt
(slide) or 7 pt (page). The oracle is the SVG Graphviz writes: its size in points, the scale it
applies, and every font size in it, read with an XML parser."""

import re
import xml.etree.ElementTree as ET

import pytest

import clirun
import symgpt

BOXES = {"slide": (720.0, 405.0, 9.0), "page": (6.3 * 72, 9.2 * 72, 7.0)}


def smallest_text_in_box(svg: str, box_w: float, box_h: float) -> tuple[float, float, float]:
    root = ET.fromstring(svg)
    w, h = (float(root.get(k).removesuffix("pt")) for k in ("width", "height"))
    g = root.find("{http://www.w3.org/2000/svg}g")
    scale = float(re.search(r"scale\(([\d.]+)", g.get("transform")).group(1))
    sizes = [float(t.get("font-size")) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    placed = min(box_w / w, box_h / h)   # the drawing scaled to fill its box, aspect kept
    return min(sizes) * scale * placed, w, h


@pytest.mark.parametrize("model", ["gpt2-small", "llama-7b", "mixtral-8x7b"])
@pytest.mark.parametrize("fit", ["slide", "page"])
def test_fitted_diagram_text_is_large_enough(model, fit, tmp_path):
    out = tmp_path / "g.svg"
    r = clirun.run(["graph", model, "--fit", fit, "--set", "B=8", "--set", "T=1024", "-o", str(out)])
    assert r.returncode == 0, r.stderr
    box_w, box_h, least = BOXES[fit]
    pt, w, h = smallest_text_in_box(out.read_text(), box_w, box_h)
    assert pt >= least, f"{model} {fit}: smallest text {pt:.1f} pt in the box ({w}x{h} pt drawing)"
    if fit == "slide":
        assert w / h >= 16 / 9 * 0.75   # a landscape drawing, not a column


def test_the_full_diagram_is_what_the_issue_measured():
    # the oracle for the need: the unfitted GPT-2 drawing shrunk onto a slide is unreadable
    svg = symgpt.diagram(symgpt.load("gpt2-small"), B=8, T=1024).svg()
    pt, _, _ = smallest_text_in_box(svg, *BOXES["slide"][:2])
    assert pt < 9


def test_fitted_slide_folds_attention_and_keeps_every_other_op():
    m = symgpt.load("gpt2-small")
    dot = symgpt.diagram(m, fit="slide", B=8, T=1024).dot
    assert "attention</B>" in dot and "blocks/attention/scores" not in dot and "q_heads" not in dot
    for path in ("blocks/attention/qkv", "blocks/attention/proj", "blocks/ffn/up", "lm_head", "loss"):
        assert f'"{path}"' in dot, path


def test_labels_are_not_sympy_syntax_and_numbers_are_grouped():
    gemma = symgpt.diagram(symgpt.load("gemma-2b")).dot
    assert "sqrt(" not in gemma and "√" in gemma
    mixtral = symgpt.diagram(symgpt.load("mixtral-8x7b")).dot
    # 788,594,688·B·T FLOPs: Mixtral's attention projections per token, 2·4096·(4096 + 2·1024 + 4096)·... grouped
    assert re.search(r"\d{1,3}(,\d{3}){2,}·B·T", mixtral) and not re.search(r"\d{5,}·B·T", mixtral)


def test_unknown_fit_is_one_line_error():
    r = clirun.run(["graph", "gpt2-small", "--fit", "poster"])
    assert r.returncode == 2 and r.stderr.startswith("symgpt: error:")

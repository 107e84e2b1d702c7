"""The TikZ drawing of a pipeline schedule (``render.cluster_fig.schedule_tikz``): one ``\\slot``
per scheduled forward or backward, at the slot's start, device and length, and it compiles.

Oracles: the slot count of a schedule is 2·p·m·v (every micro-batch runs one forward and one
backward of every chunk on every device: hand arithmetic); the SVG printer of the same slots
(its rectangles, in pixels) places every box where the TikZ one is; pdflatex sets the picture."""

from __future__ import annotations

import re
import subprocess
from fractions import Fraction

import pytest

from symgpt.derive.pipeline import schedule
from symgpt.render.cluster_fig import _LEFT, _UNIT, schedule_svg, schedule_tikz

_SLOT = re.compile(r"^\\slot\{([^}]*)\}\{([^}]*)\}\{(\d+)\}\{([^}]*)\}\{([^}]*)\}\{(\d+)\}$", re.M)
_RECT = re.compile(r'<rect x="([\d.]+)" y="(\d+)" width="([\d.]+)" height="18" fill="([^"]+)" '
                   r'fill-opacity="[\d.]+" stroke="#333333"')


@pytest.mark.parametrize("p,m,v,kind", [(4, 8, 1, "1f1b"), (4, 8, 3, "1f1b"), (3, 5, 1, "gpipe"), (2, 4, 2, "1f1b")])
def test_one_slot_per_forward_and_backward_where_the_svg_draws_it(p, m, v, kind):
    slots = schedule(p, m, v, kind)
    tikz = schedule_tikz(slots, "t")
    drawn = _SLOT.findall(tikz)
    assert len(drawn) == 2 * p * m * v
    svg = _RECT.findall(schedule_svg(slots, "t"))
    assert len(svg) == len(drawn)
    # both printers sort by (device, start): box k of one is box k of the other
    for (fill, start, device, length, centre, mb), (x, y, w, _) in zip(drawn, svg):
        assert (int(y) - 24) // 22 == int(device)
        assert abs(float(start) * _UNIT + _LEFT - float(x)) < 0.01
        assert abs(float(length) * _UNIT - float(w)) < 0.01
        assert abs(float(centre) - (float(start) + float(length) / 2)) < 1e-3
        assert fill.startswith("blue!") or fill == "red!60"
    # the micro-batch numbers: each of 1..m appears 2·p·v times
    numbers = [int(d[5]) for d in drawn]
    assert sorted(set(numbers)) == list(range(1, m + 1))
    assert all(numbers.count(k) == 2 * p * v for k in range(1, m + 1))
    # backward slots last twice a forward slot of the same chunk (forward 1, backward 2 per device)
    lengths = {(d[0] == "red!60"): Fraction(d[3]).limit_denominator(1000) for d in drawn}
    assert lengths[True] == 2 * lengths[False] == Fraction(2, v)


def test_the_picture_compiles(tmp_path):
    slots = schedule(4, 8, 3)
    doc = ("\\documentclass{article}\\usepackage{tikz}\\begin{document}\n"
           + schedule_tikz(slots, "interleaved 1F1B: p = 4, m = 8, v = 3") + "\\end{document}\n")
    (tmp_path / "s.tex").write_text(doc)
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "s.tex"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]
    text = subprocess.run(["pdftotext", "s.pdf", "-"], cwd=tmp_path, capture_output=True, text=True).stdout
    assert "device 3" in text

"""Figures of training on a cluster: a pipeline schedule (SVG and TikZ; the bubble is the white
space) and per-device memory across strategies as a stacked bar (SVG). Printers only: the
schedule's slots come from ``derive.pipeline.schedule``, the memory from ``sweep.plan``."""

from __future__ import annotations

from fractions import Fraction

from .markup import xml_escape
from .units import bytes_in

_UNIT = 24          # pixels per unit of time
_ROW = 22           # pixels per device
_LEFT = 64
_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948")


#: the forms ``symgpt schedule`` prints a schedule in
SCHEDULE_FORMATS = ("text", "svg", "tikz")

#: the backward split in two (zero-bubble schedules, DualPipe): W, the weight gradient, in grey;
#: a backward not split (B and W at once) in a darker red than the input gradient B
_SPLIT_FILL = {"W": "#8c8c8c", "BW": "#9c1c1e"}
_SPLIT_TIKZ = {"W": "black!45", "BW": "red!70!black"}


def _x(t) -> str:
    v = Fraction(int(t.p), int(t.q)) * _UNIT + _LEFT
    return f"{float(v):.2f}"


def _w(a, b) -> str:
    return f"{float(Fraction(int((b - a).p), int((b - a).q)) * _UNIT):.2f}"


def schedule_svg(slots, title: str) -> str:
    devices = max(s.device for s in slots) + 1
    end = max(s.end for s in slots)
    width = float(_x(end)) + 16
    split = any(s.kind in _SPLIT_FILL for s in slots)
    if split:
        legend = "forward: a colour per direction; B (input gradient) red, W (weight gradient) grey, B + W dark red"
        width = max(width, _LEFT + 5.6 * len(legend))
    height = devices * _ROW + 48
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" '
           f'viewBox="0 0 {width:.0f} {height}" font-family="sans-serif" font-size="10">',
           f'<text x="{_LEFT}" y="14" font-size="12">{xml_escape(title)}</text>']
    for r in range(devices):
        y = 24 + r * _ROW
        out.append(f'<text x="4" y="{y + 14}">device {r}</text>')
        out.append(f'<rect x="{_LEFT}" y="{y}" width="{_w(end * 0, end)}" height="{_ROW - 4}" '
                   'fill="#ffffff" stroke="#bbbbbb"/>')
    for s in sorted(slots, key=lambda s: (s.device, s.start)):
        y = 24 + s.device * _ROW
        fill = _COLOURS[s.chunk % len(_COLOURS)] if s.kind == "F" else _SPLIT_FILL.get(s.kind, "#e15759")
        opacity = "1" if s.kind == "F" else "0.75"
        out.append(f'<rect x="{_x(s.start)}" y="{y}" width="{_w(s.start, s.end)}" height="{_ROW - 4}" '
                   f'fill="{fill}" fill-opacity="{opacity}" stroke="#333333" stroke-width="0.5"/>')
        cx = (float(_x(s.start)) + float(_x(s.end))) / 2
        out.append(f'<text x="{cx:.2f}" y="{y + 13}" text-anchor="middle" fill="#ffffff">{s.microbatch + 1}</text>')
    y = 24 + devices * _ROW + 14
    if not split:
        legend = "forward (a colour per chunk), backward in red; white: the bubble"
    out.append(f'<text x="{_LEFT}" y="{y}">{legend}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def schedule_tikz(slots, title: str) -> str:
    """The schedule as a tikzpicture. Each slot is ``\\slot{colour}{start}{device}{length}{centre}{n}``:
    a box drawn with pgf's basic layer and its micro-batch number set with ``\\pgftext`` (a TikZ
    node per slot made TeX spend about 1.5 ms a slot: a third of a report's PDF for a few hundred
    slots); it looks the same as a filled, drawn rectangle with a white node at its middle."""
    devices = max(s.device for s in slots) + 1
    end = max(s.end for s in slots)
    out = ["% " + title.replace("%", r"\%"), r"\begin{tikzpicture}[x=0.4cm, y=-0.5cm, font=\scriptsize]",
           r"% \slot{fill}{start}{device}{length}{centre}{micro-batch}: one box of the schedule",
           r"\def\slot#1#2#3#4#5#6{\pgfsetfillcolor{#1}\pgfpathrectangle{\pgfpointxy{#2}{#3}}"
           r"{\pgfpointxy{#4}{0.8}}\pgfusepath{fill,stroke}"
           r"\pgftext[at={\pgfpointxy{#5}{#3+0.4}}]{\color{white}\scriptsize #6}}"]
    for r in range(devices):
        out.append(rf"\node[anchor=east] at (0, {r} + 0.4) {{device {r}}};")
        out.append(rf"\draw[gray!50] (0, {r}) rectangle ({_num(end)}, {r} + 0.8);")
    out.append(r"\pgfsetstrokecolor{black!70}")
    for s in sorted(slots, key=lambda s: (s.device, s.start)):
        colour = ("blue!" + str(60 - 15 * (s.chunk % 3))) if s.kind == "F" else _SPLIT_TIKZ.get(s.kind, "red!60")
        out.append(rf"\slot{{{colour}}}{{{_num(s.start)}}}{{{s.device}}}{{{_num(s.end - s.start)}}}"
                   rf"{{{_num((s.start + s.end) / 2)}}}{{{s.microbatch + 1}}}")
    out.append(r"\end{tikzpicture}")
    return "\n".join(out) + "\n"


def _num(t) -> str:
    return f"{float(t):.4f}".rstrip("0").rstrip(".")


def memory_bars_svg(rows, title: str, labels=None,
                    footer: str = "strategies ranked by step time; labels tp/pp/dp") -> str:
    """A stacked bar per strategy: weights, gradients, optimizer, activations (GB, 10⁹ bytes);
    under each its number and *labels* (default tp/pp/dp of the row)."""
    parts = ("weights", "gradients", "optimizer", "activations")
    top = max((sum(float(r["parts"][p]) for p in parts) for r in rows), default=1) or 1
    bar, gap, h = 28, 14, 220
    width = _LEFT + len(rows) * (bar + gap) + 140
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h + 90}" '
           f'viewBox="0 0 {width} {h + 90}" font-family="sans-serif" font-size="10">',
           f'<text x="{_LEFT}" y="14" font-size="12">{xml_escape(title)}</text>',
           f'<text x="4" y="{30}">{bytes_in(top, "GB", ".1f")} GB</text>', f'<text x="4" y="{30 + h}">0</text>']
    for i, r in enumerate(rows):
        x, base = _LEFT + i * (bar + gap), 30 + h
        for j, p in enumerate(parts):
            v = float(r["parts"][p]) / top * h
            base -= v
            out.append(f'<rect x="{x}" y="{base:.2f}" width="{bar}" height="{v:.2f}" fill="{_COLOURS[j]}"/>')
        label = xml_escape(labels[i]) if labels else f"{r['tp']}/{r['pp']}/{r['dp']}"
        out.append(f'<text x="{x + bar / 2}" y="{30 + h + 14}" text-anchor="middle">{i + 1}</text>')
        out.append(f'<text x="{x + bar / 2}" y="{30 + h + 26}" text-anchor="middle" font-size="8">{label}</text>')
    lx = _LEFT + len(rows) * (bar + gap) + 10
    for j, p in enumerate(parts):
        out.append(f'<rect x="{lx}" y="{40 + 16 * j}" width="10" height="10" fill="{_COLOURS[j]}"/>')
        out.append(f'<text x="{lx + 14}" y="{49 + 16 * j}">{p}</text>')
    out.append(f'<text x="{_LEFT}" y="{h + 84}">{xml_escape(footer)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"

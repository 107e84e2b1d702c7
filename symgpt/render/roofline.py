"""A roofline figure (pgfplots LaTeX or SVG) from ``derive.inference_time.roofline``: the roof,
and each op of a decode step and of a prefill as a point. Formats only; deterministic."""

from __future__ import annotations

import math

from .latex import render as render_tex, tex
from .latex_escape import tex_escape
from .markup import xml_escape
from .text import sci

COLORS = {"decode": ("#1f77b4", "blue!70!black", "*", "decode step"),
          "prefill": ("#d95f02", "orange!85!black", "square*", "prefill")}


def _num(v) -> str:
    return f"{float(v):.6g}"


def _bounds(r):
    xs = [float(p[2]) for p in r.points] + [float(r.ridge)]
    ys = [float(p[3]) for p in r.points] + [float(r.peak)]
    xmin = 10 ** math.floor(math.log10(min(xs) / 2))
    xmax = 10 ** math.ceil(math.log10(max(xs) * 2))
    ymin = 10 ** math.floor(math.log10(min(ys) / 2))
    ymax = 10 ** math.ceil(math.log10(float(r.peak) * 1.5))
    return xmin, xmax, ymin, ymax


def roofline_tex(model_name: str, r) -> str:
    xmin, xmax, ymin, ymax = _bounds(r)
    ridge = float(r.ridge)
    roof = f"({_num(xmin)},{_num(xmin * float(r.bandwidth))}) ({_num(ridge)},{_num(r.peak)}) ({_num(xmax)},{_num(r.peak)})"
    series = []
    for phase in ("decode", "prefill"):
        pts = [p for p in r.points if p[0] == phase]
        if pts:
            _, color, mark, label = COLORS[phase]
            series.append({"mark": tex(mark), "color": tex(color), "label": label + f" ({len(pts)} ops)",
                           "coords": tex(" ".join(f"({_num(p[2])},{_num(p[3])})" for p in pts))})
    return render_tex("fig_roofline.tex", model=model_name, device=r.device,
                      title=f"{model_name} on {r.device}", xmin=tex(_num(xmin)), xmax=tex(_num(xmax)),
                      ymin=tex(_num(ymin)), ymax=tex(_num(ymax)), roof=tex(roof), series=series,
                      ridge=tex(_num(ridge)), peak=tex(_num(r.peak)),
                      ridge_label=tex(f"I = {ridge:.4g}"))


def roofline_svg(model_name: str, r) -> str:
    W, H, left, right, top, bottom = 760, 480, 80, 20, 40, 60
    xmin, xmax, ymin, ymax = _bounds(r)
    lx0, lx1, ly0, ly1 = math.log10(xmin), math.log10(xmax), math.log10(ymin), math.log10(ymax)

    def X(v):
        return left + (math.log10(float(v)) - lx0) / (lx1 - lx0) * (W - left - right)

    def Y(v):
        return H - bottom - (math.log10(float(v)) - ly0) / (ly1 - ly0) * (H - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           'font-family="Helvetica, Arial, sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2:.1f}" y="22" text-anchor="middle" font-size="15">{xml_escape(model_name)} on {xml_escape(r.device)}</text>']
    for e in range(int(lx0), int(lx1) + 1):
        x = X(10 ** e)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{H - bottom}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{x:.1f}" y="{H - bottom + 16}" text-anchor="middle">10^{e}</text>')
    for e in range(int(ly0), int(ly1) + 1):
        y = Y(10 ** e)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{W - right}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">10^{e}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{W - left - right}" height="{H - top - bottom}" '
               'fill="none" stroke="#444"/>')
    ridge = float(r.ridge)
    roof = [(xmin, xmin * float(r.bandwidth)), (ridge, float(r.peak)), (xmax, float(r.peak))]
    if roof[0][1] < ymin:  # clip the memory slope at the bottom of the plot
        roof[0] = (ymin / float(r.bandwidth), ymin)
    out.append('<polyline fill="none" stroke="black" stroke-width="2" points="'
               + " ".join(f"{X(a):.1f},{Y(b):.1f}" for a, b in roof) + '"/>')
    out.append(f'<line x1="{X(ridge):.1f}" y1="{top}" x2="{X(ridge):.1f}" y2="{H - bottom}" stroke="#888" '
               'stroke-dasharray="2,3"/>')
    out.append(f'<text x="{X(ridge) + 4:.1f}" y="{H - bottom - 6}" fill="#666">ridge I = {ridge:.4g}</text>')
    for phase in ("decode", "prefill"):
        color = COLORS[phase][0]
        for _, node, inten, attained, bound in (p for p in r.points if p[0] == phase):
            x, y = X(inten), Y(attained)
            tip = f"<title>{xml_escape(phase)} {xml_escape(node)}: {float(inten):.4g} FLOPs/byte, {sci(attained)} FLOP/s, {xml_escape(bound)}-bound</title>"
            if phase == "decode":
                out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{color}">{tip}</circle>')
            else:
                out.append(f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="{color}">{tip}</rect>')
    ly = top + 14
    for phase in ("decode", "prefill"):
        n = sum(1 for p in r.points if p[0] == phase)
        out.append(f'<rect x="{W - right - 190}" y="{ly - 9}" width="9" height="9" fill="{COLORS[phase][0]}"/>')
        out.append(f'<text x="{W - right - 176}" y="{ly}">{COLORS[phase][3]} ({n} ops)</text>')
        ly += 18
    out.append(f'<text x="{(left + W - right) / 2:.1f}" y="{H - 18}" text-anchor="middle">'
               'arithmetic intensity (FLOPs per byte)</text>')
    out.append(f'<text x="18" y="{(top + H - bottom) / 2:.1f}" text-anchor="middle" '
               f'transform="rotate(-90 18 {(top + H - bottom) / 2:.1f})">attainable FLOP/s</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


__all__ = ["roofline_tex", "roofline_svg", "tex_escape"]

"""Context of the ``cluster`` section: the pipeline schedules as TikZ, per-device memory across
strategies as a stacked bar (coordinates computed here), the communication by collective and the
step time, from :func:`symgpt.documents.cluster.figures`. Templates only place what this gives."""

from __future__ import annotations

import sympy

from ..render.cluster_fig import schedule_tikz
from ..render.latex import Tex, tex_expr
from ..render.latex_escape import tex_texttt
from ..render.latex_numbers import tex_bytes, tex_fixed, tex_int, tex_sci
from ..render.units import in_unit
from .cluster import DEVICES, MEMORY, OPTIMIZER, PRECISION, figures, summary

#: a bar's colour per memory part (xcolor)
COLOURS = {"weights": "blue!55", "gradients": "orange!75", "optimizer": "green!55!black", "activations": "violet!55"}
_HEIGHT = 5.0   # cm: the tallest bar


def _frac(r) -> Tex:
    r = sympy.Rational(r)
    return Tex(str(r.p) if r.q == 1 else rf"\tfrac{{{r.p}}}{{{r.q}}}")


def _mb(v) -> Tex:
    return Tex(tex_fixed(in_unit(v, "MB"), 4)) if v else Tex("--")


def _ms(v) -> Tex:
    return Tex("--") if v is None else Tex(tex_fixed(sympy.Rational(v) * 1000, 4))


def _schedules(f) -> list[dict]:
    out = []
    for s in f.schedules:
        title = f"{s.title}: p = {s.p}, m = {s.m}" + (f", v = {s.v}" if s.v > 1 else "")
        out.append({"title": s.title, "p": s.p, "m": s.m, "v": s.v, "tikz": Tex(schedule_tikz(s.slots, title)),
                    "bubble": _frac(s.bubble), "paper": _frac(s.paper),
                    "formula": Tex(r"\frac{p-1}{v\,m}" if s.v > 1 else r"\frac{p-1}{m}"),
                    "equal": s.bubble == s.paper})
    return out


def _bars(numbers) -> tuple[list[dict], Tex | None]:
    """The stacked bars of memory per device, from ``summary``'s exact numbers."""
    totals = [r["memory_total"] for r in numbers]
    if not numbers or any(v is None for v in totals):
        return [], None
    top = max(totals)
    bars = []
    for i, r in enumerate(numbers):
        y, segs = sympy.Integer(0), []
        for part in MEMORY:
            h = r["memory"][part] * _HEIGHT / top
            segs.append({"colour": COLOURS[part], "y0": f"{float(y):.3f}", "y1": f"{float(y + h):.3f}"})
            y += h
        bars.append({"x0": f"{1.5 * i:.2f}", "x1": f"{1.5 * i + 1:.2f}", "mid": f"{1.5 * i + 0.5:.2f}",
                     "top": f"{float(y):.3f}", "segments": segs, "label": r["short"],
                     "total": Tex(tex_bytes(r["memory_total"]))})
    return bars, Tex(tex_bytes(top))


def cluster(model, notation, **options) -> dict:
    from ..derive.comm import COLLECTIVES

    f = figures(model)
    hw, mach = f.hardware, f.machine
    rows, numbers = f.rows, summary(f)
    kinds = [k for k in COLLECTIVES if any(k in r["comm"] for r in numbers)]
    memory_rows, comm_rows, time_rows = [], [], []
    for r in numbers:
        mem = {p: Tex(tex_bytes(v)) if v is not None else Tex("--") for p, v in r["memory"].items()}
        per = r["per_param"]
        memory_rows.append({"name": r["name"], **mem, "per_param": Tex(" + ".join(map(str, map(_frac, per)))) if per else None,
                            "total": Tex(tex_bytes(r["memory_total"])) if r["memory_total"] is not None else Tex("--")})
        comm_rows.append({"name": r["name"], "cells": [_mb(r["comm"].get(k)) for k in kinds], "total": _mb(r["comm_total"]),
                          "zero": _frac(r["zero_volume"]) if r["zero_volume"] is not None else None})
        seqs = r["sequences"]
        time_rows.append({"name": r["name"], **{p: _ms(v) for p, v in r["time"].items()}, "step": _ms(r["step"]),
                          "sequences": Tex(tex_int(seqs)) if seqs.is_Integer else tex_expr(seqs, notation)})
    bars, top = _bars(numbers)
    convention = rows[0].total.notes[-1] if rows else ""
    return {"model": model.name, "devices": DEVICES, "precision": PRECISION, "optimizer": OPTIMIZER,
            "convention": convention, "schedules": _schedules(f),
            "hardware": {"name": Tex(tex_texttt(hw.name)), "title": hw.title,
                         "source": hw.source, "peak": Tex(tex_sci(mach["peak"])),
                         "link": Tex(tex_sci(mach["link_bandwidth"])), "node": Tex(tex_sci(mach["node_bandwidth"])),
                         "node_size": mach["node_size"]},
            "bars": bars, "top": top, "parts": [{"name": p, "colour": COLOURS[p]} for p in MEMORY],
            "memory_rows": memory_rows, "kinds": [k.replace(" + ", " +\n").split("\n") for k in kinds],
            "comm_rows": comm_rows, "time_rows": time_rows,
            "skipped": [f"{n}: {why}" for n, why in f.skipped],
            "theta": Tex(notation.quantity("params"))}

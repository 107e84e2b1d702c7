"""Terminal output of ``symgpt infer`` and ``symgpt hardware``: formula above the number, op tables."""

from __future__ import annotations

from .costs_text import seconds_text
from .report_text import model_header
from .text import expr_text, number, sci, table
from .units import bytes_text

_LONG = 160


def _value_text(q) -> str:
    v = q.value
    if v is None:
        return "(symbolic)"
    if q.unit == "bytes":
        return bytes_text(v)
    if q.unit == "s":
        return seconds_text(v)
    if q.unit in ("FLOPs",):
        return f"{number(v)}  (≈ {sci(v)})"
    return f"{number(v)}  (≈ {float(v):,.6g})" if not v.is_Integer else number(v)


def _formula(q) -> str:
    text = expr_text(q.expr)
    if len(text) > _LONG:
        if len(q.breakdown) > 1:
            return f"(a sum over {len(q.breakdown)} ops; --json gives each formula)"
        return "(a long formula; --json gives it)"
    return text


def _cell(expr, value) -> str:
    return number(value) if value is not None and value.is_Integer else (
        f"{float(value):,.6g}" if value is not None else expr_text(expr))


def infer_text(m, qs, points, notes, hint: str = "") -> str:
    lines = [model_header(m), ""]
    for q in qs:
        lines += [f"{q.name} ({q.unit})", f"  {_formula(q)}", f"  = {_value_text(q)}", ""]
    if points:
        rows = []
        for p in points:
            rows.append([p.node, _cell(p.flops, p.flops_value), _cell(p.bytes, p.bytes_value),
                         f"{float(p.intensity):.4g}" if p.intensity is not None else "-", p.bound or "-"])
        lines += ["decode step, op by op (FLOPs and bytes of all layers, per device):",
                  table(["op", "FLOPs", "bytes", "FLOPs/byte", "bound"], rows, "lrrrl"), ""]
    if qs:
        lines.append(f"convention {qs[0].notes[0].split('; convention ', 1)[-1]}")
    seen = []
    for q in qs:
        for n in q.notes[1:]:
            if n not in seen:
                seen.append(n)
    lines += [f"note: {n}" for n in seen + list(notes)]
    lines += [f"note: {n}" for n in m.notes]
    if hint:
        lines.append(hint)
    return "\n".join(lines)


def hardware_text(profiles) -> str:
    from .units import bytes_text

    rows = []
    for h in profiles:
        peaks = ", ".join(f"{k} {sci(v, 4)}" for k, v in h.peaks.items())
        rows.append([h.name, h.title, peaks, f"{sci(h.hbm_bandwidth)} B/s",
                     bytes_text(h.memory).split(" = ", 1)[-1], f"{sci(h.link_bandwidth)} B/s"])
    lines = [table(["name", "device", "dense peak FLOP/s", "HBM bandwidth", "memory", "link (per direction)"],
                   rows, "llllll"), ""]
    lines += [f"{h.name}: {h.source}" for h in profiles]
    lines.append("peaks are dense (half a datasheet's 'with sparsity' figure); link bandwidths per "
                 "device per direction (half NVIDIA's bidirectional NVLink figure)")
    return "\n".join(lines)

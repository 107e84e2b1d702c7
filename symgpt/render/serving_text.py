"""Terminal output of ``symgpt serve``: each quantity's closed form above its exact value."""

from __future__ import annotations

from .costs_text import seconds_text
from .report_text import model_header
from .text import expr_text, number
from .units import bytes_text

_LONG = 160

#: quantities whose formula is the ratio of two others, shown by name
_RATIOS = {"serving.max_sequences": "floor(serving.kv_budget / serving.kv_per_sequence)",
           "serving.prefix.max_sequences": "floor((serving.kv_budget - the shared prefix blocks) / "
                                           "(serving.kv_per_sequence - serving.prefix.saved_per_sequence))"}


def _value(q) -> str:
    v = q.value
    if v is None:  # closed form in what is unbound (the context length T)
        text = expr_text(q.expr.xreplace(dict(q.bindings)))
        return text if len(text) <= _LONG else "(symbolic)"
    if q.unit == "bytes":
        return bytes_text(v)
    if q.unit == "s":
        return f"{seconds_text(v)}  (exactly {v})" if not v.is_Integer else seconds_text(v)
    if v.is_Integer:
        return f"{number(v)} {q.unit}"
    return f"{float(v):,.6g} {q.unit}  (exactly {v})"


def _part(q, e) -> str:
    v = e.xreplace(dict(q.bindings))
    if not v.is_number:
        return expr_text(v)
    if q.unit == "bytes":
        return bytes_text(v)
    return seconds_text(v) if q.unit == "s" else f"{float(v):,.6g}"


def _formula(q) -> str | None:
    if q.name in _RATIOS:
        return _RATIOS[q.name]
    if q.expr.is_number:
        return None
    text = expr_text(q.expr)
    return text if len(text) <= _LONG else "(a long formula; --json gives it)"


def serving_text(m, qs, notes, hint: str = "") -> str:
    lines = [model_header(m), ""]
    for q in qs:
        lines.append(f"{q.name} ({q.unit})")
        f = _formula(q)
        if f is not None:
            lines.append(f"  {f}")
        lines.append(f"  = {_value(q)}")
        if q.name.startswith("serving.ep.") and len(q.breakdown) > 1:  # the parts of an expert-parallel answer
            lines += [f"    {part}: {_part(q, e)}" for part, e in q.breakdown]
        lines.append("")
    seen = []
    for q in qs:
        for n in q.notes:
            if n not in seen:
                seen.append(n)
    lines += [f"note: {n}" for n in seen + list(notes)]
    lines += [f"note: {n}" for n in m.notes]
    if hint:
        lines.append(hint)
    return "\n".join(lines)

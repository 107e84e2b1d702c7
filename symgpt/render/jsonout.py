"""The JSON contract: quantities as ``{"expression", "value", "breakdown"}`` with exact values."""

from __future__ import annotations

import json

import sympy


def json_value(v):
    """An exact integer stays an integer; a non-integer rational becomes a number plus, in
    ``exact_value``, its exact ``p/q`` string (see ``quantity_json``); None when unbound."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    if v.is_Integer:
        return int(v)
    return float(v)


def _exact(v):
    if v is None or isinstance(v, (int, bool)) or v.is_Integer:
        return None
    return str(v)


def expr_json(expr) -> str:
    """SymPy syntax over the canonical names (deterministic)."""
    return sympy.sstr(expr, order="grlex")


def quantity_json(q) -> dict:
    out = {"expression": expr_json(q.expr), "value": json_value(q.value)}
    if _exact(q.value):
        out["exact_value"] = _exact(q.value)
    out["unit"] = q.unit
    if q.convention:
        out["convention"] = q.convention
    values = q.values()
    out["breakdown"] = {}
    for path, e in q.breakdown:
        entry = {"expression": expr_json(e), "value": json_value(values[path])}
        if _exact(values[path]):
            entry["exact_value"] = _exact(values[path])
        out["breakdown"][path] = entry
    if q.notes:
        out["notes"] = list(q.notes)
    return out


def model_json(model) -> dict:
    return {
        "model": model.name,
        "family": model.family.name,
        "bindings": {k: int(v) for k, v in model.sizes.items()},
        "flags": dict(model.flags),
    }


def dumps(obj) -> str:
    """Deterministic JSON text (sorted nothing: our dicts are built in a fixed order)."""
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"

"""Answers from the derivation cache (``symgpt.core.cache``) for ``symgpt params PRESET``: the presets
(``symgpt.families.presets``, light), two cache entries and the standard library, without SymPy or
networkx.

Two entries per answer: the family's default flags (keyed by the family) and the derivation
(keyed by the family, all its flags, the sizes bound when the graph is built, the quantity, the
convention and the options): the expression and its breakdown as trees, their printed formulas,
the unit, the notes and the architecture's constraints (kind, id, expression). The preset's sizes are put into the
trees with exact integer arithmetic; a constraint the sizes break, a missing or doubtful entry,
anything unexpected: no answer here, and the command derives as usual (and stores the entries).
"""

from __future__ import annotations

from ..core import cache
from ..core.flag_symbols import FLAG_SYMBOLS, flag_sizes


def _family_key(family: str) -> dict:
    return {"family": family, "what": "family"}


def _key(family: str, flags: dict, sizes, quantity: str) -> dict:
    return {"family": family, "flags": sorted([k, v] for k, v in flags.items()),
            "bound": sorted(k for k in sizes if k not in ("B", "T")), "quantity": quantity,
            "convention": None, "options": []}


def params_answer(name: str) -> str | None:
    """The text of ``symgpt params NAME`` from the cache, or None."""
    from ..families import find_preset

    preset = find_preset(name) if isinstance(name, str) else None
    if preset is None:
        return None
    fam = cache.get(_family_key(preset.family))
    if fam is None or not isinstance(fam.get("flags"), dict):
        return None
    defaults = fam["flags"]
    if any(k not in defaults for k in preset.flags):
        return None
    flags = {**defaults, **preset.flags}
    data = cache.get(_key(preset.family, flags, {**preset.sizes, **flag_sizes(flags)}, "params"))
    if data is None:
        return None
    try:
        return _text(preset, fam["flags"], flags, data)
    except (KeyError, TypeError, ValueError, RecursionError, ZeroDivisionError):
        return None


def _text(preset, defaults, flags, data) -> str | None:
    from ..render.report_text import header_text, quantity_block

    sizes = dict(preset.sizes)
    for name in FLAG_SYMBOLS.values():  # as a Model binds them: a size flag's symbol, its value
        sizes.pop(name, None)
    sizes.update(flag_sizes(flags))
    if any(type(v) is not int or v <= 0 for v in sizes.values()):
        return None
    for kind, cid, t in data["constraints"]:
        if cid is not None and cid in preset.waive:
            continue
        v = cache.value(t, sizes)
        if v is None:
            continue
        if (not isinstance(v, int) or v <= 0) if kind == "integer" else v > 0:
            return None  # the usual path says what is wrong
    total = cache.value(data["expr"], sizes)
    rows = [(path, text, cache.value(t, sizes)) for path, text, t in data["breakdown"]]
    notes = [*data["notes"], *((preset.note,) if preset.note else ())]
    header = header_text(preset.name, preset.family, sizes, flags, defaults)
    return quantity_block(header, data["name"], data["unit"], data["convention"], data["formula"],
                          total, rows, notes)


def store_params(m, q) -> None:
    """Store what ``params_answer`` needs for *m* (a preset's model) and its params *q*."""
    from ..render.text import expr_text

    if m.preset is None:
        return
    try:
        cache.put(_family_key(m.family.name), {"flags": dict(m.family.flags)})
        data = {"name": q.name, "unit": q.unit, "convention": q.convention, "notes": list(q.notes),
                "expr": cache.tree(q.expr), "formula": expr_text(q.expr),
                "breakdown": [[p, expr_text(e), cache.tree(e)] for p, e in q.breakdown],
                "constraints": [[c.kind, c.id, cache.tree(c.expr)] for c in m.arch.constraints]}
        cache.put(_key(m.family.name, m.flags, m.sizes, "params"), data)
    except (cache.Unsupported, TypeError, ValueError):
        pass  # not representable as data (a function of the sizes, a flag that is not JSON)

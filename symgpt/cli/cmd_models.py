"""symgpt models: the presets with their key sizes."""

from __future__ import annotations

from .common import add_json, emit

HELP = "list the preset models with their key sizes"


def add_arguments(p):
    add_json(p)
    p.add_argument("--notes", action="store_true", help="also print each preset's source and caveats")


def run(args) -> int:
    from ..model.model import load
    from ..families import presets
    from ..render.jsonout import dumps
    from ..render.text import number, table

    rows, payload = [], []
    for name, p in presets().items():
        m = load(name)
        n = m.params.value
        payload.append({"name": name, "family": p.family, "sizes": dict(p.sizes), "flags": dict(p.flags),
                        "params": int(n), "source": p.source, "note": p.note})
        s = p.sizes
        rows.append([name, p.family, *(number(s.get(k)) for k in ("L", "h", "d", "V", "T_max")), number(n)])
    if args.json:
        emit(dumps({"models": payload}))
        return 0
    emit(table(["model", "family", "L", "h", "d", "V", "T_max", "params"], rows, "llrrrrrr"), fit=True)
    if args.notes:
        for item in payload:
            if item["note"] or item["source"]:
                emit(f"\n{item['name']}: {item['source']}" + (f"\n  note: {item['note']}" if item["note"] else ""), fit=True)
    return 0

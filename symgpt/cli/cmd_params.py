"""symgpt params MODEL: the exact parameter count, its formula and breakdown."""

from __future__ import annotations

from .common import add_json, add_model, emit, load_model

HELP = "exact parameter count with its formula and breakdown"


def add_arguments(p):
    add_model(p)
    add_json(p)
    p.add_argument("--depth", type=int, default=0, metavar="N",
                   help="group the breakdown to the first N path components (0: every op)")


def run(args) -> int:
    from ..render.jsonout import dumps, model_json, quantity_json
    from ..render.report_text import quantity_text

    from ..errors import SymgptError

    if args.depth < 0:
        raise SymgptError(f"--depth must be 0 (every op) or a number of path components, got {args.depth}")
    m = load_model(args)
    q = m.params
    if args.json:
        emit(dumps({**model_json(m), "params": quantity_json(q)}))
        return 0
    emit(quantity_text(m, q, depth=args.depth), fit=True)
    return 0

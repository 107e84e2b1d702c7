"""symgpt compare MODEL QUANTITY "EXPR": is your formula the derived one? Otherwise by how
much it differs, as an expression, a value and a relative error."""

from __future__ import annotations

from .query_args import add_let, add_quantity
from .common import add_json, add_model, emit, load_model

HELP = "compare a formula you type with the derived quantity"
DESCRIPTION = HELP + (". EXPR uses the canonical symbols (B T T_max d h h_kv d_head L V d_ff E "
                      "k W), numbers, + - * / ^ and parentheses; it is parsed, never evaluated. "
                      "Example: symgpt compare gpt2-small params \"12*L*d^2 + V*d + 2*d\".")


def add_arguments(p):
    add_model(p)
    add_quantity(p)
    p.add_argument("expr", metavar="EXPR", help="your formula, e.g. \"12*L*d^2 + 13*L*d\"")
    add_let(p)
    add_json(p)


def run(args) -> int:
    from .query_args import check_text_args
    from ..query import compare
    from ..render.jsonout import dumps, model_json
    from ..render.query_json import compare_json
    from ..render.query_text import compare_text
    from .query_args import lets, quantity

    check_text_args(args)
    m = load_model(args)
    names = lets(args, m)
    c = compare(quantity(args, m), args.expr, names, m.name)
    emit(dumps({**model_json(m), **compare_json(c)}) if args.json else compare_text(m, c), fit=not args.json)
    return 0

"""symgpt crossover MODEL QUANTITY --as SYMBOL: where the fastest-growing terms overtake the
rest (or --part overtakes --against), solved exactly, and how far counting everything moves it."""

from __future__ import annotations

from .query_args import add_quantity
from .common import add_json, add_model, emit, load_model

HELP = "where the fastest-growing terms of a quantity overtake the rest"
DESCRIPTION = HELP + (". Example: 'symgpt crossover gpt2-small flops.forward --as T --part "
                      "blocks' (attention overtakes the dense matmuls at T = 6·d); with --part "
                      "the answer for the whole quantity is shown too, and how far it moves. "
                      "'--part A --against B' sets one part against another.")


def add_arguments(p):
    add_model(p)
    add_quantity(p)
    p.add_argument("--as", dest="symbol", required=True, metavar="SYMBOL",
                   help="the symbol that grows (T, d, ...)")
    p.add_argument("--against", metavar="PATH[,PATH...]",
                   help="the part that --part overtakes (default: the rest of --part's terms)")
    add_json(p)


def run(args) -> int:
    from .query_args import check_text_args
    from ..query import by_role, crossover, outside, per_block, restrict, select, shift
    from ..query.selection import stack_for
    from ..render.jsonout import dumps, model_json
    from ..render.query_json import crossover_json
    from ..render.query_text import crossover_text
    from .query_args import options

    check_text_args(args)
    m = load_model(args)
    base = select(m, args.quantity, None, False, **options(args))
    if args.per_block:  # one layer of the stack --part lies in: --part and --against are inside it
        stack = stack_for(restrict(base, args.part) if args.part else base, m)
        base = per_block(by_role(base, m, [stack]), m)
    c = crossover(base, args.symbol, part=args.part, against=args.against)
    whole = moved = None
    if args.part and not args.against:
        whole = crossover(base, args.symbol)
        moved = shift(whole, c)
    notes = list(dict.fromkeys([*c.notes, *outside(m, c)] + (
        [*whole.notes, *outside(m, whole)] if whole is not None else [])))
    if args.json:
        emit(dumps({**model_json(m), **crossover_json(c, whole, moved, m.value),
                    **({"notes": notes} if notes else {})}))
    else:
        emit(crossover_text(m, c, whole, moved) + "".join(f"\nnote: {n}" for n in notes), fit=True)
    return 0

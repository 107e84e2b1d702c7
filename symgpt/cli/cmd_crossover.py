"""symgpt crossover MODEL QUANTITY --as SYMBOL: where the fastest-growing terms overtake the
rest (or --part overtakes --against), solved exactly, and how far counting everything moves it;
with --against-model MODEL_B, where one model's quantity drops below the other's."""

from __future__ import annotations

from .query_args import add_quantity
from .common import add_json, add_model, emit, load_model

HELP = "where the fastest-growing terms of a quantity overtake the rest, or where one model becomes cheaper than another"
DESCRIPTION = HELP + (". Example: 'symgpt crossover gpt2-small flops.forward --as T --part "
                      "blocks' (attention overtakes the dense matmuls at T = 6·d); with --part "
                      "the answer for the whole quantity is shown too, and how far it moves. "
                      "'--part A --against B' sets one part against another. Two models: "
                      "'symgpt crossover mamba-config.json inference.decode.time --against-model "
                      "gpt2-small --as T --set B=1 --option hardware=h100-sxm' gives the T from which "
                      "one model's decode step is the cheaper (every size but T bound; --set and "
                      "--option apply to both models).")


def add_arguments(p):
    add_model(p)
    add_quantity(p)
    p.add_argument("--as", dest="symbol", required=True, metavar="SYMBOL",
                   help="the symbol that grows (T, d, ...)")
    p.add_argument("--against", metavar="PATH[,PATH...]",
                   help="the part that --part overtakes (default: the rest of --part's terms)")
    # a crossover of two models
    p.add_argument("--against-model", metavar="MODEL_B",
                   help="a second model (preset, family, config.json or Hub id): the T (--as) from which "
                   "one model's QUANTITY stays below the other's, solved exactly; --set and --option "
                   "apply to both; not with --part, --against or --per-block")
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
    if args.against_model is not None:
        return _two_models(args)
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
    from ..query.wholecount import first_whole

    notes = list(dict.fromkeys([*c.notes, *outside(m, c)] + [n for n in (first_whole(c),) if n] + (
        [*whole.notes, *outside(m, whole)] if whole is not None else [])))
    if args.json:
        emit(dumps({**model_json(m), **crossover_json(c, whole, moved, m.value),
                    **({"notes": notes} if notes else {})}))
    else:
        emit(crossover_text(m, c, whole, moved) + "".join(f"\nnote: {n}" for n in notes), fit=True)
    return 0


def _two_models(args) -> int:
    """``--against-model``: the crossover of one quantity of two models."""
    from ..core.errors import SymgptError
    from ..query import select
    from ..query.crossmodels import crossover_models
    from ..render.jsonout import dumps, model_json
    from ..render.query_json import models_crossover_json
    from ..render.query_text import models_crossover_text
    from .query_args import options

    for flag, value in (("--part", args.part), ("--against", args.against), ("--per-block", args.per_block)):
        if value:
            raise SymgptError(f"--against-model compares whole quantities of two models: not with {flag}")
    m, other = load_model(args), load_model(args, args.against_model)
    opts = options(args)
    qa, qb = select(m, args.quantity, None, False, **opts), select(other, args.quantity, None, False, **opts)
    c = crossover_models(qa, qb, args.symbol, m.name, other.name)
    notes = _out_of_range(c, m) + _out_of_range(c, other)
    if notes:
        import dataclasses

        c = dataclasses.replace(c, notes=c.notes + tuple(notes))
    if args.json:
        emit(dumps({**model_json(m), "against_model": model_json(other), **models_crossover_json(c)}))
    else:
        emit(models_crossover_text(m, other, c), fit=True)
    return 0


def _out_of_range(c, model) -> list[str]:
    """The model's constraints the threshold breaks (T = 1,953 > T_max = 1,024): still where the
    two curves cross, but say so."""
    from ..derive.quantity import evaluate

    if c.threshold is None:
        return []
    b = {**model.bindings, c.symbol: c.threshold}
    out = []
    for con in model.arch.constraints:
        if con.kind != "le" or c.symbol not in con.expr.free_symbols:
            continue
        left = evaluate(con.expr, b)
        if left is not None and left > 0:
            out.append(f"at {c.symbol} = {c.threshold} {model.name} is out of range: {con.message}")
    return out

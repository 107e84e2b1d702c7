"""symgpt dominance MODEL QUANTITY [--as SYMBOL]: terms by growth and each part's limiting
share; without --as, the largest parts and terms at the configuration (ranking)."""

from __future__ import annotations

from .query_args import add_quantity, add_regime
from .common import add_json, add_model, emit, load_model

HELP = "terms ordered by growth as a symbol grows, with each part's limiting share"
DESCRIPTION = HELP + (". Without --as: the parts and terms ranked by size at the "
                      "configuration (bind B, T, ... with --set).")


def add_arguments(p):
    add_model(p)
    add_quantity(p)
    add_regime(p, False, "the growing symbol (repeat or comma-separate for several; "
               "':RATE' as in 'symgpt rule'); omit to rank at the configuration")
    p.add_argument("--depth", type=int, default=0, metavar="N",
                   help="sum the parts to the first N path components (0: every entry)")
    add_json(p)


def run(args) -> int:
    from .query_args import check_text_args
    from ..query import dominance, rank_terms, ranking
    from ..render.jsonout import dumps, model_json
    from ..render.query_json import dominance_json, ranking_json
    from ..render.query_text import dominance_text, ranking_text
    from .query_args import quantity

    check_text_args(args)
    m = load_model(args)
    q = quantity(args, m)
    depth = args.depth or None
    if args.regime:
        dm = dominance(q, args.regime, depth)
        emit(dumps({**model_json(m), **dominance_json(dm)}) if args.json else dominance_text(m, dm), fit=not args.json)
        return 0
    parts, terms = ranking(q, depth), rank_terms(q)
    emit(dumps({**model_json(m), **ranking_json(q, parts, terms)}) if args.json
         else ranking_text(m, q, parts, terms), fit=not args.json)
    return 0

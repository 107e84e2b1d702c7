"""symgpt rule MODEL QUANTITY --as SYMBOL: the leading-order form (the textbook rule) of a
quantity as symbols grow, with its relative error at the configuration."""

from __future__ import annotations

from .query_args import add_let, add_quantity, add_regime
from .common import add_json, add_model, emit, load_model

HELP = "the leading-order rule of a quantity as symbols grow, and its error here"
DESCRIPTION = HELP + (". Examples: 'symgpt rule gpt2-small params --as d' (12·L·d²); "
                      "'--as d --as V' (d and V grow together: V·d + 12·L·d²); "
                      "'--as d,L --as V:2' (L ∝ d, V ∝ d²); "
                      "'--let N=12*L*d^2' also writes the rule in terms of N.")


def add_arguments(p):
    add_model(p)
    add_quantity(p)
    add_regime(p, True, "a growing symbol (others stay fixed); repeat or comma-separate to "
               "grow several together; ':RATE' grows one as a power of the first (V:2: V ∝ d²)")
    add_let(p)
    add_json(p)


def run(args) -> int:
    from .query_args import check_text_args
    from ..query import rule
    from ..render.jsonout import dumps, model_json
    from ..render.query_json import rule_json
    from ..render.query_text import rule_text
    from .query_args import lets, quantity

    check_text_args(args)
    m = load_model(args)
    r = rule(quantity(args, m), args.regime)
    rewritten = {name: (d, r.in_terms_of(name, d)) for name, d in lets(args, m).items()}
    if args.json:
        emit(dumps({**model_json(m), **rule_json(r, rewritten)}))
    else:
        emit(rule_text(m, r, rewritten), fit=True)
    return 0

"""symgpt check: the library of published formulas (papers and lecture notes) checked against
the derivations -- formula, source, convention, verdict."""

from __future__ import annotations

from .common import add_json, emit

HELP = "check the published formulas (Kaplan, Megatron, ZeRO, GPT-2, ...) against the derivations"
DESCRIPTION = HELP + (". Each row: the formula mapped onto symgpt's symbols, the quantity and "
                      "convention it is compared under, its source, and the verdict: equal, or "
                      "'differs by' formula - derived; 'as documented' says whether the verdict "
                      "is what the source says it should be.")


def add_arguments(p):
    p.add_argument("match", nargs="?", metavar="TEXT",
                   help="only formulas whose name, source or quantity contains TEXT")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 if a verdict is not what its source documents")
    add_json(p)


def run(args) -> int:
    from .query_args import check_text_args
    from ..query import check_library
    from ..render.jsonout import dumps
    from ..render.query_json import check_json
    from ..render.query_text import check_text

    check_text_args(args)
    rows = check_library(match=args.match)
    emit(dumps(check_json(rows)) if args.json else check_text(rows), fit=not args.json)
    if args.strict and any(c.as_expected is False for c in rows):
        return 1
    return 0

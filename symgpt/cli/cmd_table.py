"""symgpt table MODEL...: one row per model, one column per size or quantity (LaTeX, Markdown, CSV)."""

from __future__ import annotations

from . import choices
from .common import add_model, emit, settings, wrote

HELP = "a table of models by sizes and quantities, as LaTeX, Markdown or CSV"


def add_arguments(p):
    add_model(p, many=True)
    p.add_argument("--columns", default="L,h,d,d_ff,T_max,params", metavar="COL,...",
                   help="comma-separated symbols (L, d, d_ff, T_max, ...) and quantities "
                   "(params, flops.forward, flops.train, memory.total, ...); default: %(default)s")
    p.add_argument("--format", choices=choices.TABLE_FORMATS, default="latex")
    p.add_argument("--numbers", choices=choices.NUMBER_STYLES, default="short",
                   help="how quantities print: 124.4 M (short), 124,439,808 (exact), 1.244e8 (sci); "
                   "CSV always holds exact values")
    p.add_argument("--notation", metavar="NAME|FILE", default=None,
                   help="notation profile for LaTeX headers: " + choices.listed(choices.NOTATIONS) +
                   ", or a profile file")
    p.add_argument("--convention", default=None, metavar="NAME",
                   help="FLOP counting convention for flops.* columns: " + choices.listed(choices.CONVENTIONS))
    p.add_argument("--per", choices=choices.PER, default=None, help="FLOPs per ...")
    p.add_argument("--caption", default="", help="table caption (escaped)")
    p.add_argument("--standalone", action="store_true", help="LaTeX: a complete document")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (atomically) instead of stdout")


def run(args) -> int:
    from pathlib import Path

    from ..core.io import write_atomic
    from ..model.model import load
    from ..documents.tables import scaling_table

    over = settings(args)
    models = [load(name, **over) for name in args.model]
    table = scaling_table(models, args.columns.split(","), args.notation, args.numbers,
                          {"convention": args.convention, "per": args.per}, args.caption)
    text = table.render(args.format, standalone=args.standalone)
    if args.output:
        write_atomic(Path(args.output), text)
        wrote(args.output)
    else:
        import sys

        sys.stdout.write(text)
    return 0

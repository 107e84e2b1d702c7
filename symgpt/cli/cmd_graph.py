"""symgpt graph MODEL: the computation graph as a Graphviz diagram (SVG, PNG, PDF or DOT)."""

from __future__ import annotations

from . import choices
from .common import add_model, emit, load_model

HELP = "the computation graph as a diagram (svg, png, pdf via Graphviz, or DOT text)"
DESCRIPTION = (
    "Draw the forward pass from the op graph: one box per op, arrows labelled with tensor "
    "shapes (concrete where --set binds B and T), the repeated block drawn once as a cluster "
    "labelled x L (or every copy with --unroll), tied weights as one shared matrix, each op "
    "with its parameters and FLOPs, coloured by its share of params, FLOPs or activation memory. "
    "Without -o, DOT (or SVG text) goes to stdout."
)


def add_arguments(p):
    add_model(p)
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write here (atomically); the format defaults to the suffix "
                   "(.svg, .png, .pdf, .dot)")
    p.add_argument("--format", choices=choices.GRAPH_FORMATS,
                   help="output format (default: the suffix of -o, else dot on stdout); "
                   "svg, png and pdf need Graphviz's dot program")
    p.add_argument("--color-by", choices=choices.COLOR_BY, default="params",
                   help="colour each op by its share of parameters (default), forward FLOPs or "
                   "activation memory")
    p.add_argument("--unroll", action="store_true",
                   help="draw every copy of the repeated block (L must be bound, at most 64)")
    p.add_argument("--fit", choices=choices.FITS, default=None,
                   help="a compact diagram sized for a 16:9 slide (left to right, text >= 9 pt at 10 in "
                   "wide) or an A4 page (text >= 7 pt at text width): attention internals folded, "
                   "names and ops only")
    p.add_argument("--convention", metavar="NAME",
                   help="FLOP and memory counting convention: " + choices.listed(choices.CONVENTIONS) +
                   " (default: default)")


def run(args) -> int:
    from pathlib import Path

    from ..errors import SymgptError
    from ..render.dot import diagram, format_for

    m = load_model(args)
    fmt = args.format or (format_for(Path(args.output)) if args.output else "dot")
    d = diagram(m, color_by=args.color_by, unroll=args.unroll, convention=args.convention, fit=args.fit)
    if args.output:
        d.save(args.output, fmt)
        return 0
    if fmt in ("png", "pdf"):
        raise SymgptError(f"{fmt} is binary: give -o FILE to write it")
    emit(d.dot if fmt == "dot" else d.svg())
    return 0

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
                   "activation memory, or (bound) memory- or compute-bound in an inference step")
    p.add_argument("--phase", choices=choices.PHASES,
                   help="draw an inference step: its shapes and FLOPs (decode: one new token per "
                   "sequence against a cache of T)")
    p.add_argument("--hardware", choices=choices.HARDWARE, metavar="NAME",
                   help="for --color-by bound: a profile of 'symgpt hardware'")
    p.add_argument("--peak", metavar="FLOP/S", help="for --color-by bound: peak FLOP/s of one device")
    p.add_argument("--bandwidth", metavar="BYTES/S", help="for --color-by bound: memory bandwidth")
    p.add_argument("--weight-bits", type=int, choices=choices.WEIGHT_BITS, help="for --phase: weight bits")
    p.add_argument("--unroll", action="store_true",
                   help="draw every copy of the repeated block (L must be bound, at most 64 "
                   "copies). Layout time follows the width of the ranks (rows) Graphviz lays out, "
                   "not the box count: a diagram whose layout estimate (the sum over its ranks of "
                   "the squared rank width: boxes plus long edges passing through) is above 30,000 "
                   "is refused, and one above 20,000 "
                   "is announced as taking several seconds")
    p.add_argument("--fit", choices=choices.DIAGRAM_FITS, default=None,
                   help="a compact diagram sized for a 16:9 slide (left to right, text >= 9 pt at 10 in "
                   "wide) or an A4 page (text >= 7 pt at text width): attention internals folded, "
                   "names and ops only")
    p.add_argument("--convention", metavar="NAME",
                   help="FLOP and memory counting convention: " + choices.listed(choices.CONVENTIONS) +
                   " (default: default)")


def run(args) -> int:
    from pathlib import Path

    from ..core.errors import SymgptError
    from ..documents.diagrams import diagram, format_for

    m = load_model(args)
    fmt = args.format or (format_for(Path(args.output)) if args.output else "dot")
    inference = {}
    if args.hardware:
        inference["hardware"] = args.hardware
    if args.weight_bits:
        inference["weight_bits"] = args.weight_bits
    if args.peak or args.bandwidth:
        from .args import number

        for key in ("peak", "bandwidth"):
            if getattr(args, key):
                inference[key] = number(getattr(args, key), "--" + key)
    if inference and args.phase is None and args.color_by != "bound":
        raise SymgptError("--hardware, --peak, --bandwidth and --weight-bits go with --phase or --color-by bound")
    step = None
    if args.phase is not None or args.color_by == "bound":
        from ..derive.roofline import step_view

        step = step_view(m, args.phase or "decode", bound=args.color_by == "bound", **inference)
    d = diagram(m, color_by=args.color_by, unroll=args.unroll, convention=args.convention, step=step,
                fit=args.fit)
    if fmt != "dot":
        import sys

        from ..external.graphviz import NOTICE_LAYOUT, check_layout, describe

        cost = check_layout(d.dot)
        if cost.units > NOTICE_LAYOUT:
            print(f"symgpt: Graphviz may take several seconds to lay this diagram out: {describe(cost)}",
                  file=sys.stderr)
    if args.output:
        d.save(args.output, fmt)
        return 0
    if fmt in ("png", "pdf"):
        raise SymgptError(f"{fmt} is binary: give -o FILE to write it")
    emit(d.dot if fmt == "dot" else d.svg())
    return 0

"""symgpt html MODEL -o FILE: the derivation as one interactive, self-contained web page."""

from __future__ import annotations

from .common import add_model, emit, load_model

HELP = "an interactive web page: every closed form evaluated live and exactly in a browser"
DESCRIPTION = (
    "Write one self-contained HTML file (no network at view time): inputs for every size and "
    "for precision, optimizer, ZeRO stage, dp and tp; the totals and their formulas (MathML); "
    "the compute graph, whose ops show their shapes, formulas and values and highlight their "
    "rows in the tables; plots of FLOPs against T with the crossover, of the training memory "
    "and of the parameter shares. Values are exact integers or fractions, evaluated in the "
    "browser with BigInt, the digits this command line prints. --set gives the starting sizes "
    "(B = 8 and T = T_max unless set). Without -o the page goes to stdout."
)


def add_arguments(p):
    add_model(p)
    p.add_argument("-o", "--output", metavar="FILE", help="write the page here (atomically), e.g. model.html")


def run(args) -> int:
    from ..documents.html import html
    from ..core.io import write_atomic

    text = html(load_model(args))
    if args.output:
        write_atomic(args.output, text)
        return 0
    emit(text)
    return 0

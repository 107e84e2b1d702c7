"""symgpt schedule: a pipeline schedule (GPipe, 1F1B, interleaved 1F1B) run on p devices, drawn
as SVG or TikZ, with the bubble it leaves beside the papers' (p − 1)/m and (p − 1)/(v·m)."""

from __future__ import annotations

from .common import emit
from .args import path, positive_int

HELP = "a pipeline schedule (GPipe, 1F1B, interleaved) drawn as SVG or TikZ, with its bubble"


from . import choices


def add_arguments(p):
    p.add_argument("--pp", type=positive_int, required=True, metavar="P", help="pipeline stages (devices)")
    p.add_argument("--microbatches", type=positive_int, required=True, metavar="M", help="micro-batches per step")
    p.add_argument("--vp", type=positive_int, default=1, metavar="V", help="chunks per device (interleaved)")
    p.add_argument("--schedule", choices=choices.SCHEDULES, default="1f1b")
    p.add_argument("--format", choices=choices.SCHEDULE_FORMATS, default="text",
                   help="text: the bubble only; svg or tikz: the drawing (default text)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the output (the bubble, or the drawing) to FILE (default: stdout)")


def run(args) -> int:
    import sympy

    from ..derive.pipeline import bubble_fraction, schedule
    from ..core.errors import SymgptError
    from ..render.cluster_fig import schedule_svg, schedule_tikz

    p, m, v = args.pp, args.microbatches, args.vp
    if p * m * v > 4096:
        raise SymgptError("at most 4096 chunk micro-batches (pp · microbatches · vp) are drawn")
    slots = schedule(p, m, v, args.schedule)
    frac = bubble_fraction(p, m, v, args.schedule)
    name = "interleaved 1F1B" if v > 1 else ("GPipe" if args.schedule == "gpipe" else "1F1B")
    paper = sympy.Rational(p - 1, v * m)
    title = f"{name}: p = {p}, m = {m}" + (f", v = {v}" if v > 1 else "") + f"; bubble {frac} of the compute"
    if args.format == "text":
        text = (f"{title}\nthe papers' (p - 1)/{'(v·m)' if v > 1 else 'm'} = {paper}: "
                f"{'equal' if frac == paper else 'differs'} (forward 1, backward 2 time units)\n")
    else:
        text = schedule_svg(slots, title) if args.format == "svg" else schedule_tikz(slots, title)
    if args.output:
        from ..core.io import write_atomic

        write_atomic(path(args.output), text)
        return 0
    emit(text)
    return 0

"""symgpt schedule: a pipeline schedule (GPipe, 1F1B, interleaved 1F1B; zero-bubble ZB-H1 and ZB-H2,
DualPipe) run on p devices, drawn as SVG or TikZ, with the bubble it leaves beside the papers'
(p − 1)/m and (p − 1)/(v·m), or Table 1 of Qi et al. 2023 and Table 2 of the DeepSeek-V3 report."""

from __future__ import annotations

from .common import emit
from .args import path, positive_int

HELP = "a pipeline schedule (GPipe, 1F1B, interleaved, zero-bubble, DualPipe) drawn as SVG or TikZ, with its bubble"


from . import choices


def add_arguments(p):
    p.add_argument("--pp", type=positive_int, required=True, metavar="P", help="pipeline stages (devices)")
    p.add_argument("--microbatches", type=positive_int, required=True, metavar="M", help="micro-batches per step")
    p.add_argument("--vp", type=positive_int, default=1, metavar="V", help="chunks per device (interleaved)")
    p.add_argument("--schedule", choices=choices.SCHEDULES, default="1f1b")
    p.add_argument("--format", choices=choices.SCHEDULE_FORMATS, default="text",
                   help="text: the bubble only; svg or tikz: the drawing (default text)")
    # zero-bubble and DualPipe schedules: the stage times of F, B (input gradient), W (weight gradient)
    p.add_argument("--times", metavar="F,B,W[,FB]",
                   help="times of a forward, an input-gradient backward B and a weight-gradient backward W "
                        "(and, for dualpipe, an overlapped forward and backward pair F&B; default F+B+W), "
                        "non-negative integers (default 1,1,1 for zb-h1, zb-h2, dualpipe; forward 1, backward 2 "
                        "otherwise, where B+W is the backward)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the output (the bubble, or the drawing) to FILE (default: stdout)")


def run(args) -> int:
    import sympy

    from ..derive.pipeline import bubble_fraction, schedule
    from ..core.errors import SymgptError
    from ..render.cluster_fig import schedule_svg, schedule_tikz

    p, m, v = args.pp, args.microbatches, args.vp
    times = _times(args.times)
    if args.schedule in SPLIT:
        return _split(args, times)
    if times is not None and len(times) == 4:
        raise SymgptError("--times takes F&B (a fourth time) only for dualpipe")
    if p * m * v > 4096:
        raise SymgptError("at most 4096 chunk micro-batches (pp · microbatches · vp) are drawn")
    tf, tback = (1, 2) if times is None else (times[0], times[1] + times[2])
    slots = schedule(p, m, v, args.schedule, tf, tback)
    frac = bubble_fraction(p, m, v, args.schedule, tf, tback)
    name = "interleaved 1F1B" if v > 1 else ("GPipe" if args.schedule == "gpipe" else "1F1B")
    paper = sympy.Rational(p - 1, v * m)
    title = f"{name}: p = {p}, m = {m}" + (f", v = {v}" if v > 1 else "") + f"; bubble {frac} of the compute"
    if args.format == "text":
        text = (f"{title}\nthe papers' (p - 1)/{'(v·m)' if v > 1 else 'm'} = {paper}: "
                f"{'equal' if frac == paper else 'differs'} (forward {tf}, backward {tback} time units)\n")
    else:
        text = schedule_svg(slots, title) if args.format == "svg" else schedule_tikz(slots, title)
    return _out(args, text)


def _out(args, text) -> int:
    if args.output:
        from ..core.io import write_atomic

        write_atomic(path(args.output), text)
        return 0
    emit(text)
    return 0


SPLIT = ("zb-h1", "zb-h2", "dualpipe")
_NAMES = {"zb-h1": "ZB-H1", "zb-h2": "ZB-H2", "dualpipe": "DualPipe"}
_FORMS = {"zb-h1": "(p - 1)(T_F + T_B - T_W)", "zb-h2": "(p - 1)(T_F + T_B - 2 T_W)",
          "dualpipe": "(p/2 - 1)(F&B + B - 3W), B = T_B + T_W"}


def _times(text):
    """The --times list as integers: F, B, W and optionally F&B."""
    if text is None:
        return None
    from ..core.errors import SymgptError

    parts = text.split(",")
    if len(parts) not in (3, 4) or not all(x.strip().isdigit() for x in parts):
        raise SymgptError(f"--times expects F,B,W or F,B,W,FB as non-negative integers, got {text!r}")
    vals = [int(x) for x in parts]
    if sum(vals[:3]) == 0:
        raise SymgptError("--times: F, B and W cannot all be 0")
    return vals


def _split(args, times) -> int:
    """A zero-bubble or DualPipe schedule: its run, bubble and activations beside the paper's."""
    from ..core.errors import SymgptError
    from ..derive.pipeline_zb import (SOURCES, bubble, paper_activations, paper_bubble, peak_in_flight,
                                      schedule)
    from ..render.cluster_fig import schedule_svg, schedule_tikz

    p, m, kind = args.pp, args.microbatches, args.schedule
    if args.vp != 1:
        raise SymgptError(f"--vp interleaves 1F1B; {kind} runs one chunk per stage (dualpipe two directions)")
    if p * m > 2048:
        raise SymgptError("at most 2048 micro-batch stages (pp · microbatches) are drawn")
    tf, tb, tw, *rest = times or (1, 1, 1)
    if rest and kind != "dualpipe":
        raise SymgptError("--times takes F&B (a fourth time) only for dualpipe")
    tfb = rest[0] if rest else None
    slots = schedule(p, m, kind, tf, tb, tw, tfb)
    idle = bubble(slots, kind)
    busy = m * (tf + tb + tw)
    paper = paper_bubble(kind, p, tf, tb, tw, tf + tb + tw if tfb is None else tfb)
    held, paper_held = peak_in_flight(slots, 0), paper_activations(kind, p)
    title = f"{_NAMES[kind]}: p = {p}, m = {m}; bubble {idle} time units"
    if args.format != "text":
        text = schedule_svg(slots, title) if args.format == "svg" else schedule_tikz(slots, title)
        return _out(args, text)
    fb = f", F&B {tf + tb + tw if tfb is None else tfb}" if kind == "dualpipe" else ""
    text = (f"{title} (F {tf}, B {tb}, W {tw}{fb}), {idle / busy} of a device's compute m(F + B + W) = {busy}\n"
            f"the paper's {_FORMS[kind]} = {paper}: {'equal' if idle == paper else 'differs'} [{SOURCES[kind]}]\n"
            f"activations: the first device holds at most {held} micro-batches"
            + (" of its two stages" if kind == "dualpipe" else "")
            + f"; the paper's {paper_held}: {'equal' if held == paper_held else 'differs'}\n")
    return _out(args, text)

"""symgpt time MODEL: step time and tokens/s at a peak FLOP/s and MFU, MFU from a measured step
time, training time for D tokens, and the initial loss ln V."""

from __future__ import annotations

from .common import emit, load_model
from .costargs import add_convention, add_flops, flops_options, payload, unbound_hint

HELP = "step time, tokens/s, MFU, training time for D tokens and the initial loss ln V"


def add_arguments(p):
    add_convention(p)
    add_flops(p)
    p.add_argument("--peak", default="300e12", metavar="FLOP/S",
                   help="peak FLOP/s of one accelerator (default 300e12, the A100 figure)")
    p.add_argument("--mfu", default="1", metavar="X", help="model FLOPs utilisation in (0, 1] (default 1)")
    p.add_argument("--measured", metavar="SECONDS", help="a measured step time: report its MFU")
    p.add_argument("--tokens", metavar="D", help="training tokens D: report the training time")


def _number(text, what):
    from ..errors import SymgptError
    from ..exprparse import parse_expression

    v = parse_expression(text, names={})
    if not v.is_Rational or v <= 0:
        raise SymgptError(f"{what} must be a positive number, got {text!r}")
    return v


def run(args) -> int:
    from ..render.costs_text import time_text
    from ..render.jsonout import dumps

    m = load_model(args)
    opts = flops_options(args)
    opts.pop("per", None)
    peak, mfu = _number(args.peak, "--peak"), _number(args.mfu, "--mfu")
    qs = [m.quantity("time.step", peak=peak, mfu=mfu, **opts),
          m.quantity("time.throughput", peak=peak, mfu=mfu, **opts)]
    if args.measured:
        qs.append(m.quantity("time.mfu", measured=_number(args.measured, "--measured"), peak=peak, **opts))
    if args.tokens:
        qs.append(m.quantity("time.training", tokens=_number(args.tokens, "--tokens"), peak=peak, mfu=mfu, **opts))
    qs.append(m.quantity("loss.initial"))
    if args.json:
        out = payload(m, qs[0].convention, {**opts, "peak": str(peak), "mfu": str(mfu)}, qs)
        emit(dumps(out))
        return 0
    emit(time_text(m, qs, peak, mfu, unbound_hint(m, qs)), fit=True)
    return 0

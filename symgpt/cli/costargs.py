"""Options shared by ``symgpt flops``, ``memory`` and ``time``, and their human output."""

from __future__ import annotations

from . import choices
from .common import add_json, add_model


def add_convention(p) -> None:
    add_model(p)
    add_json(p)
    p.add_argument("--convention", default="default", metavar="NAME",
                   help="counting convention: " + choices.listed(choices.CONVENTIONS) + " (default: default)")
    p.add_argument("--recompute", choices=choices.RECOMPUTE,
                   help="activation recomputation (default: the convention's)")


def add_flops(p) -> None:
    p.add_argument("--per", choices=choices.PER,
                   help="FLOPs per batch (step), per sequence or per token (default: the convention's)")
    p.add_argument("--hardware", action="store_true", default=None,
                   help="count the recomputed forward (hardware FLOPs, HFU) in training FLOPs")
    p.add_argument("--causal", action="store_true", default=None,
                   help="halve the attention matmuls a causal kernel skips")
    p.add_argument("--attention", choices=choices.ATTENTION,
                   help="attention implementation (flash: the backward recomputes Q·Kᵀ, 2.5 × forward)")


def add_memory(p) -> None:
    p.add_argument("--precision", choices=choices.PRECISIONS,
                   help="precision policy (default: the convention's; default convention: fp32)")
    p.add_argument("--optimizer", default="adamw", choices=choices.OPTIMIZERS)
    p.add_argument("--attention", choices=choices.ATTENTION, help="attention implementation")
    p.add_argument("--dropout", action="store_true", default=None, help="dropout on (masks are saved)")
    p.add_argument("--zero", type=int, default=0, choices=choices.ZERO_STAGES, help="ZeRO stage (per-device memory)")
    p.add_argument("--dp", type=_positive, default=1, metavar="N", help="data-parallel ranks (for ZeRO)")
    p.add_argument("--tp", type=_positive, default=1, metavar="N", help="tensor-parallel ranks")
    p.add_argument("--sp", action="store_true", help="sequence parallelism (with --tp)")


def _positive(text: str) -> int:
    import argparse

    from ..errors import SymgptError
    from ..exprparse import parse_value

    try:
        v = parse_value(text)
    except SymgptError:
        v = None
    if v is None or isinstance(v, bool) or v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text[:40]!r}")
    return v


def flops_options(args) -> dict:
    out = {"convention": args.convention, "recompute": args.recompute, "per": args.per,
           "hardware": args.hardware, "attention": args.attention}
    if getattr(args, "causal", None):
        out["causal_halving"] = True
    return {k: v for k, v in out.items() if v is not None}


def memory_options(args) -> dict:
    out = {"convention": args.convention, "recompute": args.recompute, "precision": args.precision,
           "optimizer": args.optimizer, "attention": args.attention, "dropout": args.dropout,
           "zero": args.zero, "dp": args.dp, "tp": args.tp, "sp": args.sp or None}
    return {k: v for k, v in out.items() if v is not None}


def unbound_hint(m, quantities) -> str:
    """A line saying which symbols are free and how to bind them ('' when all are bound)."""
    free = sorted({s.name for q in quantities for s in q.expr.free_symbols} - set(m.sizes))
    if not free:
        return ""
    example = " ".join(f"--set {n}={ {'B': 8, 'T': 1024}.get(n, 'N') }" for n in free)
    return f"unbound: {', '.join(free)} -- the formulas above are symbolic; bind with {example}"


def payload(m, conv_label: str, options: dict, quantities) -> dict:
    from ..render.jsonout import model_json, quantity_json

    out = {**model_json(m), "convention": conv_label,
           "options": {k: v for k, v in options.items() if k != "convention"}}
    for q in quantities:
        out[q.name] = quantity_json(q)
    return out

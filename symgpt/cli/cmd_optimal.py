"""symgpt optimal [MODEL] --compute C: the compute-optimal model size, tokens and loss under a
published parametric fit (Hoffmann et al. 2022; Besiroglu et al. 2024); with a MODEL, what C
buys at the model's exact training FLOPs per token, and the error of 6ND."""

from __future__ import annotations

from .common import add_json, emit

HELP = "compute-optimal parameters, tokens and loss (Chinchilla's fit and its replication)"


from . import choices


def add_arguments(p):
    p.add_argument("model", metavar="MODEL", nargs="?",
                   help="optional: a preset or config.json whose exact training FLOPs replace 6ND")
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a symbol of MODEL (T=2048, ...)")
    add_json(p)
    p.add_argument("--compute", metavar="C", help="training compute in FLOPs (e.g. 5.76e23)")
    p.add_argument("--params", metavar="N", help="model size: the compute-optimal tokens for it")
    p.add_argument("--tokens", metavar="D", help="training tokens: the compute-optimal size for them")
    p.add_argument("--fit", default="hoffmann2022", choices=choices.FITS,
                   help="the parametric fit L(N, D) = E + A/N^α + B/D^β (default hoffmann2022)")
    p.add_argument("--convention", default="default", metavar="NAME", help="FLOP convention for MODEL")


def run(args) -> int:
    from ..derive.optimal import fit, for_model, optimal
    from ..core.errors import SymgptError
    from ..render.jsonout import dumps
    from .args import number
    from .common import load_model

    f = fit(args.fit)
    given = {k: number(getattr(args, k), f"--{k}") for k in ("compute", "params", "tokens") if getattr(args, k)}
    qs = optimal(f, **given)
    if args.model:
        if "compute" not in given:
            raise SymgptError("with a MODEL, give --compute (the tokens it buys at the model's exact FLOPs)")
        qs += for_model(load_model(args), f, given["compute"], convention=args.convention)
    elif args.settings:
        raise SymgptError("--set needs a MODEL")
    if args.json:
        emit(dumps({"fit": {"name": f.name, "source": f.source, "E": str(f.E), "A": str(f.A), "B": str(f.B),
                            "alpha": str(f.alpha), "beta": str(f.beta)},
                    **{q.name: {"value": str(q.expr), "unit": q.unit} for q in qs}}))
        return 0
    from ..render.cluster_text import optimal_text

    emit(optimal_text(f, qs))
    return 0

"""symgpt params MODEL: the exact parameter count, its formula and breakdown."""

from __future__ import annotations

from .common import add_json, add_model, emit, load_model

HELP = "exact parameter count with its formula and breakdown"


def add_arguments(p):
    add_model(p)
    add_json(p)
    p.add_argument("--depth", type=int, default=0, metavar="N",
                   help="group the breakdown to the first N path components (0: every op)")
    from .costargs import add_finetune

    add_finetune(p)
    p.add_argument("--no-cache", action="store_true",
                   help="derive again: neither read nor write the derivation cache "
                   "('symgpt cache clear' empties it)")


def run(args) -> int:
    from ..core.errors import SymgptError

    from .costargs import finetune_given

    if args.depth < 0:
        raise SymgptError(f"--depth must be 0 (every op) or a number of path components, got {args.depth}")
    use_cache = not args.no_cache and not args.json and not args.depth and not args.settings \
        and not finetune_given(args)
    if use_cache:  # a preset answered from cached formulas: no SymPy, no networkx
        from .cached import params_answer

        text = params_answer(args.model)
        if text is not None:
            emit(text, fit=True)  # as the derived answer is printed
            return 0
    from .costargs import finetune_model

    m = finetune_model(args, load_model(args))
    q = m.params
    if use_cache:
        from .cached import store_params

        store_params(m, q)
    if args.json:
        from ..render.jsonout import dumps, model_json, quantity_json

        out = {**model_json(m), "params": quantity_json(q)}
        if args.finetune is not None or args.freeze is not None:
            from .costargs import finetune_json

            out.update(finetune_json(m))
        emit(dumps(out))
        return 0
    from ..render.report_text import quantity_text

    emit(quantity_text(m, q, depth=args.depth), fit=True)
    if args.finetune is not None or args.freeze is not None:
        for name in ("params.trainable", "params.frozen"):
            emit(quantity_text(m, m.quantity(name), depth=args.depth), fit=True)
    return 0

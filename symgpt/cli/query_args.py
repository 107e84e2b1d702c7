"""What the query commands (rule, dominance, crossover, compare) share: QUANTITY, --part,
--per-block, the provider options (--convention, --per, --option), --as and --let."""

from __future__ import annotations

import argparse
import re

from ..core.errors import short
from . import choices

_OPTION_WORD = re.compile(r"[A-Za-z0-9_.+-]{1,64}")


def add_quantity(p: argparse.ArgumentParser) -> None:
    p.add_argument("quantity", metavar="QUANTITY", help="one of " + choices.listed(choices.QUANTITIES))
    p.add_argument("--part", metavar="PATH[,PATH...]",
                   help="restrict to breakdown entries under these path prefixes, as the "
                   "model names its nodes ('symgpt params MODEL' lists them; GPT-2: blocks, "
                   "blocks/attention/scores,blocks/attention/values, lm_head)")
    p.add_argument("--per-block", action="store_true",
                   help="divide by the number of layers of the stack the part lies in (one layer; "
                   "with several stacks, --part picks one)")
    p.add_argument("--convention", metavar="NAME", help="counting convention of FLOPs/memory: "
                   + choices.listed(choices.CONVENTIONS))
    p.add_argument("--per", metavar="UNIT", help="FLOPs per batch, sequence or token")
    p.add_argument("--option", dest="options", action="append", default=[], metavar="KEY=VALUE",
                   help="any other option of the quantity (precision=bf16, recompute=full); "
                   "repeatable; values are integers, true/false or plain words")


def add_regime(p: argparse.ArgumentParser, required: bool, help_: str) -> None:
    p.add_argument("--as", dest="regime", action="append", default=[], required=required,
                   metavar="SYMBOL[:RATE]", help=help_)


def add_let(p: argparse.ArgumentParser) -> None:
    p.add_argument("--let", dest="lets", action="append", default=[], metavar="NAME=EXPR",
                   help="name an expression (N=12*L*d^2, or N=params, N=params.blocks: the "
                   "model's derived counts); repeatable; parsed safely, never evaluated")


_REPEATED = ("options", "lets", "regime", "settings")


def check_text_args(args) -> None:
    """Every text argument is text (argparse turns a value of ``--`` into an empty list)."""
    from ..core.errors import SymgptError

    for dest, value in vars(args).items():
        if dest.startswith("_") or value is None or isinstance(value, (bool, int)):
            continue
        items = value if dest in _REPEATED else [value]
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            flag = "--" + dest.replace("_", "-") if dest not in ("model", "quantity", "expr",
                                                                  "match") else dest.upper()
            raise SymgptError(f"{flag} needs a value")


def _word(text: str):
    from ..core.errors import SymgptError
    from ..core.exprparse import parse_value

    try:
        return parse_value(text)
    except SymgptError:
        if not _OPTION_WORD.fullmatch(text.strip()):
            raise SymgptError(f"invalid option value {short(text)}: expected an integer, true/false "
                              "or a plain word (letters, digits, _ . + -)") from None
        return text.strip()


def not_options() -> frozenset:
    """The names ``--option`` may not take: the named parameters of ``query.select`` and of
    ``Model.quantity`` (the model, the quantity's name, --part, ...), read from their signatures."""
    import inspect

    from ..model.model import Model
    from ..query.selection import select

    named = set()
    for f in (select, Model.quantity):
        named |= {p.name for p in inspect.signature(f).parameters.values()
                  if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    return frozenset(named)


def options(args) -> dict:
    """Provider options from --convention, --per and --option KEY=VALUE."""
    from ..core.errors import SymgptError

    check_text_args(args)
    out, reserved = {}, not_options()
    if args.convention is not None:
        out["convention"] = _word(args.convention)
    if args.per is not None:
        out["per"] = _word(args.per)
    for text in args.options:
        key, sep, value = text.partition("=")
        key = key.strip()
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", key):
            raise SymgptError(f"expected --option KEY=VALUE, got {short(text)}")
        if key in reserved:
            raise SymgptError(f"--option {key}=...: not an option of a quantity")
        if key in out:
            raise SymgptError(f"option {key} given twice")
        out[key] = _word(value)
    return out


def quantity(args, model):
    """The Quantity the command runs on."""
    from ..query import select

    if getattr(args, "regime", None):  # a layer kind's count grown: it must count a stack of the model
        from ..model.layer_kinds import check_free
        from ..query.regime import parse_regime

        check_free(model, model.arch, [s.name for s in parse_regime(args.regime).symbols])
    return select(model, args.quantity, args.part, args.per_block, **options(args))


def lets(args, model) -> dict:
    """--let NAME=EXPR as {name: expression}; EXPR may name the model's parameter counts
    (``params``, ``params.blocks``, ``params.embedding``, ...)."""
    from ..core.errors import SymgptError
    from ..core.exprparse import parse_expression
    from ..core.symbols import CANONICAL

    check_text_args(args)
    names = dict(CANONICAL)
    names["params"] = model.params.expr
    for top in model.params.top_level():
        names[f"params.{top}"] = model.params.part(top).expr
    out = {}
    for text in args.lets:
        name, sep, expr = text.partition("=")
        name = name.strip()
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,31}", name):
            raise SymgptError(f"expected --let NAME=EXPR, got {short(text)}")
        if name in CANONICAL or name in out:
            raise SymgptError(f"--let {name}: the name is taken (a canonical symbol or given twice)")
        out[name] = parse_expression(expr, {**names, **out})
    return out

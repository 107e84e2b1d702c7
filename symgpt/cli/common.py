"""What the commands share: the MODEL argument, ``--set``, ``--json`` and output."""

from __future__ import annotations

import argparse
import sys


def add_model(p: argparse.ArgumentParser, many: bool = False, optional: bool = False) -> None:
    p.add_argument("model", metavar="MODEL", nargs="+" if many else "?" if optional else None,
                   help="a preset name (see 'symgpt models'), a family name (all sizes symbolic), "
                   "or a path to an HF-style config.json")
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a symbol (B=8, T=1024, d=768, ...) or set a flag (tied=false); "
                   "repeatable; values are integers or true/false, never evaluated")


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def settings(args) -> dict:
    from ..exprparse import parse_assignment
    from ..errors import SymgptError

    import re

    word = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
    out = {}
    for text in args.settings:
        raw = text.partition("=")[2].strip(" \t") if isinstance(text, str) else ""
        if word.fullmatch(raw) and raw.lower() not in ("true", "false"):
            # a word is a text flag's value (norm=rmsnorm); the model checks it against the choices
            name, value = parse_assignment(text.partition("=")[0] + "=0")[0], raw
        else:
            name, value = parse_assignment(text)
        if name in out:
            raise SymgptError(f"--set {name} given twice")
        out[name] = value
    return out


def load_model(args, name: str | None = None):
    """The model named on the command line with its --set overrides applied."""
    from ..model import load

    return load(name if name is not None else args.model, **settings(args))


def emit(text: str, fit: bool = False) -> None:
    """Write *text* to stdout; *fit*: human-readable text, wrapped to the terminal's width
    (never JSON, LaTeX, DOT, CSV or SVG)."""
    if fit:
        from ..render.text import fit as fit_text

        text = fit_text(text)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")

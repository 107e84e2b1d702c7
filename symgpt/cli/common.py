"""What the commands share: the MODEL argument, ``--set``, ``--json`` and output."""

from __future__ import annotations

import argparse
import re
import sys


def add_model(p: argparse.ArgumentParser, many: bool = False) -> None:
    p.add_argument("model", metavar="MODEL", nargs="+" if many else None,
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


def terminal_safe(text: str) -> str:
    """*text* with control characters shown as escapes (``symgpt.errors.visible``)."""
    from ..errors import visible

    return visible(text)


def emit(text: str) -> None:
    """Print *text* (one newline at the end) on stdout, control characters escaped."""
    from ..errors import SymgptError

    if sys.stdout is None:
        raise SymgptError("cannot write to standard output: it is closed")
    text = terminal_safe(text)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def wrote(path) -> None:
    """Say that *path* was written, unless it was a stream (``-``, ``/dev/stdout``, a FIFO):
    the message would land in the output itself."""
    from ..io import is_stream

    if not is_stream(path):
        emit(f"wrote {path}")

"""What the commands share: the MODEL argument, ``--set``, ``--json`` and output."""

from __future__ import annotations

import argparse
import re
import sys


def add_model(p: argparse.ArgumentParser, many: bool = False, optional: bool = False) -> None:
    p.add_argument("model", metavar="MODEL", nargs="+" if many else "?" if optional else None,
                   help="a preset name (see 'symgpt models'), a family name (all sizes symbolic), "
                   "a path to an HF-style config.json (or its folder), or a Hugging Face Hub id "
                   "(org/name[@revision]: its config.json only; hf:NAME forces the Hub)")
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a symbol (B=8, T=1024, d=768, ...) or set a flag (tied=false); "
                   "repeatable; values are integers or true/false, never evaluated")
    p.add_argument("--head", metavar="HEAD",
                   help="the head an encoder or encoder-decoder counts, overriding the class a "
                   "config.json's 'architectures' names: mlm | pooler | none (BERT-style), lm | none "
                   "(T5, BART), classifier | pooler | none (ViT); the same as --set head=HEAD")


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def settings(args) -> dict:
    from ..core.errors import SymgptError

    if args.settings:  # the safe parser only when there is something to parse (start-up)
        from ..core.exprparse import parse_assignment
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
    head = getattr(args, "head", None)
    if head is not None:
        if "head" in out:
            raise SymgptError("--head and --set head=... given together: give one")
        if not isinstance(head, str) or not word.fullmatch(head):
            raise SymgptError(f"--head takes a word (mlm, pooler, lm, classifier, none), got {head[:40]!r}")
        out["head"] = head
    return out


def load_model(args, name: str | None = None):
    """The model named on the command line with its --set overrides applied."""
    from ..model.model import load

    return load(name if name is not None else args.model, **settings(args))


def terminal_safe(text: str) -> str:
    """*text* with control characters shown as escapes (``symgpt.core.errors.visible``)."""
    from ..core.errors import visible

    return visible(text)


def emit(text: str, fit: bool = False) -> None:
    """Print *text* (one newline at the end) on stdout, control characters escaped; *fit*:
    human-readable text, wrapped to the terminal's width (never JSON, LaTeX, DOT, CSV or SVG)."""
    from ..core.errors import SymgptError

    if sys.stdout is None:
        raise SymgptError("cannot write to standard output: it is closed")
    if fit:
        from ..render.text import fit as fit_text

        text = fit_text(text)
    text = terminal_safe(text)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def wrote(path) -> None:
    """Say that *path* was written, unless it was a stream (``-``, ``/dev/stdout``, a FIFO):
    the message would land in the output itself."""
    from ..core.io import is_stream

    if not is_stream(path):
        emit(f"wrote {path}")

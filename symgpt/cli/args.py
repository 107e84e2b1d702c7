"""The argument parsing every command shares: positive numbers and integers, comma lists, output
paths and the ``--hardware`` profile. Each value is read by ``symgpt.core.exprparse`` (never
evaluated) and checked by the one positivity check of ``symgpt.derive.checks``; a bad value is one
line, ``symgpt: error: ...``, exit 2.

Two kinds of reader: ``positive_int`` and ``comma_list`` are argparse ``type=`` callables (argparse
prints their message with the flag's name); ``number``, ``integer`` and ``path`` read a flag's text
after parsing and raise ``SymgptError`` naming the flag."""

from __future__ import annotations

import argparse

from . import choices


def _value(text):
    """*text* as an exact number (Integer or Rational), or None when it is not one."""
    from ..core.errors import SymgptError
    from ..core.exprparse import parse_value

    try:
        return parse_value(text)
    except SymgptError:
        return None


def positive_int(text: str) -> int:
    """argparse type: a positive integer (``4``, ``1e3``)."""
    v = _value(text)
    if v is None or isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text[:40]!r}")
    return v


def comma_list(kind, allowed=None):
    """argparse type: a comma-separated list of *kind* (``str`` or ``int``), each in *allowed*
    when given; repeats dropped, order kept."""
    def parse(text: str):
        out = []
        for part in text.split(","):
            part = part.strip()
            v = kind(part) if kind is not str else part
            if allowed is not None and v not in allowed:
                raise argparse.ArgumentTypeError(f"expected one of {', '.join(map(str, allowed))}, got {part[:20]!r}")
            out.append(v)
        return tuple(dict.fromkeys(out))
    return parse


def number(text, what: str):
    """A flag's text (``300e12``, ``2/5``, ``0.4``) as an exact positive Rational, or one error line
    naming *what* (the flag)."""
    from ..core.errors import SymgptError
    from ..core.exprparse import parse_expression
    from ..derive.checks import positive

    v = parse_expression(text, names={})
    if not v.is_Rational:
        raise SymgptError(f"{what} must be a positive number, got {text!r}")
    return positive(what, v)


def integer(text, what: str) -> int:
    """A flag's text as a positive integer, or one error line naming *what* (the flag)."""
    from ..derive.checks import positive_int as check

    v = _value(text)
    return int(check(what, v if v is not None else str(text)[:40]))


def path(text: str) -> str:
    """An output file name: not empty, no NUL character."""
    from ..core.errors import SymgptError

    if "\x00" in text or not text.strip():
        raise SymgptError("the output file name is empty or holds a NUL character")
    return text


def add_hardware(p, fills: str) -> None:
    """``--hardware NAME``: a device profile (``symgpt hardware``) that fills *fills*."""
    p.add_argument("--hardware", type=choices.HARDWARE.parse, metavar="NAME",
                   help=f"a device profile (symgpt hardware) that fills {fills} from its datasheet "
                   "(the peak in the dtype of the precision's matmuls); given flags win")

"""The exception class of symgpt, and its subclasses for faults a caller tells apart.

Low levels raise :class:`SymgptError` with the precise fault; the public entry points add
context once (``with_context``); the CLI prints ``symgpt: error: <message>`` and exits 2. A caller
that must recognise a fault catches its subclass (:class:`TooLarge`), never its wording.
"""

from __future__ import annotations

import re

MAX_WORD, MAX_MESSAGE = 160, 2000  # characters of one echoed word, of a whole message


def _shorten(word: "re.Match") -> str:
    w = word.group(0)
    return f"{w[:100]}...{w[-20:]} [{len(w)} characters]"


def tame(message: str) -> str:
    """*message* with any echoed input kept short: a word longer than MAX_WORD characters is cut
    in its middle, and the whole is cut at MAX_MESSAGE characters."""
    text = re.sub(rf"\S{{{MAX_WORD + 1},}}", _shorten, str(message))
    return text if len(text) <= MAX_MESSAGE else f"{text[:MAX_MESSAGE - 40]}... [{len(text)} characters]"


#: C0 and C1 control characters but tab and newline, lone surrogates (an undecodable file
#: name) and the bidi overrides: never sent raw to a terminal, a DOT/SVG file or a document
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def visible(text: str) -> str:
    """*text* with control characters, bidi overrides and lone surrogates shown as escapes
    (``\\x1b``, ``\\u202e``, ``\\udcff``): an escape sequence in a model name cannot rewrite
    a terminal, break an SVG or hide text."""
    return _CONTROL.sub(lambda m: ascii(m.group(0))[1:-1], str(text))


def printable(text: str, limit: int = 200) -> str:
    """*text* for a one-line message: as is when printable, else its repr; shortened."""
    text = text if text.isprintable() else repr(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short(text, limit: int = 60) -> str:
    """*text* quoted (its repr) for a one-line message, shortened past *limit* characters."""
    text = str(text)
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


class SymgptError(ValueError):
    """Any fault in symgpt's input or in a request the engine cannot answer. Its message is kept
    short (``tame``) whatever input it quotes."""

    def __init__(self, *args):
        super().__init__(*(tame(a) if isinstance(a, str) and i == 0 else a for i, a in enumerate(args)))

    def with_context(self, context: str) -> "SymgptError":
        """A copy of this error with *context* prepended once (``context: message``)."""
        return SymgptError(f"{context}: {self}")


class TooLarge(SymgptError):
    """A file refused for its size (``symgpt.core.io.read_bounded``): ``limit`` bytes at most were
    allowed. A caller that knows what the file should be says so in its own words."""

    def __init__(self, message: str, limit: int):
        super().__init__(message)
        self.limit = limit

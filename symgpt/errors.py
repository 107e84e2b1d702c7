"""The one exception class of symgpt.

Low levels raise :class:`SymgptError` with the precise fault; the public entry points add
context once (``with_context``); the CLI prints ``symgpt: error: <message>`` and exits 2.
"""

from __future__ import annotations


class SymgptError(ValueError):
    """Any fault in symgpt's input or in a request the engine cannot answer."""

    def with_context(self, context: str) -> "SymgptError":
        """A copy of this error with *context* prepended once (``context: message``)."""
        return SymgptError(f"{context}: {self}")

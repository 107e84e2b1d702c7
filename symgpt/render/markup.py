"""Text inside XML (SVG) and HTML: the one escaper of the printers that write markup."""

from __future__ import annotations


def xml_escape(text) -> str:
    """*text* safe as XML character data or inside a double-quoted attribute (every attribute
    the printers write is double-quoted): ``&``, ``<``, ``>`` and ``"`` escaped (``&amp;``,
    ``&lt;``, ``&gt;``, ``&quot;``); an apostrophe needs no escape in either place."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")

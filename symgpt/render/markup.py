"""Text inside XML (SVG) and HTML: the one escaper of the printers that write markup."""

from __future__ import annotations


def xml_escape(text) -> str:
    """*text* safe as XML character data or inside a quoted attribute: ``&``, ``<``, ``>`` and
    both quotes escaped (``&amp;``, ``&lt;``, ``&gt;``, ``&quot;``, ``&#39;``)."""
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))

"""Printers: text, Markdown, JSON, LaTeX and DOT. Derivations never format; printers never count."""

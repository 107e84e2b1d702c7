"""Every model name is legible in the PDF: what pdftotext reads back from a compiled document for
a name in CJK letters (no glyph in pdflatex's fonts: shown as code points, and the document says
so), one with control characters (code points, never '?'), and one with '<' and '>' (themselves,
not the inverted marks of a text font without them).

Oracle: the code points of the name's characters, computed here with ``ord``; the characters
themselves for the printable ASCII ones.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import helpers
from symgpt.model.model import from_config
from symgpt.documents.latex_doc import document
from symgpt.render.latex_escape import NO_GLYPH_NOTE, tex_escape, tex_texttt

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"model_type": "gpt2", "n_layer": 2, "n_head": 4, "n_embd": 64, "vocab_size": 1000, "n_positions": 64}


def shown(name: str) -> str:
    """The name as the PDF must show it: printable ASCII as is, anything else [U+XXXX]."""
    return "".join(c if " " <= c <= "~" else f"[U+{ord(c):04X}]" for c in name)


NAMES = {"cjk": "中文模型", "control": "evil\x01name\x1b", "angles": "a<b>c"}


@pytest.mark.parametrize("kind", sorted(NAMES))
def test_the_pdf_shows_the_name(kind, tmp_path):
    name = NAMES[kind]
    m = from_config(SMALL, name, "", B=2, T=16)
    tex = tmp_path / "doc.tex"
    tex.write_text(document(m, what=["notation", "params"], title=None))
    words = helpers.pdf_words(tex)
    expected = shown(name)
    assert f"Notation (default profile) and the sizes of {expected}." in words, words[:1500]
    assert "?" not in words.split("Notation")[0] + expected
    assert "¡" not in words and "¿" not in words
    note = re.sub(r"\s+", " ", NO_GLYPH_NOTE).replace("'", "’")
    assert (note in words) == (kind != "angles"), words[:3000]


def test_escaping_by_code_point():
    assert tex_escape("中\x01<") == r"{[}U+4E2D{]}{[}U+0001{]}\textless{}"
    assert tex_texttt("中<") == r'\texttt{{[}U+4E2D{]}\char"3C{}}'

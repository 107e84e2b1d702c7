"""Escaping user text (model names, file names, column names, notation labels) for LaTeX,
Markdown and CSV. Every piece of text that did not come from symgpt's own templates goes
through one of these before it reaches a document."""

from __future__ import annotations

import re

_TEX = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", '"': "''",
}
_TEX_RE = re.compile("|".join(re.escape(c) for c in _TEX))
#: characters a text font of pdflatex may not have (CJK, control characters, most symbols):
#: everything outside printable ASCII and Latin-1 letters is shown as its code point
#: (``[U+4E2D]``, ``NO_GLYPH_NOTE``), so that a document always compiles and shows every name
_SAFE_CHAR = re.compile(r"[^\x20-\x7e\u00c0-\u00ff]")
#: what a document says where a name has characters shown as code points
NO_GLYPH_NOTE = ("Characters the document's fonts have no glyph for are shown as their Unicode "
                 "code points in brackets, e.g. [U+4E2D].")


def _code_point(m: "re.Match") -> str:
    return f"{{[}}U+{ord(m.group(0)):04X}{{]}}"  # braced: never read as a line break's [skip]


def no_glyph(text) -> bool:
    """Whether *text*, escaped (``tex_escape``, ``tex_texttt``), shows a character as its code
    point (a document with such a name says so: ``NO_GLYPH_NOTE``)."""
    text = " ".join(str(text).split())
    return bool(_SAFE_CHAR.search(_UNICODE_RE.sub("", text)))


#: a few non-ASCII characters that labels use, as text-mode LaTeX
_UNICODE = {
    "ᵀ": r"\textsuperscript{T}", "√": r"\ensuremath{\surd}", "×": r"\ensuremath{\times}", "·": r"\ensuremath{\cdot}",
    "²": r"\textsuperscript{2}", "³": r"\textsuperscript{3}", "−": "-", "–": "--", "—": "---", "≈": r"\ensuremath{\approx}",
    "’": "'", "‘": "`", "“": "``", "”": "''", "…": r"\dots{}",
    "§": r"\S{}", "→": r"\ensuremath{\to}", "∞": r"\ensuremath{\infty}", "∝": r"\ensuremath{\propto}",
    "≤": r"\ensuremath{\leq}", "≥": r"\ensuremath{\geq}", "≠": r"\ensuremath{\neq}", "±": r"\ensuremath{\pm}",
    "⁰": r"\textsuperscript{0}", "¹": r"\textsuperscript{1}", "⁹": r"\textsuperscript{9}",
    # the symbols node labels use (the MoE combine, the shared-expert gate, gated FFNs)
    "Σ": r"\ensuremath{\Sigma}", "σ": r"\ensuremath{\sigma}", "⊙": r"\ensuremath{\odot}",
    "λ": r"\ensuremath{\lambda}",
}
_UNICODE_RE = re.compile("|".join(map(re.escape, _UNICODE)))


def label_key(name: str) -> str:
    """A LaTeX-label-safe key for a model name (``my_model&v2`` -> ``mymodelv2``)."""
    return re.sub(r"[^A-Za-z0-9]", "", str(name))[:40] or "model"


def tex_escape(text) -> str:
    """*text* as LaTeX text-mode material that typesets literally (``my_model&v2%#$`` ->
    ``my\\_model\\&v2\\%\\#\\$``). Newlines and tabs become spaces; a character no font has
    (CJK, a control character) its code point, ``[U+4E2D]``; a backslash can never start a
    command, so ``\\input`` or ``\\write18`` print as text."""
    text = " ".join(str(text).split())
    parts = _UNICODE_RE.split(text)
    marks = _UNICODE_RE.findall(text)
    out = []
    for i, part in enumerate(parts):
        out.append(_SAFE_CHAR.sub(_code_point, _TEX_RE.sub(lambda m: _TEX[m.group(0)], part)))
        if i < len(marks):
            out.append(_UNICODE[marks[i]])
    return "".join(out)


_TT_SPECIAL = set("\\&%$#_{}~^<>|\"'`")


def tex_texttt(text) -> str:
    """A name, path or identifier in typewriter type, breakable after slashes. Specials are
    typeset as the typewriter font's own glyphs (``\\char"5F``), so the PDF's text has the real
    characters (``my_model&v2%#$`` copies out as typed)."""
    text = " ".join(str(text).split())
    out = []
    for ch in text:
        if ch in _TT_SPECIAL:
            out.append(f'\\char"{ord(ch):02X}{{}}')
        elif ch == "/":
            out.append("/\\allowbreak{}")
        elif _SAFE_CHAR.match(ch):
            out.append(tex_escape(ch))
        else:
            out.append(ch)
    return r"\texttt{" + "".join(out) + "}"


def md_cell(text) -> str:
    """User text as one Markdown table cell (pipes, HTML and emphasis markers escaped)."""
    from .markdown import md_escape

    return md_escape(text)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text) -> str:
    """A CSV field: quoted when needed (RFC 4180), and a leading ``= + - @`` that a
    spreadsheet would run as a formula is defused with a leading apostrophe. Numbers symgpt
    wrote itself are passed through ``csv_number`` instead."""
    s = " ".join(str(text).split()) if isinstance(text, str) else str(text)
    if s.startswith(_FORMULA_START):
        s = "'" + s
    if any(c in s for c in ',"\n\r') or s != s.strip() or s.startswith("'"):
        s = '"' + s.replace('"', '""') + '"'
    return s


def csv_row(cells) -> str:
    return ",".join(cells) + "\r\n"


_LABEL_TOKEN = re.compile(r"(?P<id>[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*)|(?P<sp> +)|(?P<op>[=+\-/*(),])"
                          r"|(?P<sqrt>√)|(?P<t>ᵀ)|(?P<other>.)")
_LABEL_OPS = {"*": r"\cdot ", "-": "-"}


def _label_sub(part: str) -> str:
    return part if len(part) == 1 or part.isdigit() else rf"\mathrm{{{part}}}"


def _label_ident(ident: str) -> str:
    base, *subs = ident.split("_")
    m = re.fullmatch(r"([A-Za-z])(\d+)", base)
    if m:  # X0 -> X_0
        base, subs = m.group(1), [m.group(2), *subs]
    head = base if len(base) == 1 else rf"\mathrm{{{base}}}"
    return head + (f"_{{{','.join(map(_label_sub, subs))}}}" if subs else "")


def tex_label(text) -> str:
    """A node label (``LayerNorm_1``, ``S / √d_h``, ``S = Q Kᵀ``, ``input ids``) as math-mode
    LaTeX, without the dollars: one-letter names italic, longer names upright (``\\mathrm``),
    ``_x`` a subscript, ``√x`` a root, ``ᵀ`` a transpose. Anything else is escaped text, so
    any label typesets."""
    text = " ".join(str(text).split())
    toks = [(m.lastgroup, m.group(0)) for m in _LABEL_TOKEN.finditer(text)]
    out = []
    for i, (kind, s) in enumerate(toks):
        if kind == "id":
            out.append(_label_ident(s))
        elif kind == "sp":  # a space between two names: a word space, or a thin one between letters
            prev, nxt = toks[i - 1] if i else (None, ""), toks[i + 1] if i + 1 < len(toks) else (None, "")
            if prev[0] == "id" and nxt[0] in ("id", "sqrt"):
                out.append(r"\," if len(prev[1]) == 1 and len(nxt[1]) == 1 else r"\ ")
        elif kind == "op":
            out.append(_LABEL_OPS.get(s, s))
        elif kind == "sqrt":
            if i + 1 < len(toks) and toks[i + 1][0] == "id":
                toks[i + 1] = ("done", rf"\sqrt{{{_label_ident(toks[i + 1][1])}}}")
            else:
                out.append(r"\surd ")
        elif kind == "done":
            out.append(s)
        elif kind == "t":
            out.append(r"^{\mathsf{T}}")
        else:
            out.append(rf"\text{{{tex_escape(s)}}}")
    return "".join(out)

"""The README's code blocks, as the README test runs them (see tests/test_readme.py).

The conventions a README block follows, so that the test can check what it shows:

* ```` ```console ````: lines starting with ``$ `` are commands; the lines under one, up to the
  next ``$ `` line, are its exact output (trailing spaces ignored).
* ```` ```bash ````: every line (``\\`` continues it) is a command; ``&&`` chains commands. A
  comment after a command, or on comment-only lines right under it, states values: each number
  with thousands separators (``124,439,808``), each percentage (``-31.75 %``), each ``× 10ⁿ``
  figure and each formula written with ``·`` (``12·L·d²``) must appear in the command's output.
* ```` ```python ````: the block runs on its own (fresh interpreter, its own imports). A bare
  expression with a comment ``# VALUE`` states its value: VALUE (after an optional ``label: ``,
  cut at `` (``, ``: `` or ``, word``) must equal the value's ``str``, ``repr`` or display form
  (``12·L·d²``); ``...`` in VALUE matches anything. A comment that starts with a letter only
  describes.
* A block whose first line is ``# excerpt of PATH`` shows part of a file: its lines must appear
  in PATH, in order, and PATH itself is what runs.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

FENCE = re.compile(r"^```(\w*)\s*$")
EXCERPT = re.compile(r"^#\s*excerpt of (\S+)")


@dataclass
class Block:
    lang: str
    line: int            # the README line of the block's first code line
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    @property
    def excerpt_of(self) -> str | None:
        m = EXCERPT.match(self.lines[0]) if self.lines else None
        return m.group(1) if m else None


@dataclass
class Command:
    argv: list[str]
    line: int
    expect: str = ""                                  # the comment(s) stating values
    output: list[str] | None = None                   # console blocks: the exact output
    words: list[str] = field(default_factory=list)    # the command as typed


def blocks(text: str) -> list[Block]:
    out, cur = [], None
    for n, raw in enumerate(text.splitlines(), 1):
        m = FENCE.match(raw)
        if cur is None and m:
            cur = Block(m.group(1) or "text", n + 1, [])
        elif cur is not None and raw.startswith("```"):
            out.append(cur)
            cur = None
        elif cur is not None:
            cur.lines.append(raw)
    return out


def _split_comment(line: str) -> tuple[str, str]:
    """``cmd args  # comment`` -> (cmd args, comment), quotes respected."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def shell_commands(block: Block) -> list[Command]:
    """The commands of a bash or console block, each with what the README says it prints."""
    cmds: list[Command] = []
    pending, start = "", 0
    lines = block.lines
    i = 0
    while i < len(lines):
        raw, n = lines[i], block.line + i
        i += 1
        if block.lang == "console":
            if not raw.startswith("$ "):
                if cmds and cmds[-1].output is not None:
                    cmds[-1].output.append(raw.rstrip())
                continue
            raw = raw[2:]
        code, comment = _split_comment(raw)
        if not pending and not code.strip():
            if comment and cmds and not raw.lstrip().startswith("#!"):
                cmds[-1].expect += " " + comment    # a comment line under a command states more
            continue
        if not pending:
            start = n
        if code.endswith("\\"):
            pending += code[:-1] + " "
            continue
        full, pending = pending + code, ""
        for part in full.split("&&"):
            words = shlex.split(part)
            if words:
                cmds.append(Command(words, start, comment, [] if block.lang == "console" else None, words))
    return cmds


NUMBER = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)? ?%|\d+(?:\.\d+)? × 10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+")
FORMULA = re.compile(r"[\w²³⁴()/+\-]*·[\w²³⁴·()/+\-]*")


def stated_values(comment: str) -> list[str]:
    """What a command's comment says it prints: numbers, percentages, × 10ⁿ figures, formulas."""
    vals = [m.group(0) for m in NUMBER.finditer(comment)]
    for m in FORMULA.finditer(comment):
        tok = m.group(0).strip("(),")
        if tok.count("(") != tok.count(")"):
            tok = tok.replace("(", "").replace(")", "") if "(" not in tok[1:] else tok
        if tok and "·" in tok:
            vals.append(tok)
    return vals


def python_value_comment(comment: str) -> str | None:
    """The value a bare expression's comment states, or None for a description."""
    c = comment.strip()
    c = re.sub(r"^[a-z][a-z ]*: ", "", c)          # 'one block: 7087872'
    if not c or c[0].isalpha() and not re.match(r"^[A-Za-z_]\w*(\*|·|\*\*|\^)", c):
        return None
    c = re.split(r" \((?=[A-Za-z])|: |, (?=[A-Za-z])", c)[0].strip()
    return c or None


def value_matches(expected: str, candidates: list[str]) -> bool:
    if "..." in expected:
        pat = ".*".join(re.escape(p.strip()) for p in expected.split("..."))
        return any(re.search(pat, c, re.S) for c in candidates)
    return expected in candidates


def read(path: Path) -> list[Block]:
    return blocks(path.read_text(encoding="utf-8"))

"""Notation profiles: how the canonical symbols are *shown* in LaTeX, in the reader's notation.

>>> from symgpt.core.notation import notation
>>> notation("raschka").symbol("L"), notation("raschka").symbol("T_max")
('N', 'L')

A profile maps canonical symbol names (``L``, ``T_max``, ...) to LaTeX math strings; printing
passes them to ``sympy.latex(expr, symbol_names=...)``, so nothing is renamed and clashes such
as Raschka's L (context length) versus the canonical L (layers) cannot mix the two up.

User profiles come from a small file, read as data and never executed:

* JSON: ``{"name": "mycourse", "base": "default", "symbols": {"L": "N"}, "quantities": {"params": "P"}}``
* text: one ``name = latex`` per line, ``#`` starts a comment; the keys ``name``, ``base`` and
  ``description`` set those fields, ``params``/``flops``/``memory`` name the totals.

Values must be short LaTeX math from a small vocabulary (letters, digits, ``_ ^ { } ' ( ) , . - +
/ |``, Greek letters and a few font and accent commands); anything else (``\\input``,
``\\write18``, ``$``, ``%``, ``#``, ``^^``, unbalanced braces, a double subscript) is refused with a
message that names it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import sympy

from .errors import SymgptError
from .io import read_bounded
from .notation_profiles import PROFILES
from .symbols import CANONICAL, MEANING

QUANTITY_KEYS = ("params", "flops", "memory")
META_KEYS = ("name", "base", "description")
MAX_VALUE = 64
MAX_FILE = 20_000

_GREEK = ("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu "
          "xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta "
          "Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega ell").split()
#: commands that take one braced argument
_ONE_ARG = frozenset("mathrm mathit mathbf mathsf mathtt mathcal mathbb text textrm textit textsf "
                     "texttt operatorname hat bar tilde vec widehat widetilde overline".split())
#: commands that take no argument
_NO_ARG = frozenset([*_GREEK, "max", "min", "prime", "cdot", "times", "infty", "star", "ast",
                     "dagger", "#", ",", "!", ";"])
#: commands whose argument is typeset in text mode: no _ ^ and no math command inside
_TEXT_MODE = frozenset("text textrm textit textsf texttt".split())
#: what a text-mode argument may hold besides characters: more text commands, \# and \,
_TEXT_OK = _TEXT_MODE | {"#", ","}
_ALLOWED_CHARS = re.compile(r"[A-Za-z0-9 _^{}'(),.\-+/|\\*\[\]:;!=<>#]*")
_TOKEN = re.compile(r"\\([A-Za-z]+|[#,!;])|(.)", re.S)


def _check_math(value: str, where: str) -> str:
    """*value* if it is safe, well-formed LaTeX math from the allowed vocabulary; else raise."""
    if not isinstance(value, str):
        raise SymgptError(f"{where}: a notation value must be text, got {type(value).__name__}")
    if not value.strip():
        raise SymgptError(f"{where}: empty notation value")
    if len(value) > MAX_VALUE:
        raise SymgptError(f"{where}: notation value too long ({len(value)} characters; at most {MAX_VALUE})")
    if not _ALLOWED_CHARS.fullmatch(value):
        shown = "".join(c for c in value if not _ALLOWED_CHARS.fullmatch(c))[:10]
        raise SymgptError(f"{where}: character(s) {shown!r} not allowed in a notation value {value!r}"
                          f" (allowed: letters, digits, _ ^ {{ }} ' ( ) , . - + / | and a few commands)")
    if "^^" in value:
        raise SymgptError(f"{where}: '^^' is not allowed in a notation value {value!r}")
    tokens = [(m.group(1), m.group(2)) for m in _TOKEN.finditer(value)]
    depth, i = 0, 0
    # per brace level: has the current atom a subscript / superscript already?
    scripts = [[False, False]]
    prev_script = False
    opened: list[bool] = []
    text = [False]  # per brace level: is it a text-mode argument (of \text and the like)?
    next_text = False
    for i, (cmd, ch) in enumerate(tokens):
        if text[-1] and (ch in ("_", "^") or (cmd is not None and cmd not in _TEXT_OK)):
            what = f"\\{cmd}" if cmd is not None else repr(ch)
            raise SymgptError(f"{where}: {what} cannot appear inside a text-mode argument "
                              f"(\\text{{...}} and the like) in {value!r}; put it outside, "
                              f"e.g. \\text{{a}}_{{b}}")
        if cmd is not None:
            if cmd not in _NO_ARG and cmd not in _ONE_ARG:
                raise SymgptError(f"{where}: command \\{cmd} is not allowed in a notation value {value!r}")
            next_text = cmd in _TEXT_MODE
            if cmd in _ONE_ARG and (i + 1 >= len(tokens) or tokens[i + 1][1] != "{"):
                raise SymgptError(f"{where}: \\{cmd} needs a braced argument in {value!r}")
            if not prev_script:
                scripts[-1] = [False, False]
            prev_script = False
            continue
        if ch in ("#", "\\"):
            raise SymgptError(f"{where}: {ch!r} is only allowed as \\# or a command in {value!r}")
        if ch == "{":
            depth += 1
            text.append(text[-1] or next_text)
            next_text = False
            opened.append(prev_script)  # a group right after _ or ^ is its argument
            scripts.append([False, False])
            prev_script = False
            continue
        if ch == "}":
            depth -= 1
            if depth < 0:
                raise SymgptError(f"{where}: unbalanced braces in {value!r}")
            scripts.pop()
            text.pop()
            if not opened.pop():
                scripts[-1] = [False, False]  # the group was a new atom
            continue
        if ch in "_^":
            slot = 0 if ch == "_" else 1
            nxt = tokens[i + 1] if i + 1 < len(tokens) else (None, None)
            # an argument: a letter, a digit, a {group} or a symbol command (not a space \, \! \;)
            if not ((nxt[1] or "").isalnum() and nxt[1].isascii() or nxt[1] == "{"
                    or (nxt[0] in _NO_ARG and nxt[0] not in (",", "!", ";"))):
                raise SymgptError(f"{where}: {ch!r} needs an argument (a letter, a digit, a "
                                  f"{{group}} or a symbol) in {value!r}")
            if scripts[-1][slot]:
                raise SymgptError(f"{where}: double {'subscript' if ch == '_' else 'superscript'} in {value!r}")
            scripts[-1][slot] = True
            prev_script = True
            continue
        if ch == " ":
            continue
        if not prev_script:
            scripts[-1] = [False, False]
        prev_script = False
    if depth != 0:
        raise SymgptError(f"{where}: unbalanced braces in {value!r}")
    return value


def _atom(value: str) -> str:
    """*value* braced when it ends in a control word or a prime, so that what the printer puts
    after it (another symbol, ``^{2}``) cannot run into it (``\\alphaa``, ``a'^{2}``)."""
    return "{" + value + "}" if re.search(r"(\\[A-Za-z]+|')$", value) else value


def _check_text(value, where: str, limit: int = 200) -> str:
    if not isinstance(value, str):
        raise SymgptError(f"{where} must be text, got {type(value).__name__}")
    value = " ".join(value.split())
    if len(value) > limit:
        raise SymgptError(f"{where} is too long ({len(value)} characters; at most {limit})")
    return value


@dataclass(frozen=True)
class Notation:
    """A validated profile: ``symbols`` (canonical name -> LaTeX) and ``quantities``."""

    name: str
    description: str
    symbols: Mapping[str, str]
    quantities: Mapping[str, str] = field(default_factory=dict)
    #: keys (symbols and quantities) whose values a user gave: typeset as atoms (``_atom``)
    user_keys: frozenset = frozenset()

    def symbol(self, name: str) -> str:
        """The LaTeX shown for canonical symbol *name*, as an atom (``_atom``): it may be put
        next to another symbol or raised to a power."""
        try:
            return self._shown(name, self.symbols[name])
        except KeyError:
            raise SymgptError(f"unknown symbol {name!r}; known symbols: {', '.join(CANONICAL)}") from None

    def quantity(self, name: str) -> str:
        key = name.split(".")[0]
        return self._shown(key, self.quantities.get(key, r"\mathrm{" + key + "}"))

    def _shown(self, key: str, value: str) -> str:
        return _atom(value) if key in self.user_keys else value

    @property
    def symbol_names(self) -> dict:
        """The ``symbol_names`` argument of ``sympy.latex`` (each value an atom: ``_atom``)."""
        return {CANONICAL[k]: self._shown(k, v) for k, v in self.symbols.items()}

    def latex(self, expr) -> str:
        """*expr* as LaTeX math in this notation (highest degree first, ``12 L d^{2} + ...``)."""
        if isinstance(expr, int):
            expr = sympy.Integer(expr)
        return sympy.latex(expr, symbol_names=self.symbol_names, order="lex", mul_symbol=None,
                           ln_notation=True)

    def legend(self, names) -> list[tuple[str, str]]:
        """(LaTeX symbol, meaning) for each canonical name in *names*, in canonical order."""
        return [(self.symbol(n), MEANING[n]) for n in CANONICAL if n in names]


def _build(name: str, base: Notation | None, spec: Mapping, where: str, user: bool = True) -> Notation:
    symbols = dict(base.symbols) if base else {}
    quantities = dict(base.quantities) if base else {}
    for key, value in dict(spec.get("symbols", {})).items():
        if key not in CANONICAL:
            raise SymgptError(f"{where}: unknown symbol {key!r}; known symbols: {', '.join(CANONICAL)}")
        symbols[key] = _check_math(value, f"{where}: {key}")
    for key, value in dict(spec.get("quantities", {})).items():
        if key not in QUANTITY_KEYS:
            raise SymgptError(f"{where}: unknown quantity {key!r}; known: {', '.join(QUANTITY_KEYS)}")
        quantities[key] = _check_math(value, f"{where}: {key}")
    seen: dict[str, str] = {}
    for key, value in symbols.items():
        norm = value.replace(" ", "")
        if norm in seen:
            raise SymgptError(f"{where}: {seen[norm]} and {key} would both be shown as {value!r}")
        seen[norm] = key
    desc = _check_text(spec.get("description", base.description if base else ""), f"{where}: description")
    given = frozenset([*dict(spec.get("symbols", {})), *dict(spec.get("quantities", {}))]) if user else frozenset()
    return Notation(name, desc, MappingProxyType(symbols), MappingProxyType(quantities),
                    given | (base.user_keys if base else frozenset()))


def _builtin(name: str) -> Notation:
    spec = PROFILES[name]
    base = None if name == "default" else _builtin("default")
    return _build(name, base, spec, f"notation {name}", user=False)


def builtin_names() -> list[str]:
    return list(PROFILES)


def parse_profile_text(text: str, where: str = "notation file") -> dict:
    """A ``name = latex`` text profile as the JSON form's dict (data only)."""
    spec: dict = {"symbols": {}, "quantities": {}}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise SymgptError(f"{where}, line {n}: expected 'name = latex', got {line[:60]!r}")
        key, value = (s.strip() for s in line.split("=", 1))
        if key in META_KEYS:
            spec[key] = value
        elif key in QUANTITY_KEYS:
            spec["quantities"][key] = value
        elif key in CANONICAL:
            spec["symbols"][key] = value
        else:
            raise SymgptError(f"{where}, line {n}: unknown key {key!r}; keys are the symbols "
                              f"({', '.join(CANONICAL)}), {', '.join(QUANTITY_KEYS)} and {', '.join(META_KEYS)}")
        if key in spec["symbols"] and list(spec["symbols"]).count(key) > 1:
            raise SymgptError(f"{where}, line {n}: {key} given twice")
    return spec


def load_profile(path: Path | str) -> Notation:
    """A user profile from a JSON or ``name = latex`` text file (validated, never executed)."""
    path = Path(path)
    where = f"notation file {path.name}"
    data = read_bounded(path, MAX_FILE, "notation file")
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark is allowed, as in a config
    except UnicodeDecodeError:
        raise SymgptError(f"{where} is not UTF-8 text") from None
    if text.lstrip().startswith("{"):
        try:
            spec = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as e:
            raise SymgptError(f"{where} is not valid JSON: {getattr(e, 'msg', e)}") from None
        if not isinstance(spec, dict):
            raise SymgptError(f"{where}: expected a JSON object")
        unknown = set(spec) - {"symbols", "quantities", *META_KEYS}
        if unknown:
            raise SymgptError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
        for key in ("symbols", "quantities"):
            if not isinstance(spec.get(key, {}), dict):
                raise SymgptError(f"{where}: {key!r} must be an object")
    else:
        spec = parse_profile_text(text, where)
    base_name = spec.get("base", "default")
    if not isinstance(base_name, str) or base_name not in PROFILES:
        raise SymgptError(f"{where}: unknown base profile {base_name!r}; built-in: {', '.join(PROFILES)}")
    name = _check_text(spec.get("name", path.stem), f"{where}: name", 60)
    return _build(name, _builtin(base_name), spec, where)


def _exists(spec: str) -> bool:
    try:
        return Path(spec).exists()
    except OSError:  # a name too long for the file system is no file
        return False


def notation(spec: "str | Path | Notation | None" = None) -> Notation:
    """A built-in profile by name (``default``, ``megatron``, ``kaplan``, ``raschka``), a
    validated user profile from a file path, or *spec* itself when it is a Notation."""
    if spec is None:
        return _builtin("default")
    if isinstance(spec, Notation):
        return spec
    if isinstance(spec, str) and spec in PROFILES:
        return _builtin(spec)
    if isinstance(spec, Path) or (isinstance(spec, str) and (Path(spec).suffix or "/" in spec or _exists(spec))):
        return load_profile(spec)
    raise SymgptError(f"unknown notation {spec!r}; built-in: {', '.join(PROFILES)}, or a path to a profile file")

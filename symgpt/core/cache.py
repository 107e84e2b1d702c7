"""The derivation cache: derived expressions stored as *data*, never as code.

An entry is one JSON file under the user's cache folder (``$XDG_CACHE_HOME/symgpt`` or
``~/.cache/symgpt``; ``SYMGPT_CACHE_DIR`` overrides both), named by the SHA-256 of its key: the
symgpt version, the family, its flags, the sizes bound when the graph was built, the quantity,
the convention and the options. An expression is a JSON tree of a few SymPy node names with
integer and rational leaves::

    12*L*d**2 + 2*d  ->  ["Add", ["Mul", ["I", 12], ["S", "L"], ["Pow", ["S", "d"], ["I", 2]]],
                                 ["Mul", ["I", 2], ["S", "d"]]]

read back by ``value`` (exact Python ints and Fractions, no SymPy) or ``to_sympy`` (a table of
three constructors and the canonical symbols; nothing is ever evaluated as text). An entry whose
JSON, format, version, key or checksum does not match is ignored, never trusted (and removed).
This module imports only the standard library: a warm command reads it without SymPy.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from fractions import Fraction
from pathlib import Path

FORMAT = 1
#: the largest entry read (bytes): anything bigger is not one of ours
MAX_BYTES = 4 << 20
_NODES = ("Add", "Mul", "Pow")


class Unsupported(Exception):
    """An expression with a node the tree format does not hold (it is simply not cached)."""


def folder() -> Path:
    """Where entries live."""
    if os.environ.get("SYMGPT_CACHE_DIR"):
        return Path(os.environ["SYMGPT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "symgpt"


def _version() -> str:
    from ..version import __version__

    return __version__


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _path(key: dict) -> Path:
    return folder() / "derivations" / f"{_digest({'symgpt': _version(), **key})[:40]}.json"


def get(key: dict) -> dict | None:
    """The data stored under *key*, or None (absent, unreadable, corrupt, foreign or stale)."""
    path = _path(key)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError:
        return None
    try:
        entry = json.loads(raw) if len(raw) <= MAX_BYTES else None
        ok = (isinstance(entry, dict) and entry.get("format") == FORMAT and entry.get("symgpt") == _version()
              and entry.get("key") == key and isinstance(entry.get("data"), dict)
              and entry.get("checksum") == _digest([entry["symgpt"], entry["key"], entry["data"]]))
    except (ValueError, RecursionError, TypeError):
        ok = False
    if not ok:
        _remove(path)
        return None
    return entry["data"]


def put(key: dict, data: dict) -> None:
    """Store *data* (JSON values) under *key*; a cache that cannot be written is skipped."""
    path = _path(key)
    entry = {"format": FORMAT, "symgpt": _version(), "key": key, "data": data,
             "checksum": _digest([_version(), key, data])}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".entry-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f, sort_keys=True, separators=(",", ":"))
            os.replace(tmp, path)
        except BaseException:
            _remove(Path(tmp))
            raise
    except OSError:
        pass


def clear() -> int:
    """Remove every entry; returns how many were removed."""
    n = 0
    d = folder() / "derivations"
    try:
        entries = list(d.iterdir())
    except FileNotFoundError:
        entries = []
    except OSError as e:  # a name too long, a symlink loop, a file as a folder, no permission
        from .errors import SymgptError
        from .io import path_reason

        raise SymgptError(f"cannot read the cache folder {d} (SYMGPT_CACHE_DIR or XDG_CACHE_HOME): "
                          f"{path_reason(d, e)}") from None
    for p in entries:
        if p.suffix == ".json" or p.name.startswith(".entry-"):
            _remove(p)
            n += p.suffix == ".json"
    return n


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


# --- expressions as trees ------------------------------------------------------------------
def tree(expr) -> list:
    """A SymPy expression (over canonical symbols) as a JSON tree; ``Unsupported`` otherwise."""
    if expr.is_Integer:
        return ["I", int(expr)]
    if expr.is_Rational:
        return ["Q", int(expr.p), int(expr.q)]
    if expr.is_Symbol:
        return ["S", expr.name]
    name = type(expr).__name__
    if name in _NODES:
        return [name, *(tree(a) for a in expr.args)]
    raise Unsupported(name)


def value(t, sizes: dict):
    """The exact value of tree *t* at *sizes* (name -> int): an int or a Fraction; None when a
    symbol is not in *sizes*. A malformed tree raises ValueError."""
    if not isinstance(t, list) or not t:
        raise ValueError("not a tree")
    op = t[0]
    if op == "I" and len(t) == 2 and type(t[1]) is int:
        return t[1]
    if op == "Q" and len(t) == 3 and type(t[1]) is int and type(t[2]) is int and t[2] > 0:
        return Fraction(t[1], t[2])
    if op == "S" and len(t) == 2 and isinstance(t[1], str):
        return sizes.get(t[1])
    args = [value(a, sizes) for a in t[1:]]
    if None in args:
        return None
    if op == "Add" and args:
        return _normal(sum(args))
    if op == "Mul" and args:
        out = 1
        for a in args:
            out *= a
        return _normal(out)
    if op == "Pow" and len(args) == 2 and isinstance(args[1], int) and abs(args[1]) <= 64:
        if args[0] == 0 and args[1] < 0:
            raise ValueError("division by zero")
        return _normal(Fraction(args[0]) ** args[1])
    raise ValueError(f"unknown node {op!r}")


def to_sympy(t):
    """Tree *t* as a SymPy expression: three constructors and the canonical symbols, nothing else."""
    import sympy

    from .symbols import CANONICAL

    constructors = {"Add": sympy.Add, "Mul": sympy.Mul, "Pow": sympy.Pow}
    if not isinstance(t, list) or not t:
        raise ValueError("not a tree")
    op = t[0]
    if op == "I" and len(t) == 2 and type(t[1]) is int:
        return sympy.Integer(t[1])
    if op == "Q" and len(t) == 3 and type(t[1]) is int and type(t[2]) is int and t[2] > 0:
        return sympy.Rational(t[1], t[2])
    if op == "S" and len(t) == 2 and t[1] in CANONICAL:
        return CANONICAL[t[1]]
    if op in constructors and len(t) >= 2:
        return constructors[op](*(to_sympy(a) for a in t[1:]))
    raise ValueError(f"unknown node {op!r}")


def _normal(v):
    return v.numerator if isinstance(v, Fraction) and v.denominator == 1 else v

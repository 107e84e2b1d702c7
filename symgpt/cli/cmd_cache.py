"""symgpt cache clear|path: the derivation cache (``symgpt.core.cache``)."""

from __future__ import annotations

from .common import emit

HELP = "the derivation cache: 'clear' empties it, 'path' prints where it is"
DESCRIPTION = (
    "symgpt stores derived formulas (as data: JSON trees of integers, rationals and symbols, "
    "checked by version and checksum) under $XDG_CACHE_HOME/symgpt or ~/.cache/symgpt "
    "(SYMGPT_CACHE_DIR overrides), so that 'symgpt params PRESET' answers without deriving "
    "again. 'symgpt cache clear' removes every entry; 'symgpt params --no-cache' ignores it.")


def add_arguments(p):
    p.add_argument("action", metavar="clear|path", help="clear: remove every entry; path: print the folder")


def run(args) -> int:
    from ..core import cache
    from ..core.errors import SymgptError

    if args.action not in ("clear", "path"):
        raise SymgptError(f"symgpt cache takes clear or path, got {args.action!r}")
    if args.action == "path":
        emit(str(cache.folder()))
        return 0
    n = cache.clear()
    emit(f"removed {n:,} cache {'entry' if n == 1 else 'entries'} from {cache.folder()}")
    return 0

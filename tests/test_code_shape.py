"""The shape of the code: no function or method of symgpt/ takes more than eight parameters
(positional and keyword-only, ``self``/``cls``, ``*args`` and ``**kwargs`` not counted). A long
signature is a bundle of options that wants a dataclass (``derive.options``); the allow-list below
names each exception and why.

Oracle: the functions' own signatures, read with ``ast`` from the source files (nothing imported)."""

from __future__ import annotations

import ast
from pathlib import Path

MAX_PARAMETERS = 8
ROOT = Path(__file__).resolve().parent.parent / "symgpt"

#: "path/inside/symgpt.py:qualified.name" -> why it may take more than MAX_PARAMETERS
ALLOWED: dict[str, str] = {}


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    a = node.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if method and names and names[0] in ("self", "cls"):
        names = names[1:]
    return names


def _functions(tree: ast.Module):
    """(qualified name, node, is a method) for every function and method, nested ones included."""
    def walk(node, prefix, in_class):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                yield name, child, in_class
                yield from walk(child, name + ".", False)
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".", True)
            else:
                yield from walk(child, prefix, in_class)
    yield from walk(tree, "", False)


def _long_signatures() -> dict[str, int]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, node, method in _functions(tree):
            n = len(_parameters(node, method))
            if n > MAX_PARAMETERS:
                out[f"{path.relative_to(ROOT).as_posix()}:{name}"] = n
    return out


def test_no_function_takes_more_than_eight_parameters():
    long = _long_signatures()
    offenders = {k: n for k, n in long.items() if k not in ALLOWED}
    assert not offenders, ("functions with more than eight parameters (bundle their options in a "
                           f"dataclass): {offenders}")


def test_the_allow_list_names_only_long_signatures():
    """An entry whose function was shortened (or renamed) leaves the list."""
    long = _long_signatures()
    stale = sorted(k for k in ALLOWED if k not in long)
    assert not stale, f"allow-list entries that no longer exceed eight parameters: {stale}"


def test_the_counter_counts_what_it_says():
    """The rule on hand-made signatures: self/cls, *args and **kwargs are not counted."""
    tree = ast.parse("def f(a, b, /, c, *args, d, e=1, **kw): pass\n"
                     "class K:\n    def m(self, a, b): pass\n    @classmethod\n    def c(cls, *, x): pass\n")
    counted = {name: len(_parameters(node, method)) for name, node, method in _functions(tree)}
    assert counted == {"f": 5, "K.m": 2, "K.c": 1}

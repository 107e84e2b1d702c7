"""The package's imports follow ``symgpt.core.import_layers``: no import against the layer order and no
import cycle, counting the imports inside functions. The oracle is the source itself, read with
``ast`` (nothing is imported), checked against the table in ``symgpt/core/import_layers.py``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from symgpt.core.import_layers import LAYERS, RENDER_ALLOWED, RENDER_FORBIDDEN, layer_of, rank

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "symgpt"


def modules() -> dict[str, Path]:
    """module name -> file, for every module of the package."""
    out = {}
    for f in sorted(PKG.rglob("*.py")):
        parts = list(f.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f
    return out


MODULES = modules()


def _resolve(module: str, is_pkg: bool, level: int, target: str | None) -> str:
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    if level:
        base = base[: len(base) - (level - 1)]
        return ".".join(base + ([target] if target else []))
    return target or ""


def _runtime_nodes(tree):
    """Every node of *tree* except those under ``if TYPE_CHECKING:`` (imports for type hints
    only, which never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                stack.extend(child.orelse)
                continue
            stack.append(child)


def imports(module: str) -> list[tuple[str, tuple[str, ...], int]]:
    """(imported symgpt module, names imported from it, line) for every import in *module*, at
    any depth (function bodies included). ``from pkg import sub`` counts as importing ``pkg.sub``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    is_pkg = path.name == "__init__.py"
    out = []
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "symgpt" or a.name.startswith("symgpt."):
                    out.append((a.name, (), node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.module == "__future__":
                continue
            base = _resolve(module, is_pkg, node.level, node.module)
            if not (base == "symgpt" or base.startswith("symgpt.")):
                continue
            plain = []
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in MODULES:
                    out.append((sub, (), node.lineno))
                else:
                    plain.append(a.name)
            if plain:
                out.append((base, tuple(plain), node.lineno))
        elif _is_ref(node):
            # a lazy reference (symgpt.core.lazy.Ref) imports its module on first use: it counts
            name = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else None
            out.append((node.args[0].value, (name,) if isinstance(name, str) else (), node.lineno))
    return out


def _is_ref(node) -> bool:
    """Whether *node* is ``Ref("symgpt....", ...)``: a :class:`symgpt.core.lazy.Ref`."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
    first = node.args[0]
    return (func == "Ref" and isinstance(first, ast.Constant) and isinstance(first.value, str)
            and (first.value == "symgpt" or first.value.startswith("symgpt.")))


def graph() -> dict[str, set[str]]:
    return {m: {t for t, _, _ in imports(m) if t != m} for m in MODULES}


def test_every_module_is_in_a_layer():
    assert len(MODULES) > 100
    for m in MODULES:
        assert layer_of(m) in [name for name, _ in LAYERS]


def test_every_import_names_a_module_of_the_package():
    for m in MODULES:
        for target, _, line in imports(m):
            assert target in MODULES, f"{m}:{line} imports {target}, which is not a module of symgpt"


def test_no_import_goes_up():
    bad = [f"{m} ({layer_of(m)}) imports {t} ({layer_of(t)}) at line {line}"
           for m in MODULES for t, _, line in imports(m)
           if rank(t) > rank(m)]
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def test_printers_never_load_models_or_run_queries():
    bad = []
    for m in MODULES:
        if layer_of(m) != "render":
            continue
        for t, names, line in imports(m):
            if t in RENDER_ALLOWED:
                continue
            for mod, forbidden in RENDER_FORBIDDEN.items():
                if t == mod or t.startswith(mod + "."):
                    if not forbidden or set(names) & set(forbidden):
                        bad.append(f"{m}:{line} imports {t} {names}")
    assert not bad, "\n".join(bad)


def _cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in g:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    cycles = _cycles(graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


# --- the walker itself, on hand-made graphs and sources (its own oracle) ------------------------

def test_cycle_finder_finds_a_cycle_and_only_it():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(g) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("module, is_pkg, level, target, expected", [
    ("symgpt.render.dot", False, 2, "model.model", "symgpt.model.model"),
    ("symgpt.render.dot", False, 1, "svg", "symgpt.render.svg"),
    ("symgpt.documents", True, 1, "report", "symgpt.documents.report"),
    ("symgpt.documents.reportparts.core", False, 3, "core.io", "symgpt.core.io"),
    ("symgpt.model.model", False, 2, None, "symgpt"),
    ("symgpt.model.model", False, 1, "hfconfig", "symgpt.model.hfconfig"),
])
def test_relative_imports_resolve(module, is_pkg, level, target, expected):
    assert _resolve(module, is_pkg, level, target) == expected


def test_type_checking_imports_do_not_count():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import symgpt.model.model\nimport symgpt.core.io\n")
    found = [n.names[0].name for n in _runtime_nodes(tree) if isinstance(n, ast.Import)]
    assert found == ["symgpt.core.io"]


def test_function_local_imports_count():
    found = {t for t, _, _ in imports("symgpt.cli.cmd_report")}
    assert "symgpt.documents.report" in found          # imported inside run()


def test_lazy_references_count_as_imports():
    found = {t for t, _, _ in imports("symgpt.families")}
    assert {"symgpt.families.gpt2", "symgpt.families.vit"} <= found        # Ref(...) in a table
    src = "from symgpt.core.lazy import Ref\nA = Ref('symgpt.model.model', 'load')\nB = Ref(f'x')\nC = Ref('os')\n"
    tree = ast.parse(src)
    refs = [n.args[0].value for n in ast.walk(tree) if _is_ref(n)]
    assert refs == ["symgpt.model.model"]


def test_every_lazy_reference_resolves():
    """Each ``Ref`` written in the source names a module (checked above) and an object in it."""
    import importlib

    for m in MODULES:
        for t, names, line in imports(m):
            if names and t in MODULES and len(names) == 1 and _refers(m, line):
                assert hasattr(importlib.import_module(t), names[0]), f"{m}:{line}: {t} has no {names[0]}"


def _refers(module: str, line: int) -> bool:
    tree = ast.parse(MODULES[module].read_text())
    return any(_is_ref(n) and n.lineno == line for n in ast.walk(tree))


def test_no_registry_swallows_a_missing_module():
    """Registries are explicit tables of imported objects: nothing catches ModuleNotFoundError
    (or ImportError) to drop an entry silently."""
    bad = []
    for m, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                names = [n.id for n in ast.walk(node.type) if isinstance(n, ast.Name)]
                names += [n.attr for n in ast.walk(node.type) if isinstance(n, ast.Attribute)]
                if {"ModuleNotFoundError", "ImportError"} & set(names):
                    bad.append(f"{m}:{node.lineno}")
    assert not bad, "except ModuleNotFoundError/ImportError in " + ", ".join(bad)


def test_every_public_name_of_the_facade_resolves():
    """``symgpt/__init__.py`` imports its names lazily by module name: each must exist."""
    import symgpt

    for name in symgpt.__all__:
        assert getattr(symgpt, name) is not None, name
    assert symgpt.fragment.__module__ == "symgpt.documents.latex_doc"
    assert symgpt.diagram.__module__ == "symgpt.documents.diagrams"

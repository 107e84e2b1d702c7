"""Every family is declared from one attention builder (``families/attention.py``) and one FFN
builder (``families/ffn.py``), and every node it declares says its role.

* The graphs are the ones the families declared before those builders existed: each case of
  ``tests/graphdump.py`` (every preset, every family at its defaults and with each flag changed,
  pairs of the generic decoder's flags) dumps to the digest ``tests/golden/graphs.sha256``
  recorded from that older tree (node paths, ops, shapes, inputs, parameters, groups, roles,
  labels, edges, constraints; a refused case, its error).
* No role comes from a path: every built-in family builds with ``roles.infer`` unusable, and
  with every path renamed, every node keeps its role.
"""

from __future__ import annotations

import os

import pytest

import graphdump
import symgpt
from symgpt import ops
from symgpt.core.errors import SymgptError
from symgpt.core.symbols import B, T, V, d
from symgpt.families import MODULES, family, presets
from symgpt.graph import roles
from symgpt.graph.arch import Builder
from symgpt.model.model import _build

PRESETS = presets()
BUILTIN = [n for _, names in MODULES for n in names]

GOLDEN = os.path.join(os.path.dirname(__file__), "golden", "graphs.sha256")


def _golden() -> dict[str, str]:
    out = {}
    with open(GOLDEN, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            digest, name = line.rstrip("\n").split(" ", 1)
            out[name] = digest
    return out


#: every case under SYMGPT_ALL_PRESETS=1; else the suite's share (graphdump.in_suite; the rest is
#: checked by benchmarks/preset_sweep.py, and `python tests/graphdump.py --check` runs them all)
FULL = os.environ.get("SYMGPT_ALL_PRESETS") == "1"


def test_every_graph_is_unchanged():
    want, got = _golden(), graphdump.digests(full=FULL)
    # (a preset another test registers is not in the file)
    assert sorted(n for n in set(want) - set(got) if FULL or graphdump.in_suite(n)) == []
    changed = [n for n in sorted(got) if got[n] != want.get(n)]
    assert changed == [], (f"{len(changed)} graphs differ from {GOLDEN}, e.g. {changed[:5]}; "
                           "`python tests/graphdump.py --full CASE` prints one")
    # the cases cover what they claim: every preset, every family, refused flag values too
    assert {f"preset {p}" for p in PRESETS} <= set(got)
    assert {f"family {f} free" for f in BUILTIN} <= set(got)
    assert any(graphdump.text(b).startswith("error ") for n, b in graphdump.cases().items()
               if n == "family falcon free post_norm=True")


def _builds():
    """(case, arch) for every preset and every family at its defaults, with and without dropout
    and with every optional size bound; built afresh (``load`` keeps the graphs it built)."""
    _build.cache_clear()
    for p in PRESETS:
        yield f"preset {p}", symgpt.load(p).arch
    for name in BUILTIN:  # the built-in families (not those other tests register)
        fam = family(name)
        for bound in (frozenset(), frozenset(graphdump.OPTIONAL_BOUND)):
            for drop in (False, True):
                flags = {**fam.flags, **({"dropout": drop} if "dropout" in fam.flags else {})}
                try:
                    arch = fam.build(flags, bound)
                except SymgptError as e:  # a block without dropout layers refuses the flag
                    assert drop and "flag dropout is not modelled" in str(e), (name, e)
                    arch = None
                yield f"{name} {sorted(bound)} dropout={drop}", arch
    _build.cache_clear()


def test_every_node_of_every_family_and_preset_declares_its_role(monkeypatch):
    def no_paths(path, groups):
        raise AssertionError(f"{path}: role read from the path")

    monkeypatch.setattr(roles, "infer", no_paths)
    built = 0
    for case, a in _builds():
        if a is None:
            built += 1
            continue
        assert any(True for _ in a.ops()), case
        missing = [n for n in a.order if a.role(n) is None]
        assert missing == [], case
        built += 1
    assert built == len(PRESETS) + 4 * len(BUILTIN)


def test_a_node_without_a_role_is_refused():
    g = Builder("strict", declared_roles=True)
    with pytest.raises(SymgptError, match="'input_ids' declares no role"):
        g.input("input_ids", (B, T))
    ids = g.input("input_ids", (B, T), role=roles.TOKENS)
    with pytest.raises(SymgptError, match="'embedding/token' declares no role"):
        g.op("embedding/token", ops.Embedding(V, d), ids)
    # a builder that does not insist (a user's own architecture) still reads GPT-2's path scheme
    g = Builder("lenient")
    ids = g.input("input_ids", (B, T))
    assert g.graph.nodes[ids]["role"] == roles.TOKENS
    assert g.graph.nodes[g.op("embedding/token", ops.Embedding(V, d), ids)]["role"] == roles.TOKEN_EMBEDDING
    assert g.graph.nodes[g.op("embedding/other", ops.Embedding(V, d), ids)]["role"] is None


def _renamed(path: str) -> str:
    return "/".join(f"{part}_renamed" for part in path.split("/"))


@pytest.fixture
def renaming(monkeypatch):
    """Every Builder names each node and group ``<part>_renamed`` for each part of the name it
    is given (full paths the families spell out, for ties and the ids input, resolve the same)."""
    path, param, op = Builder._path, Builder.param, Builder.op

    def _path(self, name):
        return path(self, _renamed(name))

    def _param(self, op_path, local="weight"):
        return param(self, op_path if f"{op_path}.{local}" in self.graph else _renamed(op_path), local)

    def _op(self, name, o, *inputs, **kw):
        return op(self, name, o, *(i if i in self.graph else _renamed(i) for i in inputs), **kw)

    yield lambda: (monkeypatch.setattr(Builder, "_path", _path), monkeypatch.setattr(Builder, "param", _param),
                   monkeypatch.setattr(Builder, "op", _op))


def _roles_by_path(a):
    nodes = {n: a.role(n) for n in a.order}
    groups = {n: g.role for n, g in a.groups.items()}
    return nodes, groups


def test_renaming_every_path_changes_no_role(renaming):
    before = [(case, _roles_by_path(a)) for case, a in _builds() if a is not None]
    renaming()
    after = [(case, _roles_by_path(a)) for case, a in _builds() if a is not None]
    assert [c for c, _ in before] == [c for c, _ in after]
    for (case, (nodes, groups)), (_, (nodes2, groups2)) in zip(before, after):
        assert nodes2 and all("_renamed" in n for n in nodes2), case
        assert {_renamed(n): r for n, r in nodes.items()} == nodes2, case
        assert {_renamed(n): r for n, r in groups.items()} == groups2, case


def test_a_path_read_as_a_role_would_be_caught(renaming):
    """The check above has teeth: a node that leaves its role to GPT-2's path scheme (a user's
    builder) loses it when renamed."""
    def build():
        g = Builder("lenient")
        x = g.input("x", (B, T, d), role=roles.TOKENS)
        with g.repeat("blocks", 2, role=roles.STACK):
            o = g.op("attention/proj", ops.Linear(d, d), x)
        return g.graph.nodes[o]["role"]

    assert build() == roles.OUT
    renaming()
    assert build() is None

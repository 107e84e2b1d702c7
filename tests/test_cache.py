"""The derivation cache: a warm ``symgpt params PRESET`` prints the same bytes as a fresh
derivation without importing SymPy or networkx; corrupt, foreign and stale entries are ignored;
``--no-cache`` and ``symgpt cache clear``; the tree format holds exact values and nothing else.

Oracles: the usual derivation's output (``--no-cache``, same process rules) and lecture note 7.3's count
of GPT-2 small, 124,439,808; the values of the trees against SymPy's exact evaluation; the tree
of 12·L·d² + 13·L·d + V·d + T_max·d + 2·d written out by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction

import pytest

import symgpt
from symgpt.core import cache
from symgpt.cli import main

PRESETS = ["gpt2-small", "gpt3-1.3b", "llama-70b", "mixtral-8x7b", "gemma-2b", "falcon-7b"]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMGPT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _params(capsys, *args) -> str:
    assert main(["params", *args]) == 0
    return capsys.readouterr().out


def _entries(folder):
    d = folder / "derivations"
    return sorted(d.glob("*.json")) if d.is_dir() else []


@pytest.mark.parametrize("name", PRESETS)
def test_warm_answer_is_the_derivation_byte_for_byte(name, cache_dir, capsys, monkeypatch):
    fresh = _params(capsys, name, "--no-cache")
    assert not _entries(cache_dir)                      # --no-cache writes nothing
    assert _params(capsys, name) == fresh               # cold: derives and stores
    assert len(_entries(cache_dir)) == 2                # the family's flags and the derivation
    import symgpt.cli.cached as cached

    seen = []
    monkeypatch.setattr(cached, "store_params", lambda m, q: seen.append(m))
    assert _params(capsys, name) == fresh               # warm: answered from the cache
    assert not seen, "the warm run derived again"


def test_warm_run_imports_neither_sympy_nor_networkx(cache_dir):
    env = {**os.environ, "SYMGPT_CACHE_DIR": str(cache_dir)}
    code = ("import sys; from symgpt.cli import main; rc = main(['params', 'gpt2-small']); "
            "print('LOADED', sorted(m for m in ('sympy', 'networkx', 'numpy') if m in sys.modules))")
    cold = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    warm = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "LOADED ['sympy']" in cold.stdout.replace(", 'numpy'", "")   # derives: SymPy, not networkx
    assert warm.stdout.splitlines()[-1] == "LOADED []"
    assert "= 124,439,808" in warm.stdout
    assert warm.stdout.split("LOADED")[0] == cold.stdout.split("LOADED")[0]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "checksum", "stale", "foreign", "value"])
def test_damaged_entries_are_ignored_and_replaced(damage, cache_dir, capsys):
    fresh = _params(capsys, "gpt2-small", "--no-cache")
    _params(capsys, "gpt2-small")
    for path in _entries(cache_dir):
        raw = path.read_bytes()
        entry = json.loads(raw)
        if damage == "garbage":
            path.write_bytes(b"\x00\xff not json")
        elif damage == "truncated":
            path.write_bytes(raw[: len(raw) // 2])
        elif damage == "checksum":
            entry["checksum"] = "0" * 64
            path.write_text(json.dumps(entry))
        elif damage == "stale":  # another symgpt version wrote it (its checksum is right for it)
            entry["symgpt"] = "0.0.1"
            entry["checksum"] = cache._digest([entry["symgpt"], entry["key"], entry["data"]])
            path.write_text(json.dumps(entry))
        elif damage == "foreign":  # a valid entry of another key under this name
            entry["key"] = {**entry["key"], "family": "llama"}
            entry["checksum"] = cache._digest([entry["symgpt"], entry["key"], entry["data"]])
            path.write_text(json.dumps(entry))
        else:  # a changed number without a matching checksum: corruption
            path.write_text(raw.decode().replace('["I",12]', '["I",13]'))
    assert _params(capsys, "gpt2-small") == fresh       # ignored: derived again, and stored again
    assert _params(capsys, "gpt2-small") == fresh
    for path in _entries(cache_dir):
        entry = json.loads(path.read_bytes())
        assert entry["checksum"] == cache._digest([entry["symgpt"], entry["key"], entry["data"]])
        assert entry["symgpt"] == symgpt.__version__


def test_cache_clear_and_path(cache_dir, capsys):
    _params(capsys, "gpt2-small")
    assert len(_entries(cache_dir)) == 2
    assert main(["cache", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(cache_dir)
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out.strip() == f"removed 2 cache entries from {cache_dir}"
    assert not _entries(cache_dir)


def test_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("SYMGPT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.folder() == tmp_path / "xdg" / "symgpt"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.folder() == tmp_path / "home" / ".cache" / "symgpt"


def test_a_constraint_the_preset_breaks_is_not_answered_from_the_cache(cache_dir, capsys):
    """--set is never answered from the cache; a broken constraint still gives its error."""
    _params(capsys, "gpt2-small")
    assert main(["params", "gpt2-small", "--set", "h=7"]) == 2
    assert "divisible" in capsys.readouterr().err


def test_tree_by_hand_and_exact_values():
    import sympy

    from symgpt.core.symbols import CANONICAL

    L, d, V, T_max = (CANONICAL[k] for k in ("L", "d", "V", "T_max"))
    e = 12 * L * d**2 + 13 * L * d + V * d + T_max * d + 2 * d
    t = cache.tree(e)
    assert cache.to_sympy(t) == e
    assert cache.value(t, {"L": 12, "d": 768, "V": 50257, "T_max": 1024}) == 124_439_808
    assert cache.value(t, {"L": 12}) is None
    assert cache.value(["Mul", ["Q", 1, 3], ["S", "d"]], {"d": 5}) == Fraction(5, 3)
    assert cache.value(["Pow", ["S", "h"], ["I", -1]], {"h": 4}) == Fraction(1, 4)
    assert cache.tree(sympy.Rational(-3, 7) * d) == ["Mul", ["Q", -3, 7], ["S", "d"]]


@pytest.mark.parametrize("name", PRESETS)
def test_every_breakdown_entry_round_trips(name):
    m = symgpt.load(name)
    q = m.params
    sizes = {k: int(v) for k, v in m.sizes.items()}
    for _, e in [*q.breakdown, ("total", q.expr)]:
        t = json.loads(json.dumps(cache.tree(e)))      # through JSON, as stored
        assert cache.to_sympy(t) == e
        v = cache.value(t, sizes)
        assert v == m.value(e)


@pytest.mark.parametrize("bad", [["eval", ["S", "d"]], ["Function", ["S", "d"]], ["S", "__import__"],
                                 ["I", "12"], ["I", 1.5], ["Q", 1, 0], "Add", [], ["Pow", ["S", "d"], ["I", 10**6]]])
def test_trees_hold_only_data(bad):
    with pytest.raises(ValueError):
        cache.to_sympy(bad) if bad != ["Pow", ["S", "d"], ["I", 10**6]] else cache.value(bad, {"d": 2})
    if bad != ["S", "__import__"] and bad != ["Pow", ["S", "d"], ["I", 10**6]]:
        with pytest.raises(ValueError):
            cache.value(bad, {"d": 2})


def test_unsupported_nodes_are_not_cached():
    import sympy

    from symgpt.core.symbols import CANONICAL

    with pytest.raises(cache.Unsupported):
        cache.tree(sympy.ceiling(CANONICAL["V"] / 64))


def test_cache_takes_clear_or_path(capsys):
    assert main(["cache", "drop"]) == 2
    assert capsys.readouterr().err == "symgpt: error: symgpt cache takes clear or path, got 'drop'\n"

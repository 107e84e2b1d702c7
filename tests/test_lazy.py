"""Families and quantity providers are imported on first use (``symgpt.core.lazy.Ref``), from explicit
tables: ``symgpt.families.MODULES`` (family -> module) and ``symgpt.model.model.QUANTITIES`` (quantity ->
provider). Oracles: what each family module registers when imported alone, ``comm.DIMS``, and
``sys.modules`` of fresh interpreters (what a command imported; no timings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import symgpt
import symgpt.cli
from symgpt.model import model as model_mod
from symgpt.core.errors import SymgptError
from symgpt.families import MODULES, families
from symgpt.families.base import Family
from symgpt.core.lazy import Ref


def _fresh(code: str, tmp_path) -> object:
    env = {**os.environ, "SYMGPT_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_family_table_is_what_the_modules_register(tmp_path):
    modules = list(dict.fromkeys(r.module for r in MODULES.values()))
    code = ("import importlib, json\nfrom symgpt.families.base import registered\nout = {}\n"
            f"for m in {modules!r}:\n"
            "    before = set(registered())\n"
            "    importlib.import_module(m)\n"
            "    out[m] = [n for n in registered() if n not in before]\n"
            "print(json.dumps(out))")
    found = _fresh(code, tmp_path)
    for m in modules:
        assert found[m] == [n for n, r in MODULES.items() if r.module == m], m
    assert list(families()) [:len(MODULES)] == list(MODULES)      # listed in the table's order


def test_a_family_imports_its_own_module_only(tmp_path):
    code = ("import json, sys\nfrom symgpt.families import family\nfamily('vit')\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('symgpt.families.'))))")
    assert _fresh(code, tmp_path) == ["symgpt.families.attention", "symgpt.families.base", "symgpt.families.ffn",
                                      "symgpt.families.layers", "symgpt.families.vit"]


def test_a_users_family_cannot_take_a_built_in_name_even_before_it_is_loaded(tmp_path):
    code = ("import json\nfrom symgpt.families import register_family, Family\n"
            "from symgpt.core.errors import SymgptError\n"
            "try:\n    register_family(Family('t5', 'mine', {}, (), build=lambda f, b: None))\n"
            "except SymgptError as e:\n    print(json.dumps(str(e)))")
    assert _fresh(code, tmp_path) == "family 't5' is registered twice"


def test_an_unknown_family_lists_every_family():
    with pytest.raises(SymgptError, match=r"unknown family 'nope'; known: .*bart.*vit"):
        symgpt.families.family("nope")


def test_every_quantity_provider_resolves():
    for name, ref in model_mod.QUANTITIES.items():
        assert isinstance(ref, Ref), name
        assert callable(ref.get()), name
        assert ref.get() is ref.get()                               # resolved once
    from symgpt.derive import comm

    assert model_mod.COMM_DIMS == comm.DIMS
    assert [n for n in model_mod.QUANTITIES if n.startswith("comm.")] == [*(f"comm.{d}" for d in comm.DIMS),
                                                                         "comm.total"]


def test_a_lazy_provider_gives_what_the_module_gives():
    from symgpt.derive import flops

    m = symgpt.load("gpt2-small", B=1, T=1024)
    assert m.quantity("flops.forward").expr == flops.forward(m).expr
    assert m.quantity("comm.tp", tp=2).name == "comm.tp"


def test_a_missing_provider_raises_when_asked_for(monkeypatch):
    monkeypatch.setitem(model_mod._PROVIDERS, "flops.nothing", Ref("symgpt.derive.flops", "nothing"))
    with pytest.raises(AttributeError):
        symgpt.load("gpt2-small").quantity("flops.nothing")
    with pytest.raises(ModuleNotFoundError):
        Ref("symgpt.derive.no_such_module", "x").get()


_PROBE = """
import json, sys
from symgpt.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith(('symgpt.families.', 'symgpt.derive.', 'symgpt.cli.cmd_')))))
"""


def test_params_imports_one_command_one_family_and_the_params_derivation(tmp_path):
    found = _fresh(_PROBE.format(argv=["params", "gpt2-small", "--no-cache"]), tmp_path)
    assert found == ["symgpt.cli.cmd_params", "symgpt.derive.params", "symgpt.derive.quantity",
                     "symgpt.families.attention", "symgpt.families.base",
                     "symgpt.families.decoder", "symgpt.families.decoder_flags",
                     "symgpt.families.decoder_layers", "symgpt.families.ffn", "symgpt.families.layers",
                     "symgpt.families.named", "symgpt.families.stacks"]
    flops = _fresh(_PROBE.format(argv=["flops", "t5-small", "--set", "B=1", "--set", "T_enc=8",
                                       "--set", "T_dec=8"]), tmp_path)
    assert "symgpt.derive.flops" in flops and "symgpt.families.t5" in flops
    assert "symgpt.families.named" not in flops and "symgpt.derive.inference" not in flops
    assert [m for m in flops if m.startswith("symgpt.cli.cmd_")] == ["symgpt.cli.cmd_flops"]
    every = _fresh(_PROBE.format(argv=["--help"]), tmp_path)        # --help lists every command's HELP
    assert [m for m in every if m.startswith("symgpt.cli.cmd_")] == sorted(
        f"symgpt.cli.cmd_{c}" for c in symgpt.cli.COMMANDS)


def test_the_op_catalog_is_every_op_its_modules_declare():
    import importlib

    from symgpt import ops
    from symgpt.ops.base import Op

    modules = sorted({r.module for r in ops.CATALOG.values()})
    declared = {}
    for m in modules:
        mod = importlib.import_module(m)
        for n, v in vars(mod).items():
            if isinstance(v, type) and issubclass(v, Op) and v.__module__ == m and v.kind:
                declared[n] = m
    assert {n: r.module for n, r in ops.CATALOG.items()} == declared
    assert all(ops.CATALOG[n].get() is getattr(ops, n) for n in declared)
    assert len(ops.registered_kinds()) == len(declared)              # one kind each
    with pytest.raises(AttributeError):
        ops.NoSuchOp  # noqa: B018


def test_gpt2_imports_the_ops_it_uses_only(tmp_path):
    code = ("import json, sys, symgpt\nm = symgpt.load('gpt2-small')\nm.params\n"
            "used = sorted({type(a['op']).__module__ for _, a in m.arch.ops()})\n"
            "print(json.dumps([used, sorted(k for k in sys.modules if k.startswith('symgpt.ops.'))]))")
    used, loaded = _fresh(code, tmp_path)
    # the decoder's activation table makes every activation (ReLU: symgpt.ops.activations)
    assert set(used) <= set(loaded) <= {*used, "symgpt.ops.base", "symgpt.ops.activations"}
    assert "symgpt.ops.vision" not in loaded and "symgpt.ops.moe" not in loaded


def test_a_users_op_cannot_take_a_catalog_kind_even_before_it_is_loaded(tmp_path):
    code = ("import json\nfrom dataclasses import dataclass\nfrom symgpt.ops import register, Op\n"
            "from symgpt.core.errors import SymgptError\n"
            "@dataclass(frozen=True)\nclass Mine(Op):\n    kind = 'conv2d'\n"
            "try:\n    register(Mine)\nexcept SymgptError as e:\n    print(json.dumps(str(e)))")
    assert _fresh(code, tmp_path) == "op kind 'conv2d' is registered twice"

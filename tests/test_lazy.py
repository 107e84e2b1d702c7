"""Families and quantity providers are imported on first use (``symgpt.core.lazy.Ref``), from explicit
tables: ``symgpt.families.MODULES`` (family module -> its families) and ``symgpt.model.model.QUANTITIES`` (quantity ->
provider). Oracles: what each family module declares when imported alone, ``comm.DIMS``, and
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
from symgpt.families import MODULES, families, presets, readers
from symgpt.families.base import Family
from symgpt.core.lazy import Ref


def _fresh(code: str, tmp_path) -> object:
    env = {**os.environ, "SYMGPT_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_family_table_is_what_the_modules_declare(tmp_path):
    modules = [r.module for r, _ in MODULES]
    assert len(set(modules)) == len(modules)                      # one line per module
    code = ("import importlib, json, sys\nout = {}\n"
            f"for m in {modules!r}:\n"
            "    mod = importlib.import_module(m)\n"
            "    out[m] = [[f.name for f in mod.FAMILIES], sorted(mod.READERS), [p.name for p in mod.PRESETS]]\n"
            "print(json.dumps([out, 'sympy' in sys.modules]))")
    found, heavy = _fresh(code, tmp_path)
    assert not heavy                                              # declaring families imports no SymPy
    for ref, names in MODULES:
        assert found[ref.module][0] == list(names), ref.module
    table = [n for _, names in MODULES for n in names]
    assert list(families())[:len(table)] == table                 # listed in the table's order
    # presets() and readers() are the union of what the modules declare
    assert list(presets()) == [p for m in modules for p in found[m][2]]
    assert sorted(readers()) == sorted(t for m in modules for t in found[m][1])


def test_every_preset_names_a_family_and_every_reader_a_family_it_declares():
    fams = families()
    for p in presets().values():
        assert p.family in fams, p.name
        assert set(p.sizes) <= set(fams[p.family].sizes) | set(fams[p.family].optional), p.name
    for ref, names in MODULES:
        for model_type, r in ref.get().READERS.items():
            assert r.architectures, model_type                    # each reader says what it counts
            # (BertGenerationDecoder: transformers' causal-LM class of bert-generation; NemotronH_Omni_Reasoning_V3:
            # the image-text-to-text class of nemotron_h_omni)
            assert all(a.endswith(("ForCausalLM", "LMHeadModel", "ForMaskedLM", "Model", "ForConditionalGeneration",
                                   "ForImageClassification")) or a == "BertGenerationDecoder"
                       # (IDEFICS's and Evolla's generation classes: ForVisionText2Text, ForProteinText2Text)
                       or a in ("IdeficsForVisionText2Text", "EvollaForProteinText2Text")
                       # (speech-to-text classes of SpeechT5 and SeamlessM4T: ForSpeechToText)
                       or a.endswith("ForSpeechToText")
                       or a == "NemotronH_Omni_Reasoning_V3"
                       for a in r.architectures), model_type


def test_listing_presets_imports_no_sympy(tmp_path):
    code = ("import json, sys\nimport symgpt.families as f\nn = len(f.presets()), len(f.families()), len(f.readers())\n"
            "print(json.dumps([n, sorted(m for m in ('sympy', 'networkx', 'symgpt.ops', 'symgpt.families.blocks') "
            "if m in sys.modules)]))")
    counts, heavy = _fresh(code, tmp_path)
    # the built-in tables only: other tests in this process may register families and presets
    from symgpt.families import MODULES

    builtin_families = [n for _, names in MODULES for n in names]
    builtin_presets = [p for ref, _ in MODULES for p in ref.get().PRESETS]
    assert heavy == [] and counts == [len(builtin_presets), len(builtin_families), len(readers())]


def test_a_duplicate_preset_or_reader_raises(monkeypatch):
    from symgpt.families import gpt2, llama

    monkeypatch.setattr(llama, "PRESETS", (*llama.PRESETS, gpt2.PRESETS[0]))
    with pytest.raises(SymgptError, match="preset 'gpt2-small' is declared twice"):
        presets()
    monkeypatch.setattr(llama, "READERS", {**llama.READERS, "gpt2": gpt2.READERS["gpt2"]})
    with pytest.raises(SymgptError, match="model_type 'gpt2' has two readers"):
        readers()


def test_a_family_imports_its_own_module_only(tmp_path):
    code = ("import json, sys\nfrom symgpt.families import family\nfamily('vit')\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('symgpt.families.'))))")
    assert _fresh(code, tmp_path) == ["symgpt.families.base", "symgpt.families.fields", "symgpt.families.vit"]


def test_a_users_family_cannot_take_a_built_in_name_even_before_it_is_loaded(tmp_path):
    code = ("import json\nfrom symgpt.families import register_family, Family\n"
            "from symgpt.core.errors import SymgptError\n"
            "try:\n    register_family(Family('t5', 'mine', {}, (), build=lambda f, b: None))\n"
            "except SymgptError as e:\n    print(json.dumps(str(e)))")
    assert _fresh(code, tmp_path) == "family 't5' is registered twice"


def test_an_unknown_family_names_the_closest_and_the_count():
    n = len(symgpt.families.families())
    with pytest.raises(SymgptError, match=rf"unknown family 'nope'; {n} families are built in"):
        symgpt.families.family("nope")
    with pytest.raises(SymgptError, match=r"unknown family 'lama'; did you mean llama"):
        symgpt.families.family("lama")


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
    assert found == ["symgpt.cli.cmd_params", "symgpt.derive.params", "symgpt.derive.quantity", "symgpt.families.base",
                     "symgpt.families.blocks", "symgpt.families.blocks.attention", "symgpt.families.blocks.decoder", "symgpt.families.blocks.decoder_flags",
                     "symgpt.families.blocks.decoder_layers", "symgpt.families.blocks.encoder_layers", "symgpt.families.blocks.ffn",
                     "symgpt.families.blocks.gpt2", "symgpt.families.blocks.stacks", "symgpt.families.fields",
                     "symgpt.families.gpt2"]
    flops = _fresh(_PROBE.format(argv=["flops", "t5-small", "--set", "B=1", "--set", "T_enc=8",
                                       "--set", "T_dec=8"]), tmp_path)
    assert "symgpt.derive.flops" in flops and "symgpt.families.blocks.t5" in flops
    assert "symgpt.families.blocks.gpt2" not in flops and "symgpt.derive.inference" not in flops
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

"""A family in one place: each family module declares its families, config.json readers and presets
as data over light modules; a reader counts only the transformers classes it declares
(``architectures``); presets waive constraints by their stable ids. Oracles: a fresh interpreter's
``sys.modules``, transformers' models built on the meta device, and hand-made presets."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import symgpt
from symgpt import SymgptError
from symgpt.cli import main
from symgpt.core.errors import TooLarge
from symgpt.families import MODULES, families, family, presets, readers
from symgpt.families.base import Preset
from symgpt.model.hfconfig import read_config, read_json
from symgpt.model.model import Model, from_config

from oracles.hf_encdec import build, params

ROOT = Path(__file__).resolve().parents[1]
LIGHT = {"symgpt.families.base", "symgpt.families.fields", "symgpt.families.decoders", "symgpt.core.errors",
         "symgpt.core.lazy"}


# --- the modules: light, and what the table says ------------------------------------------------
@pytest.mark.parametrize("module", [r.module for r, _ in MODULES])
def test_a_family_module_imports_no_sympy(module):
    code = (f"import json, sys, importlib\nm = importlib.import_module({module!r})\n"
            "print(json.dumps([len(m.FAMILIES), sorted(k for k in sys.modules if k.split('.')[0] in "
            "('sympy', 'networkx', 'numpy') or k.startswith(('symgpt.ops', 'symgpt.graph', 'symgpt.families.blocks')))]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    n, heavy = json.loads(out.stdout.strip().splitlines()[-1])
    assert n >= 1 and heavy == []


@pytest.mark.parametrize("module", [r.module for r, _ in MODULES])
def test_a_family_module_imports_only_light_modules_at_its_top(module):
    """Its top level imports the light modules and other family modules only; builders are lazy."""
    path = ROOT / (module.replace(".", "/") + ".py")
    family_modules = {r.module for r, _ in MODULES}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.level:
            target = ".".join(module.split(".")[:-node.level] + ([node.module] if node.module else []))
            assert target in LIGHT | family_modules, f"{module} imports {target}"
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            assert all(n in ("__future__", "fractions", "functools") for n in names), f"{module} imports {names}"


def test_every_preset_is_of_a_family_and_loads_with_its_own_sizes():
    fams = families()
    for p in presets().values():
        assert p.family in fams, p.name
        m = symgpt.load(p.name)
        # beside its own sizes, a model binds the symbols of its size flags (MLA ranks, FFN widths)
        from symgpt.core.flag_symbols import flag_sizes
        assert m.family is family(p.family)
        assert {k: int(v) for k, v in m.sizes.items()} == {**dict(p.sizes), **flag_sizes(m.flags)}


def test_the_generic_decoder_sizes_agree_with_its_builder():
    from symgpt.families import decoders
    from symgpt.families.blocks import decoder_flags

    assert (decoders.SIZES, decoders.OPTIONAL) == (decoder_flags.SIZES, decoder_flags.OPTIONAL)


def test_an_unknown_flag_in_a_decoder_family_raises_when_its_flags_are_read():
    from symgpt.families.decoders import decoder_family

    fam = decoder_family("mine", "a decoder with a typo", tied=True, tyed=True)
    with pytest.raises(SymgptError, match="tyed"):
        dict(fam.flags)


# --- waiving a constraint by its id --------------------------------------------------------------
def _gpt3_13(waive):
    return Preset("gpt3-1.3b-like", "gpt2", {"L": 24, "h": 24, "d": 2048, "V": 50257, "T_max": 2048}, waive=waive)


def test_a_preset_waives_a_constraint_by_its_id():
    fam = family("gpt2")
    ids = {c.id: c.message for c in symgpt.load("gpt2-small").arch.constraints}
    assert ids["heads_divide_width"] == "d must be divisible by h"
    p = _gpt3_13(("heads_divide_width",))
    m = Model(p.name, fam, p.flags, p.sizes, p)                      # 2048/24 is no integer: waived
    assert m.params.value == symgpt.load("gpt3-1.3b").params.value
    with pytest.raises(SymgptError, match="d must be divisible by h"):
        m.shapes(B=1, T=8)                                           # enforced for concrete shapes
    for waive in [(), ("d must be divisible by h",)]:                # the message's wording waives nothing
        p = _gpt3_13(waive)
        with pytest.raises(SymgptError, match=r"d must be divisible by h \(d=2048, h=24\)"):
            Model(p.name, fam, p.flags, p.sizes, p)


def test_every_built_in_constraint_has_an_id():
    seen = set()
    # the built-in families only: other tests in this process may register families of their own
    from symgpt.families import MODULES

    for name in [n for _, names in MODULES for n in names]:
        m = symgpt.load(name)
        for c in m.arch.constraints:
            assert c.id and re.fullmatch(r"[a-z_]+", c.id), (name, c.message)
            seen.add(c.id)
    for flags in ({"moe": True, "dense_layers": 1}, {"window": True, "full_every": 2}):
        seen |= {c.id for c in symgpt.load("decoder", **flags).arch.constraints}
    assert {"heads_divide_width", "kv_heads_divide_heads", "length_within_positions", "topk_within_experts",
            "experts_after_dense_layers", "full_layer_within_layers", "patches_divide_image"} <= seen


def test_a_file_too_large_is_told_apart_by_its_type(tmp_path):
    from symgpt.core.io import read_bounded

    big = tmp_path / "config.json"
    big.write_bytes(b" " * ((1 << 20) + 1))
    with pytest.raises(TooLarge) as e:
        read_bounded(big, 1 << 20, "config")
    assert e.value.limit == 1 << 20 and isinstance(e.value, SymgptError)
    with pytest.raises(SymgptError, match="larger than 1024 KiB; a config.json is a few KiB"):
        read_json(big)


# --- architectures: what each reader counts -------------------------------------------------------
@pytest.mark.parametrize("model_type", sorted(readers()))
def test_a_reader_reads_the_classes_it_declares_and_refuses_others(model_type):
    r = readers()[model_type]
    for cls in r.architectures:
        # without a text_config transformers builds a decoder of defaults of its own: refused, not guessed
        if model_type in ("paligemma",
                          # vision--language types whose default sub-configurations differ from their classes'
                          "aria", "cohere2_vision", "deepseek_vl", "deepseek_vl_hybrid", "got_ocr2", "internvl",
                          "lfm2_vl", "lighton_ocr", "mistral3", "pp_chart2table", "qianfan_ocr",
                          "granite_docling", "lfm3_vl",
                          # speech models whose audio tower is held: a text_config names their decoder
                          "qwen3_asr", "granite_speech", "granite_speech_plus",
                          # a decoder of another family beside a held tower: a text_config names the decoder
                          "ovis2", "omniasr", "fun_asr_nano", "nemotron_h_omni", "janus"):
            with pytest.raises(SymgptError, match="without its text_config is not modelled"):
                read_config({"model_type": model_type, "architectures": [cls]}, "x")
            continue
        # an encoder--decoder of any two types: the encoder's type comes from the file, none is guessed
        if model_type in ("vision-encoder-decoder", "speech-encoder-decoder"):
            with pytest.raises(SymgptError, match="encoder is of model_type 'None' is not modelled"):
                read_config({"model_type": model_type, "architectures": [cls]}, "x")
            continue
        assert read_config({"model_type": model_type, "architectures": [cls]}, "x").family in families()
    with pytest.raises(SymgptError, match=f"architectures names {model_type}ForTokenSorting, which symgpt does "
                                          f"not model for model_type {model_type}"):
        read_config({"model_type": model_type, "architectures": [f"{model_type}ForTokenSorting"]}, "x")


BART_CAUSAL = {"model_type": "bart", "architectures": ["BartForCausalLM"]}


def test_bart_for_causal_lm_is_the_decoder_alone_not_the_encoder_decoder():
    """transformers' BartForCausalLM is the decoder alone (with cross-attention weights it never
    runs on token ids alone) and an LM head: another count than the encoder--decoder, counted by
    the seq2seq_decoder family, never as BartForConditionalGeneration."""
    causal = params(build({"model_type": "bart"}, "BartForCausalLM"))
    whole = params(build({"model_type": "bart"}, "BartForConditionalGeneration"))
    assert causal == 254_084_096 and whole == 406_291_456
    assert from_config({"model_type": "bart"}, "x").params.value == whole
    m = from_config(BART_CAUSAL, "x")
    assert m.family.name == "seq2seq_decoder" and m.params.value == causal
    assert any("BartForCausalLM holds each decoder layer's cross-attention" in n for n in m.notes)


def test_bart_for_causal_lm_answers_with_its_note(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(BART_CAUSAL))
    assert main(["params", str(path)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "254,084,096" in out and "runs it only with encoder_hidden_states" in " ".join(out.split())

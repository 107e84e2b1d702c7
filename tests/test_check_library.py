"""symgpt check: the library of published formulas against the derivations.

The expected verdicts below are read off the sources (conventions.md, the seeds), not symgpt:
Megatron's P omits the final LayerNorm (§9.9: -2d); Kaplan's N excludes biases and norms
(§1: 13d per block for GPT-2: lecture note 7.3's table minus its 12d² weights); lesson LM4-T5's count has
no Q/K/V biases ("would add 3d per block"); Kaplan drops the context term from 6N (§1).
"""

from __future__ import annotations

import json

import pytest
import sympy

from symgpt.cli import main
from symgpt.core.exprparse import parse_expression
from symgpt.query import LIBRARY, check, check_library, formula

DOCUMENTED = [
    ("megatron-params", "-2*d"),
    ("kaplan-N", "-13*L*d"),
    ("kaplan-N-no-bias", "-2*L*d"),
    ("raschka-on-gpt2", "-3*L*d"),
    ("gpt2-rule", "-13*L*d - T_max*d"),
    ("kaplan-6N", "-6*L*T*d"),
    ("gpt2-exact", "0"),
    ("raschka-tied", "0"),
    ("raschka-untied", "0"),
    ("raschka-163M", "0"),
    ("kaplan-forward", "0"),
    ("megatron-F", "0"),
    ("korthikanti-model-flops", "0"),
    ("korthikanti-eq8", "0"),
    ("chinchilla-forward", "0"),
    ("palm", "0"),
    ("korthikanti-activations", "0"),
    ("zero-16psi", "0"),
    ("kv-cache", "0"),
]


@pytest.mark.parametrize("name,difference", DOCUMENTED)
def test_documented_verdicts(name, difference):
    c = check(formula(name))
    assert c.comparison is not None, c.error
    assert sympy.expand(c.comparison.difference - parse_expression(difference)) == 0


def test_whole_library_checks_and_matches_its_sources():
    rows = check_library()
    assert len(rows) == len(LIBRARY) >= 30
    assert [c.formula.name for c in rows if c.comparison is None] == []
    assert [c.formula.name for c in rows if c.as_expected is False] == []
    assert len({f.name for f in LIBRARY}) == len(LIBRARY)
    for f in LIBRARY:
        assert f.source and f.convention and f.quantity


def test_check_filter():
    names = [c.formula.name for c in check_library(match="kaplan")]
    assert names and all("kaplan" in n or "Kaplan" in formula(n).source for n in names)


def test_check_cli_table_and_json(capsys):
    assert main(["check", "--strict"]) == 0
    out = capsys.readouterr().out
    assert "Narayanan et al. 2021" in out and "differs by -2·d" in out
    assert main(["check", "megatron", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["formulas"]
    mp = next(r for r in rows if r["name"] == "megatron-params")
    assert mp["equal"] is False and mp["difference"] == "-2*d" and mp["as_expected"] is True
    assert set(mp) >= {"formula", "source", "convention", "verdict"}

"""Start-up: ``symgpt --help`` (and each command's ``--help``) imports neither SymPy nor networkx
nor NumPy; ``import symgpt`` is as light. The engine loads on first use. (Imports are checked in
a fresh interpreter; no timings are asserted.)"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from symgpt.cli import COMMANDS

HEAVY = ("sympy", "networkx", "numpy", "torch", "jinja2", "graphviz")

_PROBE = """
import json, sys
from symgpt.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r}))))
"""


def heavy_imports(argv) -> list[str]:
    code = _PROBE.format(argv=list(argv), heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _present():
    import importlib.util

    return [c for c in COMMANDS if importlib.util.find_spec(f"symgpt.cli.cmd_{c}")]


def test_help_imports_no_engine():
    assert heavy_imports(["--help"]) == []


def test_command_modules_import_no_engine_at_top_level():
    # 'symgpt --help' imports every cmd_*.py (for its one-line HELP): their top level must be light
    code = ("import importlib, json, sys\n"
            f"for c in {_present()!r}: importlib.import_module('symgpt.cli.cmd_' + c)\n"
            f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("command", ["sweep", "params"])
def test_command_help_imports_no_engine(command):
    assert command in _present()
    assert heavy_imports([command, "--help"]) == []


def test_import_symgpt_is_light_and_the_api_loads_on_use():
    code = ("import sys, symgpt\nlight = 'sympy' not in sys.modules\n"
            "assert symgpt.load('gpt2-small').params == 124_439_808\n"
            "from symgpt import Quantity, symbols, SymgptError\n"
            "print(light, 'sympy' in sys.modules, symbols.d, Quantity.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "d", "Quantity"]

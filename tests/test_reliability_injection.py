"""No user text ever runs. Attack strings go through every slot of every CLI
command (positionals, every option that takes a value, the fields of NAME=VALUE options) and
every API entry point; each gets exit 0 or a one-line exit 2 (SymgptError in the API), the
payloads never run (no marker file appears), and symgpt's own code never hands text to
eval/exec/compile/sympify/parse_expr or a shell (``attacks.code_guard``)."""

import ast
import json
from pathlib import Path

import pytest

import symgpt
import symgpt.documents.report
import symgpt.documents.reportparts.core
from symgpt.core.errors import SymgptError

from attacks import (INERT, base_argv, check_api_error, check_cli, code_guard, commands,
                     marker_files, memory_cap, payloads, run_cli, variants)

ROOT = Path(__file__).resolve().parent.parent

#: a spread of the inert strings: control characters, huge and nested input, numbers that are not
#: sizes, TeX/jinja/DOT/HTML syntax, Unicode look-alikes (the fuzz tests send the rest)
SAMPLE = [s for s in INERT if s in {
    "", "-", "=", "d==1", "__class__", "lambda: 0", "Symbol('x')", "oo", "NaN", "None", "True",
    r"\input{/etc/passwd}", "^^5cinput", "{{ 7*7 }}", '"];evil[label="x', "<script>alert(1)</script>",
    "a\nb", "nul\x00byte", "\x1b[31mred\x1b[0m", "\u202eevil", "ｄ", "\udcff", "x" * 100_000,
    "(" * 1000 + ")" * 1000, "9**9**9**9", "2**100000", "1e999999", "0", "-1", "1.5", "1/0", "d/0",
    "d", "params", "~", "%s%s%n",
}]


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """Run in an empty folder (outputs land there); the report writes its core part only."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(symgpt.documents.report, "REPORT_PARTS", (symgpt.documents.reportparts.core,))
    markers = tmp_path / "markers"
    markers.mkdir()
    return markers


@pytest.mark.parametrize("command", sorted(commands()))
def test_base_command_line_works(command, sandbox):
    r = run_cli(base_argv(command))
    check_cli(r, allow=(0,))


@pytest.mark.parametrize("command", sorted(commands()))
def test_attacks_through_every_cli_slot(command, sandbox):
    runs = 0
    with code_guard(), memory_cap():
        for attack in payloads(sandbox) + SAMPLE:
            for argv in variants(command, attack):
                # verify's exit 1 is its answer "the checkpoint differs" (a flag set to a value the
                # checkpoint does not hold), never a fault
                check_cli(run_cli(argv, seconds=20), allow=(0, 1, 2) if command == "verify" else (0, 2))
                runs += 1
    assert marker_files(sandbox) == []
    assert runs == sum(len(variants(command, a)) for a in payloads(sandbox) + SAMPLE)


def test_help_and_version_are_clean(sandbox):
    for argv in (["--help"], ["--version"], *([c, "--help"] for c in commands())):
        check_cli(run_cli(argv), allow=(0,))


# --- config files: attack strings as file names and as field values ----------------------------
FIELDS = ["model_type", "n_layer", "n_embd", "n_head", "vocab_size", "n_positions", "n_inner",
          "activation_function", "tie_word_embeddings", "architectures", "_name_or_path", "x"]


def test_attacks_in_config_fields(sandbox):
    with code_guard(), memory_cap():
        for attack in payloads(sandbox) + SAMPLE:
            for field in FIELDS:
                cfg = {"model_type": "gpt2", "n_layer": 2, field: attack}
                path = sandbox.parent / "config.json"
                path.write_text(json.dumps(cfg))
                r = run_cli(["params", str(path), "--json"])
                check_cli(r)
                if r.code == 0:  # an ignored or noted field: the attack is data in the output
                    json.loads(r.out)
    assert marker_files(sandbox) == []


def test_attacks_as_config_file_names(sandbox):
    body = json.dumps({"model_type": "gpt2", "n_layer": 2})
    with code_guard():
        for attack in payloads(sandbox) + SAMPLE:
            name = attack.replace("/", "_").replace("\x00", "_")[:200] + ".json"
            try:
                (sandbox.parent / name).write_text(body)
            except (OSError, UnicodeEncodeError):
                continue  # a name the file system refuses: nothing to load
            for argv in (["params", "./" + name, "--json"], ["shapes", "./" + name],
                         ["table", "./" + name, "--format", "csv"]):
                r = run_cli(argv)
                check_cli(r)
    assert marker_files(sandbox) == []


# --- the API ------------------------------------------------------------------------------------
def _api_calls(a):
    m = symgpt.load("gpt2-small")
    yield "load", lambda: symgpt.load(a)
    yield "load(**{a: 1})", lambda: symgpt.load("gpt2-small", **{a: 1})
    yield "load(d=a)", lambda: symgpt.load("gpt2-small", d=a)
    yield "load(tied=a)", lambda: symgpt.load("gpt2-small", tied=a)
    yield "with_(**{a: 1})", lambda: m.with_(**{a: 1})
    yield "with_(T=a)", lambda: m.with_(T=a)
    yield "quantity(a)", lambda: m.quantity(a)
    yield "quantity(convention=a)", lambda: m.quantity("flops.forward", convention=a)
    yield "quantity(**{a: 1})", lambda: m.quantity("flops.forward", **{a: 1})
    yield "shapes(**{a: 1})", lambda: m.shapes(**{a: 1})
    yield "params.part(a)", lambda: m.params.part(a)
    yield "params[a]", lambda: m.params[a]
    yield "params.at(**{a: 1})", lambda: m.params.at(**{a: 1})
    from symgpt.core import exprparse

    yield "parse_expression", lambda: exprparse.parse_expression(a)
    yield "parse_condition", lambda: exprparse.parse_condition(a, None)
    yield "parse_value", lambda: exprparse.parse_value(a)
    yield "parse_assignment", lambda: exprparse.parse_assignment(a)
    from symgpt.core.symbols import symbol

    yield "symbol", lambda: symbol(a)
    from symgpt import query

    q = m.params
    yield "select(a)", lambda: query.select(m, a)
    yield "select(part=a)", lambda: query.select(m, "params", part=a)
    yield "rule(regime=a)", lambda: query.rule(q, a)
    yield "dominance(regime=a)", lambda: query.dominance(q, a)
    yield "crossover(symbol=a)", lambda: query.crossover(q, a)
    yield "crossover(part=a)", lambda: query.crossover(q, "T", part=a)
    yield "compare(formula=a)", lambda: query.compare(q, a)
    yield "holds(quantity=a)", lambda: query.holds(m, a, "1")
    yield "holds(formula=a)", lambda: query.holds(m, "params", a)
    yield "formula(a)", lambda: query.formula(a)
    yield "check_library(match=a)", lambda: query.check_library(match=a)
    yield "parse_regime(a)", lambda: query.parse_regime(a)
    from symgpt.core.notation import notation

    yield "notation(a)", lambda: notation(a)


def test_attacks_through_the_api(sandbox):
    failures = []
    with code_guard(), memory_cap():
        for a in payloads(sandbox) + SAMPLE:
            for what, call in _api_calls(a):
                try:
                    call()
                except SymgptError as e:
                    try:
                        check_api_error(e, what)
                    except AssertionError as bad:
                        failures.append(str(bad))
                except Exception as e:  # noqa: BLE001  (anything else is a bug)
                    failures.append(f"{what} with {a[:40]!r}: {type(e).__name__}: {str(e)[:200]}")
    assert marker_files(sandbox) == []
    assert not failures, "\n".join(sorted(set(failures))[:40])


def test_attacks_in_notation_profile_files(sandbox):
    from symgpt.core.notation import notation

    failures = []
    with code_guard():
        for a in payloads(sandbox) + SAMPLE:
            for body in (json.dumps({"name": "p", "symbols": {"L": a}}), json.dumps({"name": a}),
                         json.dumps({"symbols": {a: "N"}}), f"L = {a}\n", f"{a} = N\n", a):
                path = sandbox.parent / "profile.txt"
                path.write_text(body, errors="surrogatepass")
                try:
                    notation(str(path))
                except SymgptError as e:
                    check_api_error(e, "notation file")
                except Exception as e:  # noqa: BLE001
                    failures.append(f"{body[:60]!r}: {type(e).__name__}: {str(e)[:200]}")
                r = run_cli(["latex", "gpt2-small", "--what", "params", "--notation", str(path)])
                check_cli(r)
                assert "\\write18" not in r.out and "\\input{" not in r.out
    assert marker_files(sandbox) == []
    assert not failures, "\n".join(failures[:20])


# --- static audit: where symgpt could run text ------------------------------------------------------
#: every call in symgpt/ to a function that can run or parse code, with the reason it is safe;
#: (file, function called, source of the first argument)
AUDITED: dict = {
    # none today: symgpt builds SymPy objects directly (sympy.Integer, symbols.CANONICAL) and
    # parses user text with symgpt.core.exprparse only. A new entry needs a reason, e.g.
    # ("symgpt/x.py", "sympify", "value"): "value is an int derived by symgpt, never text",
}
RISKY_OWNERS = {"eval": None, "exec": None, "compile": None, "__import__": None, "sympify": None,
                "S": None, "parse_expr": None, "system": "os", "popen": "os", "load": "pickle",
                "loads": "pickle", "unsafe_load": "yaml", "run_path": "runpy"}


def _calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
            yield node, name, owner


def test_no_unaudited_code_execution_in_symgpt():
    found = {}
    for path in sorted((ROOT / "symgpt").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node, name, owner in _calls(tree):
            if name not in RISKY_OWNERS:
                continue
            want = RISKY_OWNERS[name]
            if name == "compile" and owner == "re":
                continue  # a regular expression
            if want is not None and owner != want:
                continue
            if name == "S" and not (node.args and isinstance(node.args[0], ast.Constant)
                                    and isinstance(node.args[0].value, str)):
                continue  # S.Zero-style singletons are attributes, S(x) of a non-string is a cast
            arg = ast.unparse(node.args[0]) if node.args else ""
            found[(rel, name, arg)] = f"{rel}:{node.lineno}"
    unaudited = {k: v for k, v in found.items() if k not in AUDITED}
    assert not unaudited, "calls that may run text, not audited in this test:\n" + "\n".join(
        f"  {where}: {name}({arg})" for (rel, name, arg), where in sorted(unaudited.items(), key=str))
    stale = sorted(set(AUDITED) - set(found), key=str)
    assert not stale, f"audited calls that are gone (remove them from AUDITED): {stale}"
    for (rel, name, arg), where in found.items():
        assert not (isinstance(arg, str) and arg.startswith(("'", '"'))), f"{where}: {name} of a string literal"


def test_subprocess_runs_only_argument_lists():
    """The one subprocess (Graphviz's dot) runs an argument list, never a shell."""
    for path in sorted((ROOT / "symgpt").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node, name, owner in _calls(tree):
            if owner == "subprocess":
                kw = {k.arg: ast.unparse(k.value) for k in node.keywords}
                assert kw.get("shell", "False") == "False", f"{path}:{node.lineno} uses a shell"
                assert node.args and isinstance(node.args[0], (ast.List, ast.Tuple)), \
                    f"{path}:{node.lineno}: subprocess with a non-list command"


def test_templates_are_never_built_from_text():
    """jinja2 templates come from symgpt's template folder, never from a string (from_string,
    Template(...)), so user text is only ever data inside them."""
    for path in sorted((ROOT / "symgpt").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node, name, owner in _calls(tree):
            assert name not in ("from_string", "Template"), f"{path}:{node.lineno}: {name}"


# --- the harness itself: the guards would catch what they look for -------------------------------
def test_code_guard_catches_text_reaching_sympify_or_eval_from_symgpt():
    from attacks import SYMGPT_DIR, CodeRan

    for body in ("import sympy; sympy.sympify('x')", "eval('1')", "import os; os.system('true')"):
        code = compile(body, SYMGPT_DIR + "imaginary_module.py", "exec")  # runs "as" symgpt code
        with code_guard(), pytest.raises(CodeRan):
            exec(code, {})


def test_payloads_would_leave_markers(sandbox):
    """The payloads are live: run on purpose (here, by the test), they do leave their marker."""
    eval(payloads(sandbox)[0])  # __import__('os').system('touch .../py_system')
    assert marker_files(sandbox) == ["py_system"]

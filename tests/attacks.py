"""Attack strings and a harness that sends them through every CLI command and API entry point.

``payloads(marker_dir)`` are strings that *would* create a file in *marker_dir* if anything ran
them (Python eval/exec, a shell, TeX's \\write18, a template engine); ``INERT`` are hostile or
absurd strings that must simply be refused or shown as data. ``run_cli`` runs ``symgpt`` in
process (one parser, built once) and ``check_cli`` asserts the command line's contract: exit 0 or 2,
a single ``symgpt: error:`` line on 2, never a traceback or an ``internal error``.
``code_guard`` turns any call of eval/exec/compile/sympify/parse_expr/os.system/a shell made
*from symgpt's own code* with text into a test failure. The subprocess harness for hostile runs
(time, memory, files touched) is ``harness.py``.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import resource
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import sympy

import symgpt
from symgpt import cli

SYMGPT_DIR = os.path.dirname(os.path.abspath(symgpt.__file__)) + os.sep


def payloads(marker_dir: Path) -> list[str]:
    """Strings that create a file in *marker_dir* if anything executes them."""
    m = str(marker_dir)
    return [
        f"__import__('os').system('touch {m}/py_system')",
        f"exec(\"open('{m}/py_exec','w')\")",
        f"eval(\"__import__('os').system('touch {m}/py_eval')\")",
        f"open('{m}/py_open','w')",
        f"__import__('pathlib').Path('{m}/py_path').touch()",
        f"[c for c in ().__class__.__bases__[0].__subclasses__() if c.__name__=='Popen'][0]"
        f"(['touch','{m}/py_subclasses'])",
        f"(lambda: __import__('os').system('touch {m}/py_lambda'))()",
        f"$(touch {m}/sh_subst)",
        f"`touch {m}/sh_backtick`",
        f"x; touch {m}/sh_semicolon",
        f"x && touch {m}/sh_and",
        f"${{IFS}}touch${{IFS}}{m}/sh_ifs",
        f"\\immediate\\write18{{touch {m}/tex_write18}}",
        f"\\write18{{touch {m}/tex_write18b}}",
        f"{{{{ cycler.__init__.__globals__.os.popen('touch {m}/jinja_popen').read() }}}}",
        f"{{% set x = cycler.__init__.__globals__.os.system('touch {m}/jinja_stmt') %}}",
        f"<< cycler.__init__.__globals__.os.system('touch {m}/jinja_alt') >>",
        f"\"];x[label=<<img src='{m}/dot_img'/>>];y[label=\"",
    ]


#: hostile or absurd data: refused or printed as inert text, never run, never a crash
INERT = [
    "", " ", "\t", "-", "--", "=", "==", "d=", "=1", "d==1",
    "__class__", "__dict__", "__builtins__", "__import__", "self", "os.system", "sys.modules",
    "().__class__.__bases__[0].__subclasses__()", "lambda: 0", "lambda x: x",
    "Symbol('x')", "sympify('x')", "S('1')", "Integer(3)", "oo", "zoo", "nan", "NaN", "inf", "None",
    "True", "true", "FALSE", "yes",
    r"\input{/etc/passwd}", r"\include{x}", r"\def\x{y}\x", r"\catcode`\^=7", "^^5cinput", "%", "#1",
    "{{ 7*7 }}", "{% for i in range(3) %}x{% endfor %}", "${PATH}", "%s%s%n", "{0.__class__}",
    '"];evil[label="x', "<script>alert(1)</script>", "<b>&amp;</b>", "]]></svg>", "--><!--",
    "a\nb", "a\r\nb", "nul\x00byte", "\x1b[31mred\x1b[0m", "\u202eevil", "\ufeffd", "ｄ", "d\u0300",
    "\U0001f642", "\udcff",
    "x" * 100_000, "1" * 5000, "(" * 1000 + ")" * 1000, "-" * 3000 + "1",
    "9**9**9**9", "9^9^9^9", "2**100000", "10**10**10", "1e999999", "1e-999999", "6e9", "1_000",
    "0", "-1", "-0", "1.5", "0x10", "1/0", "0/0", "0**-1", "d/0", "+1", "١٢", "½",
    "d", "L", "T_max", "gpt2-small", "params", "flops.train", "memory.total", "blocks",
    "d=1;import os", "../../../etc/passwd", "%2e%2e/x", "~", "*", "?", "[a-z]",
]

#: commands' positional arguments: a valid value for each, by dest
POSITIONAL = {"model": "gpt2-small", "quantity": "params", "expr": "12*L*d^2 + 13*L*d", "match": "gpt2", "action": "path"}

#: a checkpoint the verify command matches: a one-layer LlamaForCausalLM saved by transformers
#: (tests/configs/checkpoints/tiny-llama, 3,376 parameters)
TINY_CHECKPOINT = str(Path(__file__).resolve().parent / "configs" / "checkpoints" / "tiny-llama")

POSITIONAL_FOR = {"crossover": {"quantity": "flops.forward"}, "verify": {"model": TINY_CHECKPOINT}}

#: what each command needs besides its positionals to succeed on gpt2-small
REQUIRED = {
    "latex": ["--what", "params"],
    "rule": ["--as", "d"],
    "crossover": ["--as", "T"],
    "report": ["-o", "rep", "--no-pdf"],
    "sweep": ["--grid", "L=1:2:1"],
    "plan": ["--set", "T=128", "--devices", "2", "--global-batch", "2", "--device-memory", "80e9", "--peak", "1e14",
             "--link-bandwidth", "1e11", "--node-bandwidth", "1e10", "--recompute", "none", "--vp", "1",
             "--microbatch", "1"],
    "optimal": ["--set", "T=1024", "--compute", "1e21"],
    "schedule": ["--pp", "2", "--microbatches", "2"],
}

#: options that name a file to write: only relative, harmless names are sent there
OUTPUT_DESTS = ("output",)


def output_safe(text: str) -> bool:
    """True for a string that, used as an output path in the current (temporary) folder, can
    only create files below it."""
    return (bool(text.strip()) and not text.startswith(("/", "~", "-")) and ".." not in text
            and "\x00" not in text and len(text) < 200)


@dataclass
class Result:
    argv: list
    code: int
    out: str
    err: str


_PARSER = None


def _cached_parser(*args, **kwargs):
    """The full parser, built once (``main`` may ask for a one-command parser: same syntax)."""
    global _PARSER
    if _PARSER is None:
        _PARSER = _original_build_parser()
    return _PARSER


_original_build_parser = cli.build_parser


class Hang(BaseException):
    """A call ran past its time limit (raised by SIGALRM; main() does not catch it)."""


def _on_alarm(*_):
    raise Hang()


def run_cli(argv: list[str], seconds: float = 30) -> Result:
    """``symgpt ARGV`` in process, with its stdout/stderr captured (the parser is built once).
    A run longer than *seconds* is stopped and reported as exit -1 ("hang")."""
    out, err = io.StringIO(), io.StringIO()
    cli.build_parser = _cached_parser
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(list(argv))
            except SystemExit as e:  # --help / --version
                code = e.code if isinstance(e.code, int) else 0
    except Hang:
        code = -1
        err.write(f"hang: still running after {seconds} s\n")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        cli.build_parser = _original_build_parser
    return Result(list(argv), code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def memory_cap(extra: int = 3 << 30):
    """Cap this process's address space at its current size + *extra* bytes, so that a runaway
    computation fails with MemoryError (an ``internal error``) instead of exhausting the machine."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        size = int(f.read().split()[0]) * resource.getpagesize()
    cap = size + extra if hard == resource.RLIM_INFINITY else min(size + extra, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


MAX_MESSAGE = 2000  # characters of one error line


def check_cli(r: Result, allow=(0, 2)) -> None:
    """The contract: a clean exit (0 or 2), one short ``symgpt: error:`` line on 2, no traceback,
    no ``internal error`` (exit 1)."""
    shown = repr(r.argv)[:300]
    assert "Traceback" not in r.err and "Traceback" not in r.out, f"{shown}: traceback\n{r.err[-2000:]}"
    assert "internal error" not in r.err, f"{shown}: {r.err.strip()[:1000]}"
    assert r.code in allow, f"{shown}: exit {r.code}, stderr {r.err.strip()[:500]!r}"
    if r.code == 2:
        lines = r.err.splitlines()
        errors = [line for line in lines if line.startswith("symgpt: error: ")]
        assert len(errors) == 1 and lines[-1] == errors[0], f"{shown}: {r.err[:500]!r}"
        assert len(errors[0]) <= MAX_MESSAGE, f"{shown}: message of {len(errors[0])} characters"
        assert r.out == "", f"{shown}: printed output before failing: {r.out[:200]!r}"


def check_api_error(exc: BaseException, what: str) -> None:
    """An API call may fail only with a one-line SymgptError."""
    from symgpt.core.errors import SymgptError

    assert isinstance(exc, SymgptError), f"{what}: {type(exc).__name__}: {str(exc)[:300]}"
    assert len(str(exc)) <= MAX_MESSAGE, f"{what}: message of {len(str(exc))} characters: {str(exc)[:150]}"


# --- the CLI's slots ---------------------------------------------------------------------------
def commands() -> dict:
    """command name -> its argparse sub-parser."""
    parser = _cached_parser()
    return dict(parser._subparsers._group_actions[0].choices)


def base_argv(name: str) -> list[str]:
    """A valid command line for *name* on gpt2-small."""
    sub = commands()[name]
    argv = [name]
    for a in sub._actions:
        if not a.option_strings and a.dest in POSITIONAL and (a.required or a.nargs == "?"):
            argv.append(POSITIONAL_FOR.get(name, {}).get(a.dest, POSITIONAL[a.dest]))
        elif not a.option_strings and a.dest != "help":
            raise AssertionError(f"tests/attacks.py: no valid value for {name}'s {a.dest}")
    return argv + REQUIRED.get(name, [])


def _positional_index(name: str, dest: str) -> int:
    sub = commands()[name]
    dests = [a.dest for a in sub._actions if not a.option_strings and a.dest != "help"]
    return 1 + dests.index(dest)


#: for options whose value has an inner syntax, where an attack can hide
_INNER = {
    "--set": ["{}", "d={}", "{}=1", "tied={}", "B={}"],
    "--let": ["{}", "N={}", "{}=12*L*d^2"],
    "--option": ["{}", "precision={}", "{}=1"],
    "--grid": ["{}", "d={}", "{}=1:2:1", "L=1:{}:1", "L={},2"],
    "--as": ["{}", "d:{}", "{}:2"],
    "--columns": ["{}", "params,{}"],
    "--part": ["{}", "blocks,{}"],
    "--against": ["{}"],
    "--where": ["{}", "params < {}", "{} < 1"],
}


def variants(name: str, attack: str) -> list[list[str]]:
    """Command lines of *name* with *attack* in each of its slots (positionals, every option
    that takes a value, and the inner fields of NAME=VALUE-style options)."""
    sub = commands()[name]
    base = base_argv(name)
    out = []
    for a in sub._actions:
        if a.dest == "help":
            continue
        if not a.option_strings:
            argv = list(base)
            argv[_positional_index(name, a.dest)] = attack
            out.append(argv)
            continue
        if a.nargs == 0:
            continue
        if a.dest in OUTPUT_DESTS and not output_safe(attack):
            continue
        flag = a.option_strings[-1]
        for pattern in _INNER.get(flag, ["{}"]):
            value = pattern.replace("{}", attack)
            out.append(base + [f"{flag}={value}" if value.startswith("-") else flag, *(
                [] if value.startswith("-") else [value])])
    return out


# --- a guard on code execution -----------------------------------------------------------------
class CodeRan(AssertionError):
    pass


def _from_symgpt(depth: int = 2) -> str | None:
    """The symgpt source file of the caller *depth* frames up, or None."""
    frame = sys._getframe(depth)
    name = frame.f_code.co_filename
    return f"{name}:{frame.f_lineno}" if name.startswith(SYMGPT_DIR) else None


@contextlib.contextmanager
def code_guard():
    """Fail (CodeRan) if symgpt's own code calls eval/exec/compile/__import__ on text,
    sympify/S/parse_expr on text, os.system/os.popen, or a subprocess through a shell."""
    saved = {}

    def patch(owner, attr, check):
        original = getattr(owner, attr)
        saved[(owner, attr)] = original

        def wrapper(*args, **kwargs):
            where = _from_symgpt()
            if where and check(*args, **kwargs):
                raise CodeRan(f"{where} called {attr} with {str(args[:1])[:200]}")
            return original(*args, **kwargs)

        setattr(owner, attr, wrapper)

    text_first = lambda *a, **k: bool(a) and isinstance(a[0], (str, bytes))  # noqa: E731
    always = lambda *a, **k: True  # noqa: E731
    for attr in ("eval", "exec", "compile"):
        patch(builtins, attr, text_first)
    patch(sympy, "sympify", text_first)
    patch(sys.modules["sympy.core.sympify"], "sympify", text_first)
    import sympy.parsing.sympy_parser as sp

    patch(sp, "parse_expr", always)
    patch(os, "system", always)
    patch(os, "popen", always)
    patch(subprocess, "Popen", lambda *a, **k: bool(k.get("shell")) or isinstance(a[0] if a else k.get("args"), str))
    try:
        yield
    finally:
        for (owner, attr), original in saved.items():
            setattr(owner, attr, original)


def marker_files(marker_dir: Path) -> list[str]:
    return sorted(p.name for p in Path(marker_dir).iterdir())


# --- paths the file system refuses as paths ----------------------------------------------------
def bad_paths(work: Path) -> dict:
    """name -> (a path under *work*, the errno the file system answers it with): a name longer
    than the file system allows (ENAMETOOLONG), a folder of such a name, a whole path past
    PATH_MAX, a symlink loop (ELOOP) and a file used as a folder (ENOTDIR). Made in *work*."""
    import errno

    (work / "loop-a").symlink_to("loop-b")
    (work / "loop-b").symlink_to("loop-a")
    (work / "a-file").write_text("not a folder\n")
    long = "x" * 300
    return {
        "long-name": (str(work / long), errno.ENAMETOOLONG),
        "long-folder": (str(work / long / "a"), errno.ENAMETOOLONG),
        "long-path": (str(work / "/".join(["y" * 200] * 25) / "a"), errno.ENAMETOOLONG),
        "symlink-loop": (str(work / "loop-a" / "a"), errno.ELOOP),
        "file-as-folder": (str(work / "a-file" / "a"), errno.ENOTDIR),
    }


#: command lines with a user path in them ("{}", a suffix appended where the command needs one):
#: what is read (configs, notation files) and what is written (-o, --figure, report folders)
PATH_SLOTS = [
    ["params", "{}.json"],
    ["params", "{}"],  # a checkpoint folder
    ["report", "{}.json", "--no-pdf", "-o", "rep"],
    ["compare", "{}.json", "params", "1"],
    ["latex", "gpt2-small", "--what", "total", "--notation", "{}.txt"],
    ["latex", "gpt2-small", "--what", "total", "-o", "{}.tex"],
    ["table", "gpt2-small", "-o", "{}.md"],
    ["sweep", "gpt2-small", "--grid", "L=1:2:1", "-o", "{}.csv"],
    ["graph", "gpt2-small", "-o", "{}.svg"],
    ["graph", "gpt2-small", "-o", "{}.dot"],
    ["html", "gpt2-small", "-o", "{}.html"],
    ["report", "gpt2-small", "--no-pdf", "-o", "{}"],
    ["schedule", "--pp", "2", "--microbatches", "2", "--format", "svg", "-o", "{}.svg"],
    ["infer", "gpt2-small", "--hardware", "a100-80gb", "--set", "B=1", "--set", "T=128",
     "--figure", "{}.svg"],
    ["plan", "gpt2-small", *REQUIRED["plan"], "--figure", "{}.svg"],
]

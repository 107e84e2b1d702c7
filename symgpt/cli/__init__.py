"""The ``symgpt`` command line. One module per command (``cmd_<name>.py``) with ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``; commands import the engine lazily so that
``symgpt --help`` starts fast. Errors are one line on stderr and exit code 2 (a full or closed
stdout included); SIGTERM and Ctrl-C unwind like an error (temporaries removed, TeX and
Graphviz children killed) and exit 143 and 130."""

from __future__ import annotations

import argparse
import errno
import gc
import os
import re
import signal
import sys

from ..core.errors import SymgptError
from ..core.lazy import Ref

#: digits Python may convert between int and str in one number (its default, 4,300, is less
#: than exact answers can have: 12·L·d² with L and d near 10¹⁰⁰⁰); past this, a one-line error
MAX_DIGITS = 100_000

#: a word starting with '-' that is an expression ("-2*d", "-d^2", "-(L+1)"), not an option
_EXPRESSION = re.compile(r"-[\s\d.(]|-[^=]*[*/^()+<>!×·\s]")

#: command name -> its module (``cmd_<name>``), in the order ``--help`` lists them: an explicit
#: table of lazy references (``symgpt.core.lazy.Ref``). ``symgpt --help`` imports every module (for its
#: one-line HELP; their top levels import no engine); running a command imports its module alone.
COMMANDS = {
    "models": Ref("symgpt.cli.cmd_models"), "params": Ref("symgpt.cli.cmd_params"),
    "shapes": Ref("symgpt.cli.cmd_shapes"), "flops": Ref("symgpt.cli.cmd_flops"),
    "memory": Ref("symgpt.cli.cmd_memory"), "comm": Ref("symgpt.cli.cmd_comm"),
    "time": Ref("symgpt.cli.cmd_time"), "plan": Ref("symgpt.cli.cmd_plan"),
    "schedule": Ref("symgpt.cli.cmd_schedule"), "optimal": Ref("symgpt.cli.cmd_optimal"),
    "infer": Ref("symgpt.cli.cmd_infer"), "hardware": Ref("symgpt.cli.cmd_hardware"),
    "rule": Ref("symgpt.cli.cmd_rule"), "dominance": Ref("symgpt.cli.cmd_dominance"),
    "crossover": Ref("symgpt.cli.cmd_crossover"), "compare": Ref("symgpt.cli.cmd_compare"),
    "check": Ref("symgpt.cli.cmd_check"), "latex": Ref("symgpt.cli.cmd_latex"),
    "table": Ref("symgpt.cli.cmd_table"), "graph": Ref("symgpt.cli.cmd_graph"),
    "html": Ref("symgpt.cli.cmd_html"), "sweep": Ref("symgpt.cli.cmd_sweep"),
    "report": Ref("symgpt.cli.cmd_report"), "cache": Ref("symgpt.cli.cmd_cache"),
    "verify": Ref("symgpt.cli.cmd_verify"),
    # serving: paged-KV capacity, speculative decoding, cost
    "serve": Ref("symgpt.cli.cmd_serve"),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse would print the usage first)
        import re

        if message.startswith("unrecognized arguments: "):
            # 'symgpt flops gpt2-small T=1024': a binding typed without --set
            loose = [a for a in message.split(": ", 1)[1].split() if re.fullmatch(r"[A-Za-z_]\w{0,40}=\S+", a)]
            if loose:
                message += "; did you mean " + " ".join(f"--set {a}" for a in loose) + "?"
        if re.search(r"(argument --hardware: expected one argument|unrecognized arguments: .*--hardware\b)",
                     message):
            message += ("; --hardware NAME names a device profile (symgpt hardware; on time, plan, infer, graph); "
                        "--hfu counts the recomputed forward (hardware FLOPs)")
        raise SymgptError(message.replace("\n", " "))

    def _parse_optional(self, arg_string):
        # "-2*d" or "-d^2" is an expression (compare's EXPR), not an unknown option
        if arg_string in self._option_string_actions:
            return super()._parse_optional(arg_string)
        if _EXPRESSION.match(arg_string):
            return None
        if re.fullmatch(r"-[A-Za-z_]\w*", arg_string) and not self._get_option_tuples(arg_string):
            return None  # "-d": no option of this command is spelt so; an expression
        return super()._parse_optional(arg_string)

    def _get_values(self, action, arg_strings):
        # argparse turns '--opt=--' into an empty list where one value is expected
        values = super()._get_values(action, arg_strings)
        if action.option_strings and action.nargs is None and isinstance(values, list):
            self.error(f"argument {'/'.join(action.option_strings)}: expected one argument")
        return values


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser; with *only*, every command is listed but only that one gets its
    arguments (``main`` passes the command being run, or ``""`` for none: ``symgpt --help``
    then imports no command's option helpers, hence no engine). When *only* names a command,
    the other commands' modules are not even imported (start-up): only their names are known."""
    from ..version import __version__

    parser = _Parser(
        prog="symgpt",
        description="Exact symbolic cost models of Transformers: parameters, FLOPs, memory, "
        "rules, LaTeX and diagrams, derived from a graph of symbolic ops.",
        epilog="Run 'symgpt COMMAND --help' for a command's options. MODEL is a preset "
        "(see 'symgpt models'), a path to an HF-style config.json, or a Hub id (org/name).",
    )
    parser.add_argument("--version", action="version", version=f"symgpt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, ref in COMMANDS.items():
        if only in COMMANDS and name != only:
            sub.add_parser(name)  # not run and no list printed: its module is not imported
            continue
        mod = ref.get()
        p = sub.add_parser(name, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        if only is None or name == only:
            mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def _command(argv: list[str]) -> str:
    """The command named on the command line ('' if none): the first word that is not an
    option (the top level takes no option with a value)."""
    for word in argv:
        if word == "--":
            break
        if not word.startswith("-"):
            return word
    return ""


def _say(message: str) -> None:
    from ..core.errors import tame
    from .common import terminal_safe

    text = terminal_safe(tame(" ".join(str(message).split())))  # one short line, whatever the message held
    print(f"symgpt: error: {text}", file=sys.stderr)


class Terminated(BaseException):
    """SIGTERM, raised where the program is so that every ``finally`` runs (temporaries are
    removed, child processes killed) before the exit."""


def _on_term(signum, frame):
    raise Terminated()


def _flush_stdout() -> None:
    """Flush stdout now, so that a full disk or a closed stdout is a one-line error here rather
    than Python's message at exit."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except (OSError, ValueError) as e:
        _discard_stdout()
        if isinstance(e, BrokenPipeError):
            raise
        reason = getattr(e, "strerror", None) or "it is closed"
        raise SymgptError(f"cannot write to standard output: {reason}") from None


def _discard_stdout() -> None:
    """Point fd 1 at /dev/null so that what is still buffered cannot fail again at exit."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    previous_term = None
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(MAX_DIGITS)
    try:
        previous_term = signal.signal(signal.SIGTERM, _on_term)
    except ValueError:  # not the main thread: leave signals alone
        pass
    try:
        return _main(argv)
    finally:
        if previous_term is not None:
            signal.signal(signal.SIGTERM, previous_term)


def _main(argv: list[str] | None) -> int:
    try:
        parser = build_parser(only=_command(sys.argv[1:] if argv is None else argv))
        args = parser.parse_args(argv)
        if not getattr(args, "_run", None):
            parser.print_help()
            _flush_stdout()
            return 0
        code = int(args._run(args) or 0)
        _flush_stdout()
        return code
    except SymgptError as e:
        _say(str(e))
        return 2
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    except Terminated:
        _say("terminated (SIGTERM)")
        return 143
    except BrokenPipeError:
        _discard_stdout()
        return 0
    except RecursionError:
        _say("input too deeply nested")
        return 2
    except MemoryError:
        _say("out of memory; see the Limits page of the documentation")
        return 2
    except ValueError as e:
        if "integer string conversion" not in str(e) and "int_max_str_digits" not in str(e):
            return _internal(e)
        _say(f"a number has more than {MAX_DIGITS:,} digits, the most symgpt reads or prints")
        return 2
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EBADF, errno.EIO, errno.EDQUOT) and _is_stdout(e):
            _discard_stdout()
            _say(f"cannot write to standard output: {e.strerror}")
            return 2
        if e.errno in (errno.ENAMETOOLONG, errno.ELOOP, errno.ENOTDIR) and e.filename is not None:
            from ..core.io import path_error  # a fault of a path the user gave, missed where it was used

            _say(str(path_error(os.fsdecode(e.filename), e, "use")))
            return 2
        return _internal(e)
    except Exception as e:
        return _internal(e)


def _is_stdout(e: OSError) -> bool:
    return e.filename is None


def _internal(e: BaseException) -> int:
    """A bug: still one line, but say it is ours."""
    if os.environ.get("SYMGPT_DEBUG"):
        raise e
    _say(f"internal error ({type(e).__name__}: {e}); please report it (SYMGPT_DEBUG=1 shows the traceback)")
    return 1


def entry() -> None:
    code = main()
    # speed only: the objects left are freed at exit without the cycle collector walking them all
    # once more (SymPy's caches: a tenth of a report's time); nothing is left out of the clean-ups
    gc.freeze()
    sys.exit(code)

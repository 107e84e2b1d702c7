"""The ``symgpt`` command line. One module per command (``cmd_<name>.py``) with ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``; commands import the engine lazily so that
``symgpt --help`` starts fast. Errors are one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import SymgptError
from . import (cmd_check, cmd_compare, cmd_crossover, cmd_dominance, cmd_flops, cmd_graph, cmd_latex,
               cmd_memory, cmd_models, cmd_params, cmd_report, cmd_rule, cmd_shapes, cmd_sweep,
               cmd_table, cmd_time)

#: command name -> its module, in the order ``--help`` lists them (an explicit table: a missing
#: module is an ImportError here; the modules' top levels import no engine)
COMMANDS = {
    "models": cmd_models, "params": cmd_params, "shapes": cmd_shapes, "flops": cmd_flops,
    "memory": cmd_memory, "time": cmd_time,
    "rule": cmd_rule, "dominance": cmd_dominance, "crossover": cmd_crossover, "compare": cmd_compare,
    "check": cmd_check,
    "latex": cmd_latex, "table": cmd_table, "graph": cmd_graph, "sweep": cmd_sweep, "report": cmd_report,
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse would print the usage first)
        import re

        if message.startswith("unrecognized arguments: "):
            # 'symgpt flops gpt2-small T=1024': a binding typed without --set
            loose = [a for a in message.split(": ", 1)[1].split() if re.fullmatch(r"[A-Za-z_]\w{0,40}=\S+", a)]
            if loose:
                message += "; did you mean " + " ".join(f"--set {a}" for a in loose) + "?"
        raise SymgptError(message.replace("\n", " "))

    def _get_values(self, action, arg_strings):
        # argparse turns '--opt=--' into an empty list where one value is expected
        values = super()._get_values(action, arg_strings)
        if action.option_strings and action.nargs is None and isinstance(values, list):
            self.error(f"argument {'/'.join(action.option_strings)}: expected one argument")
        return values


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser; with *only*, every command is listed but only that one gets its
    arguments (``main`` passes the command being run, or ``""`` for none: ``symgpt --help``
    then imports no command's option helpers, hence no engine)."""
    from .. import __version__

    parser = _Parser(
        prog="symgpt",
        description="Exact symbolic cost models of Transformers: parameters, FLOPs, memory, "
        "rules, LaTeX and diagrams, derived from a graph of symbolic ops.",
        epilog="Run 'symgpt COMMAND --help' for a command's options. MODEL is a preset "
        "(see 'symgpt models') or a path to an HF-style config.json.",
    )
    parser.add_argument("--version", action="version", version=f"symgpt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, mod in COMMANDS.items():
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
    from ..errors import tame

    text = tame(" ".join(str(message).split()))  # one short line, whatever the message held
    print(f"symgpt: error: {text}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser(only=_command(sys.argv[1:] if argv is None else argv))
        args = parser.parse_args(argv)
        if not getattr(args, "_run", None):
            parser.print_help()
            return 0
        return int(args._run(args) or 0)
    except SymgptError as e:
        _say(str(e))
        return 2
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except RecursionError:
        _say("input too deeply nested")
        return 2
    except Exception as e:  # a bug: still one line, but say it is ours
        if os.environ.get("SYMGPT_DEBUG"):
            raise
        _say(f"internal error ({type(e).__name__}: {e}); please report it (SYMGPT_DEBUG=1 shows the traceback)")
        return 1


def entry() -> None:
    sys.exit(main())

"""The CLI's registry and choices come from the code they stand for.

- every ``cmd_*.py`` in ``symgpt/cli`` is a registered command (``COMMANDS``) and every
  registered command is a module with ``HELP``, ``add_arguments`` and ``run``;
- every option with a fixed set of values reads it from the engine: the oracle is the engine's
  own table (``conventions.RECOMPUTE``, ``derive.memory.PRECISIONS``, ...), imported here and
  fed to the parser value by value; a word not in it is refused with exit code 2;
- free-text options the engine validates (``--convention``) accept every engine name.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from symgpt.cli import COMMANDS, build_parser, main
from symgpt.cli.choices import EngineChoices
from symgpt.core.errors import SymgptError

CLI = Path(__file__).resolve().parent.parent / "symgpt" / "cli"


def test_every_command_module_is_registered_and_complete():
    files = sorted(p.stem[len("cmd_"):] for p in CLI.glob("cmd_*.py"))
    assert sorted(COMMANDS) == files
    for name, ref in COMMANDS.items():
        mod = ref.get()
        assert mod.__name__ == f"symgpt.cli.cmd_{name}"
        assert isinstance(mod.HELP, str) and mod.HELP
        assert callable(mod.add_arguments) and callable(mod.run)


def _engine():
    """(command, option) -> the engine's values, read from the engine itself."""
    from symgpt.core.conventions import ATTENTION, IMPLEMENTATIONS, PER, RECOMPUTE
    from symgpt.derive.layout import OFFLOAD, SCHEDULES, STAGES
    from symgpt.derive.memory import OPTIMIZERS, PRECISIONS, ZERO_STAGES
    from symgpt.derive.optimal import FITS
    from symgpt.render.cluster_fig import SCHEDULE_FORMATS
    from symgpt.documents.latex_doc import ALIASES, SECTIONS
    from symgpt.derive.inference_setup import ACT_BITS, BITS, CONVENTIONS as INFER
    from symgpt.derive.step import PHASES
    from symgpt.core.hardware import names as hardware_names
    from symgpt.render import dot, dotfit, latex_numbers, tables
    from symgpt.simulate.engine import SCHEDULERS
    from symgpt.derive.serving_ep import DISPATCH_CHOICES

    per, rec, att = tuple(PER), tuple(RECOMPUTE), tuple(ATTENTION)
    prec, opt, zero = tuple(PRECISIONS), tuple(OPTIMIZERS), tuple(ZERO_STAGES)
    layout = {"--zero": zero, "--schedule": tuple(SCHEDULES), "--stage": tuple(STAGES), "--offload": tuple(OFFLOAD)}
    memory = {"--recompute": rec, "--precision": prec, "--optimizer": opt, "--attention": att, **layout,
              "--implementation": tuple(IMPLEMENTATIONS)}
    flops = {"--recompute": rec, "--per": per, "--attention": att}
    from symgpt.derive.finetune import BASES, METHODS
    finetune = {"--finetune": METHODS, "--qlora-base": BASES}
    from symgpt.derive.mla_absorbed import FORMS as MLA
    # multi-latent attention's decode form: infer's and serve's --mla
    mla = {"--mla": MLA}
    return {
        "params": finetune, "flops": {**flops, **finetune}, "time": {**flops, **layout, "--precision": prec, "--hardware": hardware_names(), **finetune}, "memory": {**memory, **finetune}, "comm": memory,
        "plan": {"--precision": prec, "--optimizer": opt, "--hardware": hardware_names(), **finetune},
        "schedule": {"--schedule": tuple(SCHEDULES), "--format": tuple(SCHEDULE_FORMATS)},
        "optimal": {"--fit": tuple(FITS)},
        "sweep": {**{k: v for k, v in memory.items() if k not in ("--schedule", "--stage", "--offload")}, "--per": per},
        "table": {"--format": tuple(tables.FORMATS), "--numbers": tuple(latex_numbers.STYLES), "--per": per},
        "graph": {"--format": tuple(dot.FORMATS), "--color-by": tuple(dot.COLOR_BY), "--phase": PHASES,
                  "--hardware": hardware_names(), "--weight-bits": BITS, "--fit": tuple(dotfit.FITS)},
        "infer": {"--convention": tuple(INFER), "--hardware": hardware_names(), "--weight-bits": BITS,
                  "--kv-bits": BITS, "--act-bits": ACT_BITS, "--attention": att, **mla},
        "latex": {"--what": (*SECTIONS, *ALIASES), "--numbers": tuple(latex_numbers.STYLES)},
        # serving: the step times' options are infer's
        "serve": {"--hardware": hardware_names(), "--weight-bits": BITS, "--kv-bits": BITS, "--attention": att,
                  "--scheduler": SCHEDULERS, "--dispatch-bits": DISPATCH_CHOICES, **mla},
    }


def _subparser(command) -> argparse.ArgumentParser:
    parser = build_parser(only=command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def _action(p, option):
    return next(a for a in p._actions if option in a.option_strings)


def _fixed_sets(p):
    """Options of *p* whose values form a fixed set (choices, or an engine-checked type)."""
    out = {}
    for a in p._actions:
        if a.choices is not None:
            out[a.option_strings[0]] = a.choices
        elif isinstance(getattr(a.type, "__self__", None), EngineChoices):
            out[a.option_strings[0]] = a.type.__self__
    return out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_fixed_choice_is_read_from_the_engine(command):
    engine = _engine().get(command, {})
    found = _fixed_sets(_subparser(command))
    assert set(found) == set(engine), command        # no fixed list the table above does not know
    for option, choices in found.items():
        assert isinstance(choices, EngineChoices), f"{command} {option}: a list written in cli/"
        assert tuple(choices) == tuple(engine[option]), f"{command} {option}"


#: the arguments a command needs besides the option under test
REQUIRED = {"plan": ["gpt2-small", "--devices", "8", "--global-batch", "8"],
            "schedule": ["--pp", "2", "--microbatches", "4"], "optimal": ["--compute", "1e21"]}


@pytest.mark.parametrize("command", sorted(_engine()))
def test_the_parser_takes_every_engine_choice_and_nothing_else(command):
    p = _subparser(command)
    required = REQUIRED.get(command, ["gpt2-small"])
    for option, values in _engine()[command].items():
        for v in values:
            args = p.parse_args([*required, option, str(v)])
            got = getattr(args, _action(p, option).dest)
            assert (got[-1] if isinstance(got, list) else got) == v, (command, option, v)
        for bad in ("nope", "FP32", "", "0x1"):
            with pytest.raises(SymgptError, match="invalid (choice|int value)"):
                p.parse_args(["gpt2-small", option, bad])


def test_a_bad_choice_is_one_line_and_exit_2(capsys):
    assert main(["memory", "gpt2-small", "--precision", "fp64"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice: 'fp64'" in err and "mixed-bf16" in err
    assert main(["sweep", "gpt2-small", "--grid", "L=1:2:1", "--optimizer", "lion"]) == 2
    assert "invalid choice: 'lion'" in capsys.readouterr().err


def test_every_convention_is_accepted(capsys):
    from symgpt.core.conventions import CONVENTIONS

    for name in CONVENTIONS:
        assert main(["flops", "gpt2-small", "--convention", name, "--json"]) == 0, name
        assert f'"convention": ' in capsys.readouterr().out
    assert main(["flops", "gpt2-small", "--convention", "nope"]) == 2
    assert "unknown convention 'nope'" in capsys.readouterr().err


def test_help_texts_name_the_engine_choices(capsys):
    from symgpt.core.conventions import CONVENTIONS
    from symgpt.core.notation import builtin_names

    with pytest.raises(SystemExit):
        main(["latex", "--help"])
    out = " ".join(capsys.readouterr().out.split()).replace("- ", "-")  # argparse may wrap after a hyphen
    assert all(n in out for n in builtin_names()) and all(c in out for c in CONVENTIONS)

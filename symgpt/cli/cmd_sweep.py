"""symgpt sweep MODEL --grid NAME=START:STOP:STEP ...: quantities over a grid of sizes."""

from __future__ import annotations

from . import choices
from .common import add_model

HELP = "evaluate quantities exactly over a grid of sizes (CSV), with filters and top-K"
DESCRIPTION = (
    "Evaluate derived quantities exactly over every point of a grid (the cartesian product of "
    "the --grid axes), vectorised with NumPy. Example: the largest GPT that fits in 80 GB per "
    "device: symgpt sweep gpt2 --set V=50257 --set T_max=4096 --set T=4096 --set B=1 --set h=64 "
    "--grid L=12:128:4 --grid d=1024:16384:512 --zero 2 --dp 64 "
    "--where 'memory.total < 80e9' --top 1 --by params --columns params,memory.total. "
    "A grid of 2**24 points or more (up to 10**12) runs on Dask: one local worker process per "
    "core, --workers N, or the cluster of --scheduler ADDRESS; the output is the same bytes."
)

#: options passed to the quantities that accept them (as 'symgpt flops' / 'symgpt memory' take them);
#: a value is checked against the engine's choices when parsed (``choices.X.parse``), and the help
#: names no choice so that 'symgpt sweep --help' imports no engine
_QUANTITY_OPTIONS = (
    ("--convention", "convention", str, "NAME", "counting convention (see 'symgpt flops --help')"),
    ("--recompute", "recompute", choices.RECOMPUTE.parse, "POLICY",
     "activation recomputation (see 'symgpt flops --help')"),
    ("--per", "per", choices.PER.parse, "UNIT", "FLOPs per batch, sequence or token (flops.*)"),
    ("--precision", "precision", choices.PRECISIONS.parse, "POLICY",
     "precision policy (memory.*; see 'symgpt memory --help')"),
    ("--optimizer", "optimizer", choices.OPTIMIZERS.parse, "NAME", "optimizer (memory.*; see 'symgpt memory --help')"),
    ("--attention", "attention", choices.ATTENTION.parse, "IMPL", "attention implementation (memory.*)"),
    ("--implementation", "implementation", choices.IMPLEMENTATIONS.parse, "NAME",
     "whose code the saved tensors follow: fused, hf-eager, or a kernel library (mamba-ssm, fla) (memory.*)"),
    ("--zero", "zero", choices.ZERO_STAGES.parse, "STAGE", "ZeRO stage (memory.*, per device)"),
    ("--dp", "dp", int, "N", "data-parallel ranks (memory.*, with --zero)"),
    ("--tp", "tp", int, "N", "tensor-parallel ranks (memory.*)"),
)
_SWITCHES = (
    ("--hfu", "hardware", "count the forward that recomputation reruns in flops.train (hardware FLOPs, as HFU)"),
    ("--causal", "causal_halving", "halve the attention matmuls a causal kernel skips (flops.*)"),
    ("--sp", "sp", "sequence parallelism, with --tp (memory.*)"),
)


def add_arguments(p):
    add_model(p)
    p.add_argument("--grid", action="append", default=[], metavar="NAME=START:STOP:STEP",
                   help="an axis of the grid: a symbol (d, L, h, T, B, ...) over START..STOP "
                   "(STOP included) by STEP, or a list NAME=V1,V2,...; a flag over true,false; "
                   "repeatable (the first axis varies slowest)")
    p.add_argument("--columns", default="params", metavar="Q1,Q2,...",
                   help="quantities to evaluate (default: params; e.g. params,flops.train,memory.total)")
    p.add_argument("--where", action="append", default=[], metavar="CONDITION",
                   help="keep the points where CONDITION holds, e.g. 'memory.total < 80e9' "
                   "(quantities and symbols; parsed safely, never evaluated); repeatable")
    p.add_argument("--top", type=int, metavar="K", help="keep the K best rows by --by")
    p.add_argument("--by", metavar="QUANTITY", help="sort by this quantity or grid name, largest first (ties in grid order)")
    p.add_argument("--smallest", action="store_true", help="with --by: smallest first (with --top: keep the smallest)")
    for flag, dest, kind, metavar, text in _QUANTITY_OPTIONS:
        p.add_argument(flag, dest=f"q_{dest}", type=kind, metavar=metavar, help=text)
    for flag, dest, text in _SWITCHES:
        p.add_argument(flag, dest=f"q_{dest}", action="store_true", default=None, help=text)
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="any other quantity option (e.g. --option per=token); repeatable")
    p.add_argument("-o", "--output", metavar="FILE.csv", help="write the CSV here (default: stdout)")
    placement = p.add_mutually_exclusive_group()
    placement.add_argument("--workers", type=int, metavar="N",
                     help="evaluate on N local Dask worker processes (0: in this process; default: "
                     "in this process below 2**24 points, else one worker per core)")
    placement.add_argument("--scheduler", metavar="ADDRESS",
                     help="evaluate on the Dask cluster of this scheduler (e.g. tcp://host:8786; "
                     "its workers need symgpt installed)")
    p.add_argument("--chunk", type=int, default=1 << 18, metavar="POINTS",
                   help="points evaluated at once (memory per worker; default 262144); the "
                   "output does not depend on it")
    progress = p.add_mutually_exclusive_group()
    progress.add_argument("--progress", action="store_true", default=None,
                          help="always show the progress bar on stderr")
    progress.add_argument("--no-progress", dest="progress", action="store_false",
                          help="never show progress (default: a bar on a terminal after half a "
                          "second; elsewhere a line on stderr every 10 s once a sweep has run 10 s)")
    p.add_argument("--yes", action="store_true",
                   help="run a sweep past the limits that need confirming (10**10 points, or "
                   "10 GiB of CSV); a sweep of over 2**20 points first measures its rate on "
                   "samples and says how long it is expected to take when over a minute")


def _options(args) -> dict:
    import re

    from ..core.errors import SymgptError
    from ..core.exprparse import parse_value

    out = {}
    for dest in [o[1] for o in _QUANTITY_OPTIONS] + [o[1] for o in _SWITCHES]:
        value = getattr(args, f"q_{dest}")
        if value is not None:
            out[dest] = value
    for text in args.option:
        if text.count("=") != 1:
            raise SymgptError(f"--option expects NAME=VALUE, got {text!r}")
        name, value = (t.strip(" \t") for t in text.split("="))
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", name):
            raise SymgptError(f"--option {text!r}: NAME must be letters, digits and '_'")
        if name in out:
            raise SymgptError(f"option {name} given twice")
        try:
            out[name] = parse_value(value)
        except SymgptError:
            if not re.fullmatch(r"[A-Za-z0-9_.+-]{1,64}", value):
                raise SymgptError(f"--option {text!r}: VALUE must be a number, true/false or a "
                                  "word (letters, digits, '_', '.', '-')") from None
            out[name] = value  # a word such as bf16 or adamw: passed on as text, never evaluated
    return out


def run(args) -> int:
    import sys

    from ..core.errors import SymgptError
    from ..core.io import open_atomic, write_atomic
    from ..sweep import Grid, Progress, sweep, write_csv
    from ..sweep.estimate import check_job
    from .common import load_model, settings

    columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    if not columns:
        raise SymgptError("--columns names no quantity")
    both = {g.split("=", 1)[0].strip() for g in args.grid} & set(settings(args))
    if both:
        raise SymgptError(f"{sorted(both)[0]} is both set (--set) and gridded (--grid)")
    model = load_model(args)
    grid = Grid.parse(args.grid, model.family.flags)
    terminal = sys.stderr.isatty()
    progress = Progress(grid.total, sys.stderr, enabled=args.progress is not False,
                        bar=terminal or bool(args.progress))
    mode = "csv" if args.top is None and args.by is None else "top" if args.top is not None else "rows"
    where_to_run = dict(workers=args.workers, scheduler=args.scheduler, chunk=args.chunk,
                        before=lambda plan: check_job(plan, mode, args.yes, sys.stderr))
    if mode == "csv":  # rows in grid order: streamed, any number of them
        with open_atomic(args.output or "-") as out:
            result = write_csv(out, model, grid, columns, where=args.where,
                               options=_options(args), progress=progress, **where_to_run)
        rows = result.matched
    else:
        result = sweep(model, grid, columns, where=args.where, top=args.top, by=args.by,
                       smallest=args.smallest, options=_options(args), progress=progress,
                       **where_to_run)
        write_atomic(args.output or "-", result.csv())
        rows = len(result.rows)
    for note in result.notes:
        print(f"symgpt: {note}", file=sys.stderr)
    print(f"symgpt: {result.points:,} points, {result.matched:,} matched, {rows:,} rows"
          + (f" written to {args.output}" if args.output else ""), file=sys.stderr)
    return 0

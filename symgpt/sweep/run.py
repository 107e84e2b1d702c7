"""A sweep: derived quantities evaluated exactly over every point of a grid, filtered by
``--where`` conditions and the model's own constraints, optionally reduced to the top K.

Each quantity is derived once, symbolically (the derivation does not depend on the sizes), then
compiled (``compile.Compiled``) into one ``kernel.Kernel`` per flag setting, which evaluates the
grid chunk by chunk: here, one chunk after the other, or on Dask (``parallel``: local worker
processes, or a named scheduler's cluster), each task a range of chunks. Rows come out in grid
order (the first axis slowest), or by ``by`` (largest first; ties in grid order) with ``top``.
Output is deterministic, and the same bytes whatever the workers, scheduler or chunk size.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Sequence

import numpy as np

from ..core.errors import SymgptError
from .compile import Compiled, Sign
from .grid import CHUNK, Grid
from .kernel import AtMostZero, Divides, Kernel, Part
from .table import concat, csv_header, csv_rows, top as top_rows

MAX_ROWS = 5_000_000        # rows a sweep may keep without --top
PARALLEL_POINTS = 1 << 24   # a grid this large runs on Dask's local processes unless told otherwise
MAX_WORKERS = 1024


@dataclass(frozen=True)
class Ranking:
    """Which rows a sweep keeps: every matching row (``top`` None), or the *top* K by the column
    *by* (largest first; smallest first with *smallest*). Rows sort by *by* also without *top*."""

    top: int | None = None
    by: str | None = None
    smallest: bool = False


@dataclass(frozen=True)
class Execution:
    """Where a sweep runs: *workers* = 0 in this process, N > 0 on N local Dask worker
    processes, *scheduler* (an address or a ``distributed.Client``) on that Dask cluster, neither:
    decided by the grid's size; *chunk*: points evaluated at once (memory per worker)."""

    workers: int | None = None
    scheduler: object = None
    chunk: int = CHUNK


def _request(keywords: dict, *kinds) -> tuple:
    """The keyword edge of ``sweep``/``write_csv``: ``top=5, workers=2`` (or ``ranking=Ranking(..)``,
    ``execution=Execution(..)`` whole) as one value of each of *kinds*; an unknown keyword raises
    TypeError as a Python signature would."""
    out = []
    for kind in kinds:
        whole = keywords.pop(kind.__name__.lower(), None)
        fields = {f: keywords.pop(f) for f in kind.__dataclass_fields__ if f in keywords}
        if whole is not None and fields:
            raise TypeError(f"give {kind.__name__.lower()}= or {', '.join(fields)}, not both")
        out.append(whole if whole is not None else kind(**fields))
    if keywords:
        raise TypeError(f"unexpected keyword argument {sorted(keywords)[0]!r}")
    return tuple(out)


@dataclass
class SweepResult:
    header: list[str]
    table: dict[str, np.ndarray]      # column -> values (int64, or Python ints/Fractions/bools)
    points: int                       # grid points evaluated
    matched: int                      # points that pass the constraints and --where
    skipped: dict[str, int] = field(default_factory=dict)   # constraint message -> points
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.table[self.header[0]]) if self.header and self.table else 0

    @property
    def rows(self) -> list[list]:
        """The rows, in output order, as Python values (ints, Fractions, bools)."""
        if not len(self):
            return []
        return [list(r) for r in zip(*(self.table[h].tolist() for h in self.header))]

    def column(self, name: str) -> list:
        return self.table[name].tolist() if len(self) else []

    def csv(self) -> str:
        """The rows as CSV (header first; cells quoted where needed; '\\n' line ends)."""
        return csv_header(self.header) + (csv_rows(self.header, self.table) if len(self) else "")


#: off a terminal, a progress line comes only once a sweep has run this long, and then at most
#: once per this many seconds (a log gets a few lines, never a flood)
LINE_AFTER, LINE_EVERY = 10.0, 10.0


class Progress:
    """Progress on *stream* (stderr; never the output): on a terminal (``bar``) a one-line bar
    redrawn in place once the work takes more than *after* s; elsewhere a line once the work has
    run LINE_AFTER s, then at most one each LINE_EVERY s. Both say how long is left, from the
    rate so far."""

    def __init__(self, total: int, stream=None, after: float = 0.5, enabled: bool = True,
                 bar: bool = True, label: str = "sweep", unit: str = "points"):
        self.label, self.unit = label, unit
        self.total, self.stream, self.after = total, stream or sys.stderr, after
        self.enabled, self.start, self.shown, self.bar = enabled, time.monotonic(), False, bar
        self.last = self.first = None

    def update(self, done: int) -> None:
        now = time.monotonic()
        elapsed = now - self.start
        if not self.enabled or elapsed < (self.after if self.bar else LINE_AFTER):
            return
        if not self.bar and self.last is not None and now - self.last < LINE_EVERY:
            return
        self.last = now
        if self.first is None:  # the rate is timed from the first report on (not start-up)
            self.first = (now, done)
        t0, d0 = self.first
        rate = (done - d0) / (now - t0) if done > d0 and now > t0 else done / elapsed
        frac = done / self.total if self.total else 1.0
        left = f", about {duration((self.total - done) / rate)} left" if 0 < done < self.total and rate > 0 else ""
        if self.bar:
            bar = "#" * int(30 * frac)
            self.stream.write(f"\r{self.label} [{bar:<30}] {100 * frac:5.1f}%  {done:,}/{self.total:,} {self.unit}{left}  ")
        else:
            self.stream.write(f"symgpt: {self.label} {100 * frac:.1f}% done ({done:,}/{self.total:,} {self.unit}, "
                              f"{duration(elapsed)} so far{left})\n")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown and self.bar:
            self.stream.write("\n")
            self.stream.flush()
        self.shown = False


def duration(seconds: float) -> str:
    """*seconds* in words, to two units at most: '45 s', '3 min 20 s', '2 h 5 min', '3 days 4 h'."""
    s = int(round(max(seconds, 0)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60} min" if s % 3600 // 60 else f"{s // 3600} h"
    days = s // 86400
    return f"{days:,} day{'s' if days != 1 else ''} {s % 86400 // 3600} h"


def _quantity_expr(model, name: str, options: Mapping, used: dict):
    """The exact symbolic total of quantity *name*, with the *options* it accepts.

    Options go to every quantity that takes them (``zero=2`` to ``memory.*``, ``convention=``
    to ``flops.*``): a quantity that rejects the whole set is asked with each option alone, and
    keeps those it accepts. *used* maps each option to None once a quantity took it, or to the
    first refusal's message.
    """
    if name == "params" or not options:
        return model.params.expr if name == "params" else model.quantity(name).expr
    try:
        q = model.quantity(name, **options)
        used.update(dict.fromkeys(options))
        return q.expr
    except SymgptError:
        pass
    mine = {}
    for k, v in options.items():
        try:
            model.quantity(name, **{k: v})
        except SymgptError as e:
            used.setdefault(k, str(e))
            continue
        mine[k] = v
        used[k] = None
    return model.quantity(name, **mine).expr


def quantity_names() -> list[str]:
    from ..model.model import quantity_names as provided

    return ["params", *[n for n in provided() if n != "params"]]


def _condition_names(grid: Grid):
    """Names a --where condition may use: every canonical symbol and every quantity."""
    import sympy

    from ..core.symbols import CANONICAL

    placeholders = {q: sympy.Dummy(q) for q in quantity_names()}
    return {**CANONICAL, **placeholders}, placeholders


def sweep(model, grid: Grid | Sequence[str] | Mapping[str, object], columns: Sequence[str] = ("params",),
          where: Sequence[str] = (), options: Mapping[str, object] | None = None,
          progress: Progress | bool = False, before=None, **request) -> SweepResult:
    """Evaluate *columns* (quantity names) of *model* at every point of *grid*.

    *model*: a name, path or ``Model`` (its bound sizes are fixed unless gridded). *where*:
    conditions such as ``"memory.total < 80e9"`` (safe parser; quantities and symbols). *top*
    with *by* keeps the K rows with the largest *by* (smallest with ``smallest``). *options* go
    to the quantities that accept them (``zero=2, dp=64``). At most MAX_ROWS rows are kept
    without *top*; ``write_csv`` streams any number. The keywords *top*, *by*, *smallest* make
    a ``Ranking`` (or pass ``ranking=``) and *workers*, *scheduler*, *chunk* an ``Execution``
    (or pass ``execution=``).

    Where it runs: *workers* = 0 in this process; N > 0 on N local Dask worker processes;
    *scheduler* (an address such as ``"tcp://host:8786"``, or a ``distributed.Client``) on that
    Dask cluster; neither: in this process below PARALLEL_POINTS points, else one local worker
    process per core. *chunk*: points evaluated at once (memory per worker). Local workers
    are started the way Python's ``multiprocessing`` spawns processes: a script that sweeps
    past PARALLEL_POINTS needs the ``if __name__ == "__main__":`` guard (or ``workers=0``).
    *before(plan)* runs once the request is checked and compiled, before any point is evaluated
    (``estimate.check_job``: the expected time, and a refusal past the limits).
    """
    ranking, execution = _request(dict(request), Ranking, Execution)
    plan = _Plan(model, grid, columns, where, ranking, options, progress, execution)
    if before is not None:
        before(plan)
    if ranking.top is not None:
        return plan.result(plan.best())
    kept: list[dict[str, np.ndarray]] = []
    for part in plan.parts("rows"):
        if plan.counts.matched > MAX_ROWS:
            raise SymgptError(f"the sweep keeps over {MAX_ROWS:,} rows; narrow it with --where, "
                              "keep the best with --top K --by QUANTITY, or write the CSV "
                              "(streamed: any number of rows)")
        if part.table is not None:
            kept.append(part.table)
    table = concat(kept) if kept else {}
    if table and ranking.by is not None:
        table = top_rows(table, ranking.by, len(table["#"]), ranking.smallest)
    return plan.result(table)


def write_csv(out, model, grid, columns: Sequence[str] = ("params",), where: Sequence[str] = (),
              options: Mapping[str, object] | None = None, progress: Progress | bool = False,
              before=None, **execution) -> SweepResult:
    """Stream the sweep's CSV into the binary file *out*, chunk by chunk, in grid order (memory
    stays bounded whatever the number of rows: on Dask, a few chunks' text at a time, formatted
    by the workers). *workers*, *scheduler*, *chunk* (or ``execution=``), *before*: as ``sweep``.
    Returns the counts."""
    (run,) = _request(dict(execution), Execution)
    plan = _Plan(model, grid, columns, where, Ranking(), options, progress, run)
    if before is not None:
        before(plan)
    parts = plan.parts("csv")
    first = next(parts, None)  # a cluster that cannot be reached fails before any output
    out.write(csv_header(plan.header).encode("utf-8"))
    for part in ([first] if first is not None else []):
        out.write(part.text)
    for part in parts:
        out.write(part.text)
    return plan.result({})


class _Plan:
    """A checked sweep request, compiled into one ``Kernel`` per flag setting; ``parts()`` yields
    what each chunk range gives, in grid order, and ``best()`` the top K of the whole grid."""

    def __init__(self, model, grid, columns, where, ranking: Ranking, options, progress,
                 execution: Execution):
        from ..core.exprparse import parse_condition
        from ..model.model import load

        base = load(model)
        if not isinstance(grid, Grid):
            grid = Grid.parse(grid, base.family.flags)
        top, by, smallest = ranking.top, ranking.by, ranking.smallest
        workers, scheduler, chunk = execution.workers, execution.scheduler, execution.chunk
        columns = list(dict.fromkeys(columns))
        known = quantity_names()
        for c in columns:
            if c not in known:
                raise SymgptError(f"unknown quantity {c!r} in --columns; known: {', '.join(known)}")
        if top is not None:
            from ..derive.checks import positive_int

            positive_int("--top", top)
            if by is None:
                raise SymgptError("--top needs --by QUANTITY (the column to rank by)")
        if smallest and by is None:
            raise SymgptError("--smallest needs --by QUANTITY")
        if by is not None:
            if by not in known and by not in grid.order:
                raise SymgptError(f"--by {by!r} is neither a quantity ({', '.join(known)}) nor a grid name")
            if by in known and by not in columns:
                columns.append(by)
        self.workers = _where_to_run(workers, scheduler, grid.total)
        self.scheduler = scheduler
        if isinstance(chunk, bool) or not isinstance(chunk, int) or not 1 <= chunk <= 1 << 26:
            raise SymgptError(f"--chunk must be an integer from 1 to {1 << 26:,}, got {chunk!r}")
        self.names, self.placeholders = _condition_names(grid)
        self.conditions = [parse_condition(text, self.names) for text in where]
        self.base, self.grid, self.columns, self.where = base, grid, columns, list(where)
        self.options = dict(options or {})
        self.used: dict = {}
        self.header = [*grid.order, *columns]
        self.progress = progress if isinstance(progress, Progress) else \
            Progress(grid.total, enabled=bool(progress))
        self.ranking = Ranking(top, by, smallest)
        self.top, self.by, self.smallest, self.chunk = top, by, smallest, chunk
        self.counts = Part()
        self.kernels = self._kernels()

    def _kernels(self) -> list[Kernel]:
        """Each flag setting derived and compiled (every check runs here, before any row)."""
        from ..model.layer_kinds import check_free

        grid, options, used, columns = self.grid, self.options, self.used, self.columns
        kernels = []
        for i, setting in enumerate(grid.flag_settings()):
            m = self.base.with_(**setting) if setting else self.base
            check_free(m, m.arch, [a.name for a in grid.axes])  # a layer kind's count must count a stack
            m = m.free(*(a.name for a in grid.axes))
            exprs = {c: _quantity_expr(m, c, options, used) for c in columns}
            cols = {c: Compiled(_fixed(e, m), grid.axes, c) for c, e in exprs.items()}
            tests = []
            for text, (left, op, right) in zip(self.where, self.conditions):
                needed = {q: _quantity_expr(m, q, options, used) if q not in exprs else exprs[q]
                          for q, p in self.placeholders.items() if p in (left - right).free_symbols}
                diff = (left - right).xreplace({self.placeholders[q]: e for q, e in needed.items()})
                tests.append((Sign(_fixed(diff, m), grid.axes, f"--where {text!r}"), op))
            kernels.append(Kernel(grid, setting, i * grid.size, cols, _constraints(m, grid), tests,
                                  self.ranking, self.chunk))
        self._check_options()
        return kernels

    def parts(self, mode: str) -> Iterator[Part]:
        """What each range of chunks gives (``Kernel.part``), in grid order; ``counts`` adds up."""
        if self.workers == 0:
            for kernel in self.kernels:
                for k in range(kernel.chunk_count()):
                    yield self._count(kernel.part(k, k + 1, mode))
        else:
            from .dask_chunks import DaskSession

            with DaskSession(self.workers, self.scheduler) as session:
                for part in session.ordered(self.kernels, mode):
                    yield self._count(part)
        self.progress.close()

    def best(self) -> dict[str, np.ndarray]:
        """The top K rows of the whole grid: folded chunk by chunk here, or tree-reduced on Dask."""
        if self.workers == 0:
            table = None
            for part in self.parts("top"):
                if part.table is not None:
                    table = part.table if table is None else \
                        top_rows(concat([table, part.table]), self.by, self.top, self.smallest)
            return table or {}
        from .dask_chunks import DaskSession

        with DaskSession(self.workers, self.scheduler) as session:
            part = session.top(self.kernels, self.progress.update)
        self.progress.close()
        self.counts = part
        return part.table or {}

    def _count(self, part: Part) -> Part:
        self.counts.add(part)
        self.progress.update(self.counts.points)
        return part

    def _check_options(self) -> None:
        for k in self.options:
            if k not in self.used or self.used[k] is not None:
                why = f" ({self.used[k]})" if self.used.get(k) else ""
                raise SymgptError(f"option {k}={self.options[k]} does not apply to any of: "
                                  f"{', '.join(self.columns)}{why}")

    def result(self, table) -> SweepResult:
        order = list(dict.fromkeys(m for kernel in self.kernels for m, _ in kernel.checks))
        skipped = {m: self.counts.skipped[m] for m in order if m in self.counts.skipped}
        notes = [f"skipped {n:,} points: {msg}" for msg, n in skipped.items()]
        return SweepResult(self.header, table, self.grid.total, self.counts.matched, skipped, notes)


def _where_to_run(workers, scheduler, points: int) -> int:
    """How many local Dask workers to start: 0 runs in this process, -1 uses *scheduler*."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or not 0 <= workers <= MAX_WORKERS):
        raise SymgptError(f"--workers must be an integer from 0 to {MAX_WORKERS}, got {workers!r}")
    if scheduler is not None:
        if workers is not None:
            raise SymgptError("--workers starts local processes and --scheduler names a cluster: give one of them")
        return -1
    if workers is not None:
        return workers
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores if points >= PARALLEL_POINTS and cores > 1 else 0


def _fixed(expr, model):
    """*expr* with the model's bound sizes substituted (the gridded ones are free)."""
    return expr.xreplace(model.bindings) if hasattr(expr, "xreplace") else expr


def _constraints(model, grid: Grid):
    """(message, chunk -> ok mask) for each of the architecture's constraints not waived."""
    import sympy

    from ..core.symbols import CANONICAL

    waive = model.preset.waive if model.preset else ()
    gridded = {CANONICAL[a.name] for a in grid.axes}
    out = []
    for c in model.arch.constraints:
        expr = _fixed(c.expr, model)
        if (c.id is not None and c.id in waive) or not expr.free_symbols or expr.free_symbols - gridded:
            continue  # waived, decided at load time, or not decidable (a symbol left free)
        if c.kind == "integer":
            num, den = sympy.fraction(sympy.together(expr))
            check = Divides(Compiled(num, grid.axes, c.message), Compiled(den, grid.axes, c.message))
        else:  # "le": expr <= 0
            check = AtMostZero(Compiled(expr, grid.axes, c.message))
        out.append((c.message, check))
    return out

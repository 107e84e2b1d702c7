"""A sweep: derived quantities evaluated exactly over every point of a grid, filtered by
``--where`` conditions and the model's own constraints, optionally reduced to the top K.

Each quantity is derived once, symbolically (the derivation does not depend on the sizes), then
compiled (``compile.Compiled``) and evaluated chunk by chunk over the grid. Rows come out in
grid order (the first axis slowest), or by ``by`` (largest first; ties in grid order) with
``top``. Output is deterministic.
"""

from __future__ import annotations

import csv
import io
import sys
import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from ..errors import SymgptError
from .compile import Compiled, Sign, sign, spread
from .grid import Grid

MAX_ROWS = 5_000_000        # rows a sweep may keep without --top
_CMP = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
        "==": np.equal, "!=": np.not_equal}


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


def csv_header(header: Sequence[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(header)
    return buf.getvalue()


def csv_rows(header: Sequence[str], table: Mapping[str, np.ndarray]) -> str:
    """The rows of *table* as CSV lines (no header)."""
    cells = [_cells(table[h]) for h in header]
    if all(table[h].dtype != object for h in header):  # digits only: no quoting
        return "\n".join(map(",".join, zip(*cells))) + "\n"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(zip(*cells))
    return buf.getvalue()


def _cells(column: np.ndarray) -> list[str]:
    """Column values as text: ints as digits, fractions as p/q, bools as true/false."""
    if column.dtype != object:
        return column.astype(str).tolist()
    return [_cell(v) for v in column.tolist()]


def _cell(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    return str(v)  # an int, or an exact fraction p/q


class Progress:
    """A one-line progress bar on *stream*, shown once the work takes more than *after* s."""

    def __init__(self, total: int, stream=None, after: float = 0.5, enabled: bool = True):
        self.total, self.stream, self.after = total, stream or sys.stderr, after
        self.enabled, self.start, self.shown = enabled, time.monotonic(), False

    def update(self, done: int) -> None:
        if not self.enabled or time.monotonic() - self.start < self.after:
            return
        frac = done / self.total if self.total else 1.0
        bar = "#" * int(30 * frac)
        self.stream.write(f"\rsweep [{bar:<30}] {100 * frac:5.1f}%  {done:,}/{self.total:,} points")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


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
    from ..model import quantity_names as provided

    return ["params", *[n for n in provided() if n != "params"]]


def _condition_names(grid: Grid):
    """Names a --where condition may use: every canonical symbol and every quantity."""
    import sympy

    from ..symbols import CANONICAL

    placeholders = {q: sympy.Dummy(q) for q in quantity_names()}
    return {**CANONICAL, **placeholders}, placeholders


def sweep(model, grid: Grid | Sequence[str] | Mapping[str, object], columns: Sequence[str] = ("params",),
          where: Sequence[str] = (), top: int | None = None, by: str | None = None,
          smallest: bool = False, options: Mapping[str, object] | None = None,
          progress: Progress | bool = False) -> SweepResult:
    """Evaluate *columns* (quantity names) of *model* at every point of *grid*.

    *model*: a name, path or ``Model`` (its bound sizes are fixed unless gridded). *where*:
    conditions such as ``"memory.total < 80e9"`` (safe parser; quantities and symbols). *top*
    with *by* keeps the K rows with the largest *by* (smallest with ``smallest``). *options* go
    to the quantities that accept them (``zero=2, dp=64``). At most MAX_ROWS rows are kept
    without *top*; ``write_csv`` streams any number.
    """
    plan = _Plan(model, grid, columns, where, top, by, smallest, options, progress)
    kept: list[dict[str, np.ndarray]] = []
    for rows in plan.tables():
        kept.append(rows)
        if top is not None:
            kept = [_top(_concat(kept), by, top, smallest)]
        elif plan.matched > MAX_ROWS:
            raise SymgptError(f"the sweep keeps over {MAX_ROWS:,} rows; narrow it with --where, "
                              "keep the best with --top K --by QUANTITY, or write the CSV "
                              "(streamed: any number of rows)")
    table = _concat(kept) if kept else {}
    if table and by is not None and top is None:
        table = _top(table, by, len(table["#"]), smallest)
    return plan.result(table)


def write_csv(out, model, grid, columns: Sequence[str] = ("params",), where: Sequence[str] = (),
              options: Mapping[str, object] | None = None, progress: Progress | bool = False
              ) -> SweepResult:
    """Stream the sweep's CSV into the binary file *out*, chunk by chunk (memory stays bounded
    whatever the number of rows); rows in grid order. Returns the counts (no rows kept)."""
    plan = _Plan(model, grid, columns, where, None, None, False, options, progress)
    tables = plan.tables()
    first = next(tables, None)  # every check runs before the first row: no output on an error
    out.write(csv_header(plan.header).encode("utf-8"))
    for rows in ([first] if first is not None else []):
        out.write(csv_rows(plan.header, rows).encode("utf-8"))
    for rows in tables:
        out.write(csv_rows(plan.header, rows).encode("utf-8"))
    return plan.result({})


class _Plan:
    """A checked sweep request; ``tables()`` yields the matching rows of each chunk."""

    def __init__(self, model, grid, columns, where, top, by, smallest, options, progress):
        from ..exprparse import parse_condition
        from ..model import load

        base = load(model)
        if not isinstance(grid, Grid):
            grid = Grid.parse(grid, base.family.flags)
        columns = list(dict.fromkeys(columns))
        known = quantity_names()
        for c in columns:
            if c not in known:
                raise SymgptError(f"unknown quantity {c!r} in --columns; known: {', '.join(known)}")
        if top is not None:
            if isinstance(top, bool) or not isinstance(top, int) or top <= 0:
                raise SymgptError(f"--top must be a positive integer, got {top!r}")
            if by is None:
                raise SymgptError("--top needs --by QUANTITY (the column to rank by)")
        if smallest and by is None:
            raise SymgptError("--smallest needs --by QUANTITY")
        if by is not None:
            if by not in known and by not in grid.order:
                raise SymgptError(f"--by {by!r} is neither a quantity ({', '.join(known)}) nor a grid name")
            if by in known and by not in columns:
                columns.append(by)
        self.names, self.placeholders = _condition_names(grid)
        self.conditions = [parse_condition(text, self.names) for text in where]
        self.base, self.grid, self.columns, self.where = base, grid, columns, list(where)
        self.options = dict(options or {})
        self.used: dict = {}
        self.header = [*grid.order, *columns]
        self.progress = progress if isinstance(progress, Progress) else \
            Progress(grid.total, enabled=bool(progress))
        self.skipped: dict[str, int] = {}
        self.matched = 0
        self.top, self.by, self.smallest = top, by, smallest
        self.axis_names = [a.name for a in grid.axes]

    def tables(self):
        grid, options, used, columns = self.grid, self.options, self.used, self.columns
        skipped, done = self.skipped, 0
        self.offset = 0  # flat index of the first point of the current flag setting
        for setting in grid.flag_settings():
            m = self.base.with_(**setting) if setting else self.base
            m = m.free(*(a.name for a in grid.axes))
            exprs = {c: _quantity_expr(m, c, options, used) for c in columns}
            cols = {c: Compiled(_fixed(e, m), grid.axes, c) for c, e in exprs.items()}
            checks = _constraints(m, grid)
            tests = []
            for text, (left, op, right) in zip(self.where, self.conditions):
                needed = {q: _quantity_expr(m, q, options, used) if q not in exprs else exprs[q]
                          for q, p in self.placeholders.items() if p in (left - right).free_symbols}
                diff = (left - right).xreplace({self.placeholders[q]: e for q, e in needed.items()})
                tests.append((Sign(_fixed(diff, m), grid.axes, f"--where {text!r}"), op))
            self._check_options()  # before any row: a streamed CSV is never cut short by it
            for chunk in grid.chunks():
                mask = np.ones(chunk.shape, dtype=bool)
                for message, check in checks:
                    ok = check(chunk)  # shaped like the axes it depends on
                    if ok.all():
                        continue
                    bad = int(np.count_nonzero(mask & ~ok))
                    if bad:
                        skipped[message] = skipped.get(message, 0) + bad
                    mask &= ok
                for compiled, op in tests:
                    mask &= np.asarray(_CMP[op](compiled.evaluate(chunk, flat=False), 0), dtype=bool)
                done += chunk.n
                self.progress.update(done)
                if not mask.any():
                    continue
                mask = mask.reshape(-1)
                pick = None if mask.all() else np.flatnonzero(mask)
                self.matched += chunk.n if pick is None else len(pick)
                if self.top is not None:
                    pick = self._candidates(chunk, cols, pick)
                rows = self._rows(chunk, pick, cols, setting)
                yield rows
            self.offset += grid.size
        self.progress.close()

    def _rows(self, chunk, pick, cols, setting) -> dict[str, np.ndarray]:
        """The rows of the points at block positions *pick* (None: every point of *chunk*)."""
        grid = self.grid
        if pick is None:
            rows = {"#": chunk.flat}
            for i, a in enumerate(grid.axes):
                rows[a.name] = spread(chunk.values(i), chunk)
            values = {c: compiled.evaluate(chunk) for c, compiled in cols.items()}
        else:
            pts = chunk.points(pick)
            rows = {"#": chunk.start + pick.astype(np.int64)}
            for i, a in enumerate(grid.axes):
                rows[a.name] = pts.values(i)
            values = {c: compiled.evaluate(pts) for c, compiled in cols.items()}
        rows["#"] = rows["#"] + self.offset
        for a in grid.flag_axes:
            rows[a.name] = np.full(len(rows["#"]), setting[a.name], dtype=object)
        rows.update(values)
        return rows

    def _candidates(self, chunk, cols, pick) -> np.ndarray:
        """Block positions that may be among the top K of this chunk (a superset: ties at the
        cut and, past int64, every point the float estimate cannot rule out; the exact ranking
        of ``_top`` decides)."""
        k, by, smallest = self.top, self.by, self.smallest
        if by in cols:
            compiled = cols[by]
            est = None
            if compiled.fits(chunk):
                key, slack = spread(compiled.evaluate(chunk, flat=False), chunk), 0
                if key.dtype == object:  # a fraction: rank by D * value (D > 0), still exact
                    key = spread(compiled.raw(chunk), chunk)
            else:
                est = compiled.estimate(chunk)
                if est is None:
                    key, slack = spread(compiled.raw(chunk), chunk), 0
                else:
                    key, slack = spread(est[0], chunk), 2 * est[1]
        elif by in self.axis_names:
            key, slack = spread(chunk.values(self.axis_names.index(by)), chunk), 0
        else:  # a flag: one value per setting, so grid order decides
            return (np.arange(chunk.n) if pick is None else pick)[:k]
        positions = np.arange(chunk.n) if pick is None else pick
        if len(positions) <= k:
            return positions
        sub = key if pick is None else key[pick]
        if sub.dtype == object:  # sizes past 2**53: no float can rank them
            cut = sorted(sub.tolist(), reverse=not smallest)[k - 1]
        elif smallest:
            cut = np.partition(sub, k - 1)[k - 1]
        else:
            cut = np.partition(sub, len(sub) - k)[len(sub) - k]
        near = (sub <= cut + slack) if smallest else (sub >= cut - slack)
        return positions[np.flatnonzero(near)]

    def _check_options(self) -> None:
        for k in self.options:
            if k not in self.used or self.used[k] is not None:
                why = f" ({self.used[k]})" if self.used.get(k) else ""
                raise SymgptError(f"option {k}={self.options[k]} does not apply to any of: "
                                  f"{', '.join(self.columns)}{why}")

    def result(self, table) -> SweepResult:
        notes = [f"skipped {n:,} points: {msg}" for msg, n in self.skipped.items()]
        return SweepResult(self.header, table, self.grid.total, self.matched, self.skipped, notes)


def _fixed(expr, model):
    """*expr* with the model's bound sizes substituted (the gridded ones are free)."""
    return expr.xreplace(model.bindings) if hasattr(expr, "xreplace") else expr


def _constraints(model, grid: Grid):
    """(message, chunk -> ok mask) for each of the architecture's constraints not waived."""
    import sympy

    from ..symbols import CANONICAL

    waive = model.preset.waive if model.preset else ()
    gridded = {CANONICAL[a.name] for a in grid.axes}
    out = []
    for c in model.arch.constraints:
        expr = _fixed(c.expr, model)
        if c.message in waive or not expr.free_symbols or expr.free_symbols - gridded:
            continue  # waived, decided at load time, or not decidable (a symbol left free)
        if c.kind == "integer":
            num, den = sympy.fraction(sympy.together(expr))
            n = Compiled(num, grid.axes, c.message)
            d = Compiled(den, grid.axes, c.message)

            def ok(chunk, n=n, d=d):
                a, b = n.evaluate(chunk, flat=False), d.evaluate(chunk, flat=False)
                return np.asarray((a % b == 0) & ((a > 0) == (b > 0)) & (a != 0), dtype=bool)
        else:  # "le": expr <= 0
            e = Compiled(expr, grid.axes, c.message)

            def ok(chunk, e=e):
                return np.asarray(sign(e, chunk) <= 0, dtype=bool)
        out.append((c.message, ok))
    return out


def _concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    if len(parts) == 1:
        return parts[0]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _top(table: dict[str, np.ndarray], by: str, k: int, smallest: bool) -> dict[str, np.ndarray]:
    """The *k* rows with the largest (smallest) *by*; ties keep grid order."""
    key, flat = table[by], table["#"]
    if key.dtype != object:
        if len(key) > k:  # only the rows at or beyond the k-th value (ties included) compete
            cut = np.partition(key, k - 1)[k - 1] if smallest else np.partition(key, len(key) - k)[len(key) - k]
            near = np.flatnonzero(key <= cut if smallest else key >= cut)
            key, flat, table = key[near], flat[near], {c: v[near] for c, v in table.items()}
        order = np.lexsort((flat, key if smallest else -key))[:k]
    else:
        sign = 1 if smallest else -1
        order = np.array(sorted(range(len(key)), key=lambda i: (sign * key[i], flat[i]))[:k], dtype=np.int64)
    return {c: v[order] for c, v in table.items()}

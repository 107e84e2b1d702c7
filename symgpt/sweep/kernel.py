"""One flag setting of a sweep, compiled, and the evaluation of a range of its chunks.

A ``Kernel`` holds what evaluating points needs and nothing else: the grid (its axes: ranges or
short value lists), the compiled closed forms (integer polynomial terms and small exact tables,
``compile.Compiled``), the model's constraints and the ``--where`` tests. It pickles small, so a
Dask worker receives it once and evaluates any range of chunks from two indices
(``Kernel.part``); the in-process loop calls the very same code, one chunk at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .compile import Compiled, sign, spread
from .grid import CHUNK, Grid
from .table import concat, csv_rows, top

_CMP = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
        "==": np.equal, "!=": np.not_equal}


class Divides:
    """The constraint num/den is a positive integer (e.g. d/h)."""

    def __init__(self, num: Compiled, den: Compiled):
        self.num, self.den = num, den

    def __call__(self, chunk) -> np.ndarray:
        a, b = self.num.evaluate(chunk, flat=False), self.den.evaluate(chunk, flat=False)
        return np.asarray((a % b == 0) & ((a > 0) == (b > 0)) & (a != 0), dtype=bool)


class AtMostZero:
    """The constraint expr <= 0 (e.g. T - T_max)."""

    def __init__(self, expr: Compiled):
        self.expr = expr

    def __call__(self, chunk) -> np.ndarray:
        return np.asarray(sign(self.expr, chunk) <= 0, dtype=bool)


@dataclass
class Part:
    """What evaluating some chunks gives: counts, and the rows kept (a table whose ``"#"`` column
    is the flat grid index, or their CSV text)."""

    points: int = 0
    matched: int = 0
    skipped: dict = field(default_factory=dict)   # constraint message -> points
    table: dict | None = None
    text: bytes = b""

    def add(self, other: "Part") -> None:
        """Add *other*'s counts to these (rows are merged by the caller)."""
        self.points += other.points
        self.matched += other.matched
        for message, n in other.skipped.items():
            self.skipped[message] = self.skipped.get(message, 0) + n


def merge(parts, k: int | None, by: str | None, smallest: bool) -> Part:
    """The counts of *parts* summed and their rows: the exact top *k* by *by* (any grouping of
    the parts gives the same table), or all of them in the order given."""
    out = Part()
    tables = []
    for p in parts:
        out.add(p)
        if p.table is not None:
            tables.append(p.table)
        out.text += p.text
    if tables:
        out.table = concat(tables)
        if k is not None:
            out.table = top(out.table, by, k, smallest)
    return out


class Kernel:
    """A sweep's flag *setting*, compiled over *grid*: *cols* (quantity -> ``Compiled``, in the
    CSV's column order after the grid's names), *checks* ((message, constraint) pairs), *tests*
    ((``Sign``, comparison) pairs from ``--where``). Rows carry the flat index ``offset`` + their
    index in the grid. With a *ranking*'s top K, a chunk keeps only the rows that may be among
    the top K by its column."""

    def __init__(self, grid: Grid, setting: dict, offset: int, cols: dict, checks: list, tests: list,
                 ranking=None, chunk: int = CHUNK):
        self.grid, self.setting, self.offset = grid, setting, offset
        self.cols, self.checks, self.tests = cols, checks, tests
        self.header = [*grid.order, *cols]
        top, by, smallest = (ranking.top, ranking.by, ranking.smallest) if ranking else (None, None, False)
        self.top, self.by, self.smallest, self.chunk = top, by, smallest, chunk
        self.axis_names = [a.name for a in grid.axes]

    def chunk_count(self) -> int:
        return self.grid.chunk_count(self.chunk)

    def part(self, first: int, last: int, mode: str) -> Part:
        """Chunks *first* .. *last* - 1 evaluated: *mode* ``"top"`` keeps their top K rows,
        ``"rows"`` every matching row (grid order), ``"csv"`` those rows as CSV text."""
        out, kept = Part(), []
        for chunk in self.grid.chunks(self.chunk, first, last):
            rows = self.rows(chunk, out)
            if rows is None:
                continue
            if mode == "csv":
                kept.append(csv_rows(self.header, rows).encode("utf-8"))
            elif mode == "top":
                kept = [top(concat([*kept, rows]), self.by, self.top, self.smallest)]
            else:
                kept.append(rows)
        if mode == "csv":
            out.text = b"".join(kept)
        elif kept:
            out.table = concat(kept)
        return out

    def rows(self, chunk, counts: Part) -> dict[str, np.ndarray] | None:
        """The rows of *chunk* that pass the constraints and ``--where`` (with ``top``: those that
        may be among its top K), or None; *counts* gets the chunk's points, matches and skips."""
        mask = np.ones(chunk.shape, dtype=bool)
        for message, check in self.checks:
            ok = check(chunk)  # shaped like the axes it depends on
            if ok.all():
                continue
            bad = int(np.count_nonzero(mask & ~ok))
            if bad:
                counts.skipped[message] = counts.skipped.get(message, 0) + bad
            mask &= ok
        for compiled, op in self.tests:
            mask &= np.asarray(_CMP[op](compiled.evaluate(chunk, flat=False), 0), dtype=bool)
        counts.points += chunk.n
        if not mask.any():
            return None
        mask = mask.reshape(-1)
        pick = None if mask.all() else np.flatnonzero(mask)
        counts.matched += chunk.n if pick is None else len(pick)
        if self.top is not None:
            pick = self._candidates(chunk, pick)
        return self._rows(chunk, pick)

    def _rows(self, chunk, pick) -> dict[str, np.ndarray]:
        """The rows of the points at block positions *pick* (None: every point of *chunk*)."""
        grid = self.grid
        if pick is None:
            rows = {"#": chunk.flat}
            for i, a in enumerate(grid.axes):
                rows[a.name] = spread(chunk.values(i), chunk)
            values = {c: compiled.evaluate(chunk) for c, compiled in self.cols.items()}
        else:
            pts = chunk.points(pick)
            rows = {"#": chunk.start + pick.astype(np.int64)}
            for i, a in enumerate(grid.axes):
                rows[a.name] = pts.values(i)
            values = {c: compiled.evaluate(pts) for c, compiled in self.cols.items()}
        rows["#"] = rows["#"] + self.offset
        for a in grid.flag_axes:
            rows[a.name] = np.full(len(rows["#"]), self.setting[a.name], dtype=object)
        rows.update(values)
        return rows

    def _candidates(self, chunk, pick) -> np.ndarray:
        """Block positions that may be among the top K of this chunk (a superset: ties at the
        cut and, past int64, every point the float estimate cannot rule out; the exact ranking
        of ``table.top`` decides)."""
        k, by, smallest = self.top, self.by, self.smallest
        if by in self.cols:
            compiled = self.cols[by]
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

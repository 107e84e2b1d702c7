"""Sweep grids: ``NAME=START:STOP:STEP`` axes over canonical symbols (and family flags), their
cartesian product, and the chunks it is evaluated in.

Grammar of one axis (values are parsed by ``exprparse.parse_value``; nothing is evaluated)::

    axis := NAME '=' START ':' STOP (':' STEP)?     integers, STOP included, STEP defaults to 1
          | NAME '=' VALUE (',' VALUE)*             an explicit list (integers, or true/false
                                                    for a flag)

Sizes must be positive integers. The product of all axes may have at most ``MAX_POINTS``
points. The first axis varies slowest (like nested loops written in the order given), except
that flag axes always form the outer loops (each flag setting is a different graph).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..core.errors import SymgptError

MAX_POINTS = 10**12         # points of one sweep (symbol axes times flag settings)
INT64_MAX = 2**63 - 1
CHUNK = 1 << 18             # points evaluated at once


@dataclass(frozen=True)
class Axis:
    """One gridded name: an arithmetic range (``start``, ``step``, ``count``) or a value list."""

    name: str
    start: int = 0
    step: int = 0
    count: int = 0
    values: tuple | None = None       # explicit values (a list axis, or a flag axis)
    flag: bool = False

    def __len__(self) -> int:
        return len(self.values) if self.values is not None else self.count

    def __getitem__(self, i: int):
        return self.values[i] if self.values is not None else self.start + i * self.step

    @property
    def max(self) -> int:
        return max(self.values) if self.values is not None else self.start + (self.count - 1) * self.step

    def all(self) -> list:
        return list(self.values) if self.values is not None else [self[i] for i in range(self.count)]

    def take(self, index: np.ndarray, exact: bool = False) -> np.ndarray:
        """The values at positions *index* (an array of any shape): int64, or Python ints in an
        object array when *exact* is asked or a value does not fit in int64."""
        index = np.asarray(index, dtype=np.int64)
        if self.max <= INT64_MAX:
            if self.values is None:
                out = np.int64(self.start) + index * np.int64(self.step)
            else:
                out = np.asarray(self.values, dtype=np.int64)[index]
            return out.astype(object) if exact else out  # astype(object): Python ints
        if self.values is None:  # past int64: exact arithmetic on Python ints, whole array at once
            return self.start + index.astype(object) * self.step
        return np.asarray(self.values, dtype=object)[index]

    def spec(self) -> str:
        if self.values is not None:
            return f"{self.name}=" + ",".join(_show(v) for v in self.values)
        return f"{self.name}={self.start}:{self.max}:{self.step}"


def _show(v) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def _value(text: str, name: str, what: str, spec: str):
    from ..core.exprparse import parse_value

    try:
        return parse_value(text)
    except SymgptError as e:
        raise SymgptError(f"--grid {spec}: {what} of {name}: {e}") from None


def _size(text: str, name: str, what: str, spec: str) -> int:
    from ..core.exprparse import parse_value

    try:
        v = parse_value(text)
    except SymgptError:
        v = None
    if v is None or isinstance(v, bool) or v <= 0:
        raise SymgptError(f"--grid {spec}: {what} of {name} must be a positive integer, got {text.strip()!r}")
    return v


def parse_axis(spec: str, flags: Mapping[str, object] | None = None) -> Axis:
    """One ``NAME=START:STOP:STEP`` or ``NAME=V1,V2,...`` axis; *flags* are the family's flags
    with their defaults (a flag may be gridded over a value list)."""
    from ..core.symbols import CANONICAL

    if not isinstance(spec, str) or spec.count("=") != 1 or len(spec) > 2000:
        raise SymgptError(f"--grid expects NAME=START:STOP:STEP or NAME=V1,V2,..., got {spec!r}")
    name, body = (part.strip(" \t") for part in spec.split("="))
    flags = flags or {}
    if name not in CANONICAL and name not in flags:
        raise SymgptError(
            f"--grid {spec}: unknown name {name!r}; grid names are symbols ({', '.join(CANONICAL)})"
            + (f" or flags ({', '.join(flags)})" if flags else ""))
    if not body:
        raise SymgptError(f"--grid {spec}: no values after '='")
    if name in flags:
        if ":" in body:
            raise SymgptError(f"--grid {spec}: a flag takes a list of values (e.g. {name}=true,false)")
        values = tuple(_value(t, name, "value", spec) for t in body.split(","))
        for v in values:  # the model checks each setting's meaning when it is built
            if isinstance(flags[name], bool) != isinstance(v, bool):
                raise SymgptError(f"--grid {spec}: flag {name} takes "
                                  f"{'true/false' if isinstance(flags[name], bool) else 'integers'}")
        return _unique(Axis(name, values=values, flag=True), spec)
    if ":" not in body:
        return _unique(Axis(name, values=tuple(_size(t, name, "value", spec) for t in body.split(","))), spec)
    parts = body.split(":")
    if len(parts) > 3:
        raise SymgptError(f"--grid {spec}: expected START:STOP:STEP")
    start = _size(parts[0], name, "START", spec)
    stop = _size(parts[1], name, "STOP", spec)
    step = _size(parts[2], name, "STEP", spec) if len(parts) == 3 else 1
    if stop < start:
        raise SymgptError(f"--grid {spec}: STOP ({stop}) is smaller than START ({start})")
    count = (stop - start) // step + 1
    if count > MAX_POINTS:
        raise SymgptError(f"--grid {spec}: {count:,} values; a sweep has at most {MAX_POINTS:,} points")
    return Axis(name, start, step, count)


def _unique(axis: Axis, spec: str) -> Axis:
    if len(set(axis.values)) != len(axis.values):
        raise SymgptError(f"--grid {spec}: a value is listed twice")
    if len(axis.values) > MAX_POINTS:
        raise SymgptError(f"--grid {spec}: too many values")
    return axis


class Grid:
    """The cartesian product of symbol axes (flag axes are kept aside: ``flag_axes``)."""

    def __init__(self, axes: Sequence[Axis]):
        seen = set()
        for a in axes:
            if a.name in seen:
                raise SymgptError(f"--grid {a.name} is given twice")
            seen.add(a.name)
        self.axes = [a for a in axes if not a.flag]
        self.flag_axes = [a for a in axes if a.flag]
        self.order = [a.name for a in axes]          # the columns, in the order given
        self.shape = tuple(len(a) for a in self.axes)
        self.size = prod(self.shape)                 # points per flag setting
        self.settings = prod(len(a) for a in self.flag_axes)
        total = self.size * self.settings
        if total > MAX_POINTS:
            raise SymgptError(f"the grid has {total:,} points; a sweep has at most {MAX_POINTS:,} "
                              "(narrow a range or raise its STEP)")
        self.total = total

    @classmethod
    def parse(cls, specs: Iterable[str] | Mapping[str, object], flags: Mapping[str, object] | None = None
              ) -> "Grid":
        """From ``["d=512:4096:128", "L=12,24"]`` or ``{"d": "512:4096:128", "L": [12, 24]}``."""
        if isinstance(specs, Mapping):
            specs = [f"{k}={v}" if isinstance(v, str) else f"{k}=" + ",".join(_show(x) for x in v)
                     for k, v in specs.items()]
        return cls([parse_axis(s, flags) for s in specs])

    def flag_settings(self) -> Iterator[dict]:
        """Each combination of the flag axes (the first axis slowest)."""
        from itertools import product

        for combo in product(*(a.values for a in self.flag_axes)):
            yield dict(zip((a.name for a in self.flag_axes), combo))

    def _layout(self, size: int):
        """How ``chunks`` cuts the grid: (split, j, run, per) -- the outer axes ``< split`` fixed,
        ``run`` positions of axis *split* (``per`` runs cover it), the axes from *j* whole; None
        when the whole grid is one chunk."""
        shape = self.shape
        j = len(shape)  # the first axis from which the inner axes fit in one chunk
        while j > 0 and prod(shape[j - 1:]) <= size:
            j -= 1
        if j == 0:
            return None
        run = max(1, size // prod(shape[j:]))
        return j - 1, j, run, -(-shape[j - 1] // run)

    def chunk_count(self, size: int = CHUNK) -> int:
        """The number of chunks ``chunks(size)`` yields."""
        layout = self._layout(size)
        return 1 if layout is None else prod(self.shape[:layout[0]]) * layout[3]

    def chunk_points(self, size: int = CHUNK, first: int = 0, last: int | None = None) -> int:
        """The number of points in chunks *first* .. *last* - 1 of ``chunks(size)`` (arithmetic
        only: no block is built)."""
        count = self.chunk_count(size)
        last = count if last is None else min(last, count)
        layout = self._layout(size)
        if layout is None:
            return self.size if first < last else 0
        split, j, run, per = layout
        inner = prod(self.shape[j:])
        return sum(min(run, self.shape[split] - (k % per) * run) for k in range(max(first, 0), last)) * inner

    def chunks(self, size: int = CHUNK, first: int = 0, last: int | None = None) -> Iterator["Chunk"]:
        """Rectangular blocks of the grid, each a contiguous run of flat indices: the outer
        axes fixed, a range of one axis, the inner axes whole (so each axis' values are a short
        array that NumPy broadcasts, as a hand-written evaluation would). Blocks *first* ..
        *last* - 1 only (in grid order), when given: a task evaluates its blocks from two numbers."""
        shape = self.shape
        count = self.chunk_count(size)
        last = count if last is None else min(last, count)
        layout = self._layout(size)
        if layout is None:
            if first < last:
                yield Chunk(self, (0,) * len(shape), shape)
            return
        split, j, run, per = layout
        for k in range(max(first, 0), last):
            o, r = divmod(k, per)
            outer = tuple(int(x) for x in np.unravel_index(o, shape[:split])) if split else ()
            lo = r * run
            n = min(run, shape[split] - lo)
            yield Chunk(self, (*outer, lo, *(0,) * (len(shape) - j)), (*(1,) * split, n, *shape[j:]))


class Chunk:
    """A block of the grid: per axis, positions ``lo[i] .. lo[i] + shape[i] - 1``; its points
    are flat indices ``start .. stop - 1`` (C order). ``index[i]`` holds axis i's positions as an
    array shaped to broadcast (its length on dimension i, 1 elsewhere); an evaluation returns an
    array broadcast to ``shape`` at most."""

    def __init__(self, grid: Grid, lo: tuple, shape: tuple):
        self.grid, self.lo, self.shape = grid, lo, shape
        self.n = prod(shape)
        self.start = int(np.ravel_multi_index(lo, grid.shape)) if grid.axes else 0
        self.stop = self.start + self.n
        nd = len(shape)
        self.index = tuple(np.arange(lo[i], lo[i] + shape[i], dtype=np.int64).reshape(
            tuple(shape[i] if k == i else 1 for k in range(nd))) for i in range(nd))
        self._values: dict = {}

    @property
    def flat(self) -> np.ndarray:
        return np.arange(self.start, self.stop, dtype=np.int64)

    def values(self, i: int, exact: bool = False) -> np.ndarray:
        key = (i, exact)
        if key not in self._values:
            self._values[key] = self.grid.axes[i].take(self.index[i], exact)
        return self._values[key]

    def points(self, positions: np.ndarray) -> "Points":
        """The points at *positions* (offsets into the block, C order) as a ``Points`` set."""
        local = np.unravel_index(positions, self.shape) if self.shape else ()
        return Points(self.grid.axes, tuple(ix + lo for ix, lo in zip(local, self.lo)), len(positions))


class Points:
    """An explicit set of grid points: ``index[i]`` is a flat array of axis i's positions."""

    def __init__(self, axes: Sequence[Axis], index: tuple, n: int):
        self.axes, self.index, self.n = axes, index, n
        self.shape = (n,)

    def values(self, i: int, exact: bool = False) -> np.ndarray:
        return self.axes[i].take(self.index[i], exact)

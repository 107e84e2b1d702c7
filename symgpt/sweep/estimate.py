"""How long a sweep will take and how much it will write, said before it starts.

The rate is measured on the sweep itself: a few small samples of its grid (the first points,
the middle, the last: sizes grow along the grid, and past 2**63 the exact arithmetic is slower)
are evaluated exactly as the sweep will evaluate them, and timed. Time per point times the
points, divided among the worker processes, plus their start-up, is the expected time; the CSV
bytes of the samples per point, times the points, the expected output. Samples are small chunks,
whose fixed cost per chunk weighs more than in the sweep's own large chunks: the time is an
upper estimate (``benchmarks/sweep_estimate.py`` measures estimate against actual; results in
``benchmarks/SWEEP_ESTIMATE.md``).

A sweep past CONFIRM_POINTS points, or expected to write more than CONFIRM_BYTES, runs only when
the user confirms it (``--yes``); the refusal names the limit. These limits are counts, never
timings, so the same command is refused or run on any machine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..core.errors import SymgptError
from .kernel import Part
from .run import duration
from .table import csv_header, csv_rows

#: a sweep with more points runs only with --yes (about 5 min at the 31.5 M points/s that
#: benchmarks/RESULTS.md measured with 2 Dask workers; hours for exact arithmetic past 2**63)
CONFIRM_POINTS = 10**10
#: a sweep expected to write more CSV bytes runs only with --yes
CONFIRM_BYTES = 10 * 2**30
#: grids smaller than this are not sampled (they take seconds; progress covers the rest)
SAMPLE_FROM = 1 << 20
#: points in one sample; samples at the start, middle and end of each flag setting's grid
SAMPLE_POINTS = 1 << 15
#: the most seconds spent sampling (the samples taken by then are used)
SAMPLE_SECONDS = 3.0
#: a sweep expected to take longer than this says so before it starts
SAY_AFTER = 60.0
#: seconds to start local Dask worker processes (measured: benchmarks/SWEEP_ESTIMATE.md)
DASK_START = 6.0


@dataclass
class Estimate:
    points: int              # grid points
    seconds: float           # expected wall time
    bytes: int | None        # expected CSV bytes (None: the output is only the rows kept)
    sampled: int             # points evaluated to measure the rate
    workers: int             # local worker processes (0: this process; -1: a named cluster)

    def describe(self) -> str:
        where = {0: "in this process", -1: "on one core (the cluster's workers share it)"}.get(
            self.workers, f"on {self.workers} worker processes")
        text = f"about {duration(self.seconds)} {where}"
        if self.bytes is not None:
            text += f", writing about {size(self.bytes)}"
        return text


def size(n: int) -> str:
    """*n* bytes in words: '512 B', '3.4 MB', '1.2 TB' (powers of 1000)."""
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n} B"


def _samples(kernel):
    """(first, last) chunk indices of SAMPLE_POINTS-point chunks to time: start, middle, end."""
    n = kernel.grid.chunk_count(SAMPLE_POINTS)
    return sorted({0, n // 2, n - 1})


def measure(plan, mode: str) -> Estimate:
    """The expected time and output of *plan* (``run._Plan``), from timed samples of its grid;
    *mode* is how its rows come out: ``"csv"`` (streamed), ``"rows"`` or ``"top"``."""
    seconds = points = written = 0
    start = time.perf_counter()
    for kernel in plan.kernels:
        for k in _samples(kernel):
            counts = Part()
            t = time.perf_counter()
            for chunk in kernel.grid.chunks(SAMPLE_POINTS, k, k + 1):
                rows = kernel.rows(chunk, counts)
                if rows is not None and mode == "csv":
                    written += len(csv_rows(kernel.header, rows).encode("utf-8"))
            seconds += time.perf_counter() - t
            points += counts.points
            if time.perf_counter() - start > SAMPLE_SECONDS:
                break
        if time.perf_counter() - start > SAMPLE_SECONDS:
            break
    total = plan.grid.total
    per_point = seconds / max(points, 1)
    workers = plan.workers
    expected = total * per_point / (workers if workers > 0 else 1) + (DASK_START if workers > 0 else 0)
    out = None
    if mode == "csv":
        out = len(csv_header(plan.header).encode("utf-8")) + round(written / max(points, 1) * total)
    return Estimate(total, expected, out, points, workers)


def check_job(plan, mode: str, confirmed: bool, stream) -> Estimate | None:
    """Before a large sweep: refuse it past CONFIRM_POINTS points or CONFIRM_BYTES of output
    unless *confirmed*, and say on *stream* how long it is expected to take (when more than
    SAY_AFTER) and how much it will write. Small grids are not sampled (None)."""
    total = plan.grid.total
    if total < SAMPLE_FROM:
        return None
    est = measure(plan, mode)
    if not confirmed and total > CONFIRM_POINTS:
        raise SymgptError(f"the sweep has {total:,} points, more than the limit of "
                          f"{CONFIRM_POINTS:,} that runs unconfirmed (expected: {est.describe()}); "
                          "add --yes to run it, or narrow the grid")
    if not confirmed and est.bytes is not None and est.bytes > CONFIRM_BYTES:
        raise SymgptError(f"the sweep would write about {size(est.bytes)} of CSV, more than the "
                          f"limit of {size(CONFIRM_BYTES)} that runs unconfirmed (expected: "
                          f"{est.describe()}); add --yes to run it, narrow it with --where, or "
                          "keep the best with --top K --by QUANTITY")
    if est.seconds > SAY_AFTER:
        stream.write(f"symgpt: sweep of {total:,} points: expected {est.describe()} (rate measured "
                     f"on {est.sampled:,} sample points)\n")
        stream.flush()
    return est

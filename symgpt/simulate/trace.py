"""Request mixes: a trace read from CSV, or drawn from named distributions.

A trace is a CSV file with the header ``arrival_time_s,prompt_tokens,output_tokens`` (in any
column order; other columns ignored), one request a row, arrival times in seconds, not
decreasing; prompt and output lengths positive integers.

Distributions (``--prompt-dist``, ``--output-dist``), integers of tokens:

* ``const:N`` -- always N;
* ``uniform:LO:HI`` -- each integer from LO to HI equally likely (both included);
* ``exp:MEAN`` -- exponential with mean MEAN, rounded up to a whole token (at least 1);
* ``lognormal:MEDIAN:SIGMA`` -- log-normal with that median and shape SIGMA, rounded up.

Arrivals: a Poisson process at ``--rate`` requests per second (exponential gaps), or all at
time 0 with ``--rate inf``. Draws use NumPy's PCG64 generator, so a given stream number gives the same
trace on every machine.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass

from ..core.errors import SymgptError

COLUMNS = ("arrival_time_s", "prompt_tokens", "output_tokens")
DISTRIBUTIONS = {"const": 1, "uniform": 2, "exp": 1, "lognormal": 2}
DIST_HELP = "const:N, uniform:LO:HI, exp:MEAN or lognormal:MEDIAN:SIGMA (tokens)"


@dataclass(frozen=True)
class Trace:
    arrival: list      # seconds (floats), not decreasing
    prompt: list       # tokens (ints >= 1)
    output: list       # tokens (ints >= 1)
    source: str        # where it came from, in words

    def __len__(self) -> int:
        return len(self.arrival)


def _number(text, what, kind):
    try:
        v = kind(text.strip())
    except (ValueError, AttributeError):
        raise SymgptError(f"{what}: not a number: {str(text)[:40]!r}") from None
    if isinstance(v, float) and not math.isfinite(v):
        raise SymgptError(f"{what}: not a finite number: {str(text)[:40]!r}")
    return v


def _length(text, what):
    t = str(text).strip()
    v = _number(t, what, float)
    if v != int(v):
        raise SymgptError(f"{what}: not a whole number of tokens: {t[:40]!r}")
    if v < 1:
        raise SymgptError(f"{what}: {'negative' if v < 0 else 'zero'} length {t[:40]!r} (at least 1 token)")
    return int(v)


def read_trace(path) -> Trace:
    """The requests of a CSV trace, checked (one clear line for the first bad cell)."""
    if "\x00" in str(path) or not str(path).strip():
        raise SymgptError("the trace's file name is empty or holds a NUL character")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        from ..core.io import path_error

        raise path_error(path, e, "read") from None
    except (UnicodeDecodeError, csv.Error) as e:
        raise SymgptError(f"cannot read the trace {str(path)[:80]}: {e.__class__.__name__}") from None
    if not rows:
        raise SymgptError(f"the trace {str(path)[:80]} is empty (it needs the header {','.join(COLUMNS)})")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise SymgptError(f"the trace's header lacks {', '.join(missing)} (it needs {','.join(COLUMNS)})")
    at = [header.index(c) for c in COLUMNS]
    arrival, prompt, output = [], [], []
    last = -math.inf
    for n, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) < len(header):
            raise SymgptError(f"trace line {n}: {len(row)} cells, the header has {len(header)}")
        t = _number(row[at[0]], f"trace line {n}, arrival_time_s", float)
        if t < 0:
            raise SymgptError(f"trace line {n}: negative arrival time {row[at[0]].strip()[:40]!r}")
        if t < last:
            raise SymgptError(f"trace line {n}: arrival times are not sorted ({t:g} s after {last:g} s)")
        last = t
        arrival.append(t)
        prompt.append(_length(row[at[1]], f"trace line {n}, prompt_tokens"))
        output.append(_length(row[at[2]], f"trace line {n}, output_tokens"))
    if not arrival:
        raise SymgptError(f"the trace {str(path)[:80]} has no requests")
    return Trace(arrival, prompt, output, f"the trace {path}")


def parse_dist(text: str, what: str):
    """(name, parameters) of a distribution's text, checked."""
    parts = str(text).strip().split(":")
    name = parts[0].lower()
    if name not in DISTRIBUTIONS:
        raise SymgptError(f"{what}: unknown distribution {parts[0][:30]!r}; use {DIST_HELP}")
    if len(parts) - 1 != DISTRIBUTIONS[name]:
        raise SymgptError(f"{what}: {name} takes {DISTRIBUTIONS[name]} number(s); use {DIST_HELP}")
    if name in ("const", "uniform"):
        args = [_length(p, what) for p in parts[1:]]
        if name == "uniform" and args[0] > args[1]:
            raise SymgptError(f"{what}: uniform:LO:HI needs LO <= HI")
    else:
        args = [_number(p, what, float) for p in parts[1:]]
        if args[0] <= 0 or (name == "lognormal" and args[1] < 0):
            raise SymgptError(f"{what}: {name} needs a positive mean or median (and a shape >= 0)")
    return name, args


def _draw(rng, dist, n):
    import numpy as np

    name, a = dist
    if name == "const":
        return [a[0]] * n
    if name == "uniform":
        return rng.integers(a[0], a[1] + 1, size=n).tolist()
    x = rng.exponential(a[0], size=n) if name == "exp" else a[0] * np.exp(a[1] * rng.standard_normal(n))
    return np.maximum(np.ceil(x), 1).astype(np.int64).tolist()


def draw_trace(requests: int, rate, prompt_dist: str, output_dist: str, stream: int = 0) -> Trace:
    """*requests* requests arriving as a Poisson process at *rate* per second (``inf``: all at
    0), lengths drawn from the two distributions; the same *stream*, the same trace."""
    import numpy as np

    if requests < 1:
        raise SymgptError("--requests must be at least 1")
    rate = _number(str(rate), "--rate", float) if str(rate).strip().lower() not in ("inf", "infinity") else math.inf
    if not rate > 0:
        raise SymgptError("--rate must be positive (requests per second, or inf)")
    pd, od = parse_dist(prompt_dist, "--prompt-dist"), parse_dist(output_dist, "--output-dist")
    rng = np.random.Generator(np.random.PCG64(stream))
    arrival = [0.0] * requests if math.isinf(rate) else np.cumsum(rng.exponential(1 / rate, size=requests)).tolist()
    source = (f"{requests:,} requests, {'all at 0 s' if math.isinf(rate) else f'Poisson arrivals at {rate:g}/s'}, "
              f"prompts {prompt_dist}, outputs {output_dist}, generator PCG64({stream})")
    return Trace(arrival, _draw(rng, pd, requests), _draw(rng, od, requests), source)

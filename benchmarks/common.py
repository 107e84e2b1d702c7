"""What every benchmark section shares: running a child interpreter, timing commands, medians,
formatting, and a description of the machine."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def child(code: str, timeout: float = 1800, python: str | Path = PY) -> dict:
    """Run *code* in a fresh interpreter (from the repository root); its last stdout line is JSON."""
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"benchmark child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def wall(args: list[str], runs: int) -> list[float]:
    """Wall-clock seconds of *runs* runs of a command (each a fresh process)."""
    times = []
    for _ in range(runs):
        s = time.perf_counter()
        out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=1800)
        times.append(time.perf_counter() - s)
        if out.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed:\n{out.stderr[-3000:]}")
    return times


def med(xs) -> float:
    return statistics.median(xs)


def secs(x: float) -> str:
    if x < 1e-3:
        return f"{x * 1e6:.0f} µs"
    return f"{x * 1e3:.1f} ms" if x < 1 else f"{x:.2f} s"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}×" if a / b >= 10 else f"{a / b:.2f}×"


def met(ok: bool) -> str:
    return "yes" if ok else "**no**"


def say(*x) -> None:
    print(*x, file=sys.stderr, flush=True)


def version(pkg: str) -> str:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine() -> dict:
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "load": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "commit": sha.stdout.strip() or "?",
        **{p: version(p) for p in ("symgpt", "sympy", "numpy", "networkx", "torch", "transformers")},
    }

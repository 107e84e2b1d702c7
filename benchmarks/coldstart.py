"""Start-up of ``symgpt params gpt2-small`` against ``python -c "import sympy"``, interleaved.

    python benchmarks/coldstart.py [--runs 7]

Each round runs, in fresh interpreters and one after the other: ``python -c pass``,
``python -c "import sympy"``, ``python -c "import sympy, networkx"``, ``symgpt params
gpt2-small`` with an empty derivation cache (a temporary ``SYMGPT_CACHE_DIR``, cleared before
each run), ``symgpt params gpt2-small --no-cache`` and ``symgpt --help``. Interleaving the
commands puts the same background load on each; the medians and their ratios to ``import sympy``
are printed (the goal: cold ≤ 1.5× ``import sympy``). Also says which heavy modules (networkx,
numpy, jinja2) the cold command imported. No test asserts a timing.

``--bytecode`` measures with Python's compiled-bytecode cache (``PYTHONPYCACHEPREFIX`` in a
temporary folder, ``PYTHONDONTWRITEBYTECODE`` unset, one warm-up run first), as an installed
package runs; without it the environment decides (with ``PYTHONDONTWRITEBYTECODE=1`` and a source
checkout, every run compiles symgpt's own modules again, while SymPy's come compiled from its
installation).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

#: what a command imported (run in place of ``python -m symgpt``)
_PROBE = ("import runpy, sys, json\n"
          "sys.argv = ['symgpt', *sys.argv[1:]]\n"
          "try:\n    runpy.run_module('symgpt', run_name='__main__')\n"
          "except SystemExit:\n    pass\n"
          "print(json.dumps(sorted(m for m in ('networkx', 'numpy', 'jinja2', 'sympy') if m in sys.modules)),"
          " file=sys.stderr)\n")


def _time(cmd: list[str], env: dict, root: Path = ROOT) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="rounds (default 7)")
    ap.add_argument("--bytecode", action="store_true", help="with a bytecode cache (see above)")
    ap.add_argument("--against", metavar="DIR", help="also time the symgpt commands of another source "
                    "tree (an older commit, unpacked with 'git archive'), interleaved with these")
    a = ap.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="symgpt-startup-"))
    env = {**os.environ, "SYMGPT_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    pyc = None
    if a.bytecode:
        pyc = Path(tempfile.mkdtemp(prefix="symgpt-startup-pyc-"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pyc)
    params = [PY, "-m", "symgpt", "params", "gpt2-small"]
    cmds = {
        "python -c pass": [PY, "-c", "pass"],
        "import sympy": [PY, "-c", "import sympy"],
        "import sympy, networkx": [PY, "-c", "import sympy, networkx"],
        "params gpt2-small (cold cache)": params,
        "params gpt2-small --no-cache": [*params, "--no-cache"],
        "symgpt --help": [PY, "-m", "symgpt", "--help"],
    }
    roots = {name: ROOT for name in cmds}
    if a.against:
        other = Path(a.against).resolve()
        for name in [n for n in cmds if n.startswith(("params", "symgpt"))]:
            cmds[f"{name} [{other.name}]"] = cmds[name]
            roots[f"{name} [{other.name}]"] = other
    times: dict[str, list[float]] = {k: [] for k in cmds}
    try:
        if a.bytecode:  # compile once
            for name, cmd in cmds.items():
                _time(cmd, {**env, "PYTHONPATH": str(roots[name])}, roots[name])
        for _ in range(a.runs):
            for name, cmd in cmds.items():
                if "cold" in name:
                    shutil.rmtree(cache, ignore_errors=True)
                times[name].append(_time(cmd, {**env, "PYTHONPATH": str(roots[name])}, roots[name]))
        shutil.rmtree(cache, ignore_errors=True)
        probe = subprocess.run([PY, "-c", _PROBE, "params", "gpt2-small"], cwd=ROOT, env=env,
                               capture_output=True, text=True, check=True)
        imported = json.loads(probe.stderr.strip().splitlines()[-1])
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        if pyc is not None:
            shutil.rmtree(pyc, ignore_errors=True)
    base = statistics.median(times["import sympy"])
    how = "bytecode cached" if a.bytecode else f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')}"
    print(f"medians of {a.runs} interleaved runs ({how}; load {os.getloadavg()[0]:.2f}):")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"  {name:40s} {m * 1000:7.0f} ms  {m / base:5.2f}x import sympy")
    print(f"  the cold command imported: {', '.join(imported) or 'none of networkx, numpy, jinja2, sympy'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

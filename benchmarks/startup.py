"""Start-up: ``symgpt --help`` and ``symgpt params gpt2-small`` (derivation cache cold, warm, and
``--no-cache``) vs a bare ``python -c "import sympy"`` and ``python -c pass`` , in interleaved rounds (each
round runs every command once, so background load falls on all of them alike)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .common import PY, ROOT, med, met, ratio, say, secs, wall

PARAMS = [PY, "-m", "symgpt", "params", "gpt2-small"]
SYMPY = 'python -c "import sympy"'


def measure(opts) -> dict:
    say("start-up ...")
    cache_dir = Path(tempfile.mkdtemp(prefix="symgpt-bench-cache-"))  # never the user's cache
    old = os.environ.get("SYMGPT_CACHE_DIR")
    os.environ["SYMGPT_CACHE_DIR"] = str(cache_dir)
    try:
        names = ("python -c pass", "python -c \"import sympy\"", "symgpt --help",
                 "symgpt params gpt2-small --no-cache", "symgpt params gpt2-small (cold cache)",
                 "symgpt params gpt2-small (warm cache)")
        out = {n: [] for n in names}
        for _ in range(opts.runs):        # interleaved: each round puts the same load on every command
            out["python -c pass"] += wall([PY, "-c", "pass"], 1)
            out["python -c \"import sympy\""] += wall([PY, "-c", "import sympy"], 1)
            out["symgpt --help"] += wall([PY, "-m", "symgpt", "--help"], 1)
            out["symgpt params gpt2-small --no-cache"] += wall([*PARAMS, "--no-cache"], 1)
            subprocess.run([PY, "-m", "symgpt", "cache", "clear"], capture_output=True, cwd=ROOT, check=True)
            out["symgpt params gpt2-small (cold cache)"] += wall(PARAMS, 1)
            out["symgpt params gpt2-small (warm cache)"] += wall(PARAMS, 1)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
        if old is None:
            os.environ.pop("SYMGPT_CACHE_DIR", None)
        else:
            os.environ["SYMGPT_CACHE_DIR"] = old
    return out


def rows(res, ctx) -> list[tuple]:
    sympy_s, pass_s = med(res[SYMPY]), med(res["python -c pass"])
    helps = med(res["symgpt --help"])
    p_warm = med(res["symgpt params gpt2-small (warm cache)"])
    p_cold = med(res["symgpt params gpt2-small (cold cache)"])
    p_none = med(res["symgpt params gpt2-small --no-cache"])
    return [
        ("`symgpt --help`", secs(helps), secs(sympy_s), ratio(helps, sympy_s), "no SymPy import", ""),
        ("`symgpt params gpt2-small`, warm cache", secs(p_warm), f"{secs(pass_s)} (`python -c pass`)",
         ratio(p_warm, pass_s), "≤ 4× `python -c pass`", met(p_warm <= 4 * pass_s)),
        ("`symgpt params gpt2-small`, cold cache", secs(p_cold), secs(sympy_s), ratio(p_cold, sympy_s),
         "≤ 1.5× `import sympy`", met(p_cold <= 1.5 * sympy_s)),
        ("`symgpt params gpt2-small --no-cache`", secs(p_none), secs(sympy_s), ratio(p_none, sympy_s), "", ""),
    ]


def details(res, ctx) -> list[str]:
    return [
        f"- Start-up, interleaved rounds (the ratios above are to these): `python -c pass` "
        f"{secs(med(res['python -c pass']))}; `python -c \"import sympy\"` "
        f"{secs(med(res[SYMPY]))}; `symgpt --help` {secs(med(res['symgpt --help']))} (imports neither SymPy "
        "nor networkx); `symgpt params gpt2-small` "
        f"{secs(med(res['symgpt params gpt2-small --no-cache']))} with `--no-cache` (SymPy and the "
        f"derivation; not networkx), {secs(med(res['symgpt params gpt2-small (cold cache)']))} with an empty cache (the same, "
        f"and two entries written), {secs(med(res['symgpt params gpt2-small (warm cache)']))} warm (two JSON "
        "entries read, no SymPy, no networkx; the cache lives in a temporary folder here)."]

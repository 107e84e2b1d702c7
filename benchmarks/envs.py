"""Virtual environments of the peers, created and installed into on first use, reused after.

Each peer lives in a folder of its own under ``benchmarks/.envs/`` (git-ignored):

- ``calflops``, ``fvcore``, ``ptflops``: created with ``--system-site-packages`` so that the
  machine's torch 2.13.0 (CPU) and transformers are reused; every install command that could
  bring torch pins ``torch==2.13.0`` (an unpinned torch would download a multi-GB CUDA build);
- ``llm-analysis``: an isolated venv (no system packages): llm-analysis 0.2.2 pins
  ``transformers < 5`` and ``huggingface-hub < 0.15``, which must not meet the machine's
  transformers 5. It needs no torch.

An environment is ready when its marker file holds the exact install command that built it;
a changed command, or a half-built folder, is rebuilt from scratch.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ENVS = Path(__file__).resolve().parent / ".envs"
TORCH = "torch==2.13.0"

# name -> (reuse the system's site-packages?, the pip requirements installed into it)
SPECS: dict[str, tuple[bool, tuple[str, ...]]] = {
    "calflops": (True, ("calflops==0.3.2", TORCH)),
    "fvcore": (True, ("fvcore==0.1.5.post20221221", TORCH)),
    "ptflops": (True, ("ptflops==0.7.5", TORCH)),
    "llm-analysis": (False, ("llm-analysis==0.2.2",)),
}


def python(name: str) -> Path:
    return ENVS / name / "bin" / "python"


def ensure(name: str, log=lambda *a: None) -> Path:
    """The interpreter of peer ``name``'s environment, created and installed into if needed."""
    system, reqs = SPECS[name]
    folder, marker = ENVS / name, ENVS / name / "symgpt-bench.json"
    want = {"system_site_packages": system, "requirements": list(reqs)}
    if marker.is_file():
        try:
            if json.loads(marker.read_text()) == want and python(name).exists():
                return python(name)
        except ValueError:
            pass
    log(f"creating the {name} environment in {folder} (first use; installs from the package registry) ...")
    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "venv", *(["--system-site-packages"] if system else []), str(folder)]
    subprocess.run(cmd, check=True, capture_output=True)
    out = subprocess.run([str(python(name)), "-m", "pip", "install", "--disable-pip-version-check", *reqs],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"installing {' '.join(reqs)} into {folder} failed:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    marker.write_text(json.dumps(want))
    return python(name)


def versions(name: str, packages: tuple[str, ...]) -> dict[str, str]:
    """The versions of ``packages`` as peer ``name``'s environment sees them."""
    code = ("import json, importlib.metadata as m\n"
            "def v(p):\n try: return m.version(p)\n except m.PackageNotFoundError: return 'not installed'\n"
            f"print(json.dumps({{p: v(p) for p in {list(packages)!r}}}))")
    out = subprocess.run([str(python(name)), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


if __name__ == "__main__":  # python benchmarks/envs.py [name ...]: build (or check) the environments
    for n in sys.argv[1:] or SPECS:
        print(n, ensure(n, log=print))

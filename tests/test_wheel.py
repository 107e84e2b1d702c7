"""A built wheel carries its templates: build the wheel of this checkout, install it into a fresh
virtual environment (SymPy and the rest come from the system's site-packages), and run
``symgpt latex`` and ``symgpt report`` from a folder outside the checkout. Oracles: the block's
parameter count by hand (12·d² + 13·d at d = 768 is 7,077,888 + 9,984 = 7,087,872), the checkout's
own ``symgpt latex`` output, and the committed report in ``output/gpt2-small``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "output" / "gpt2-small"
#: what a source distribution holds: the build reads nothing else
SOURCES = ("pyproject.toml", "setup.py", "README.md", "symgpt", "templates")


def _run(cmd, cwd, env=None, timeout=300):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"{cmd}: {r.stderr[-2000:]}"
    return r.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the venv's ``symgpt`` script, an environment without this checkout on PYTHONPATH, a
    working folder outside the checkout)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src, dist = tmp / "src", tmp / "dist"   # a copy: the build leaves build/ and *.egg-info behind
    _copy_sources(src)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
          "-w", str(dist), str(src)], cwd=tmp)
    (wheel,) = dist.glob("symgpt-*.whl")
    venv, env = _venv(tmp / "venv")
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--no-index", "-q",
          str(wheel)], cwd=tmp, env=env)
    work = tmp / "elsewhere"
    work.mkdir()
    return wheel, venv, env, work


def _venv(venv: Path):
    """A fresh virtual environment that sees the system's packages (SymPy, pip, setuptools), and
    an environment for running in it without this checkout on PYTHONPATH."""
    _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], cwd=venv.parent)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SYMGPT_TEMPLATES")}
    return venv, env


def _copy_sources(src: Path) -> None:
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, src / name)


def test_the_wheel_holds_every_module_and_template(installed):
    wheel = installed[0]
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    modules = {str(p.relative_to(ROOT)) for p in (ROOT / "symgpt").rglob("*.py")}
    templates = {f"symgpt/templates/{p.name}" for p in (ROOT / "templates").glob("*.tex")}
    assert len(templates) >= 10
    assert modules <= names, sorted(modules - names)
    assert templates <= names, sorted(templates - names)


def test_the_installed_symgpt_is_the_wheel(installed):
    _, venv, env, work = installed
    where = _run([str(venv / "bin" / "python"), "-c",
                  "import symgpt.render.latex as l; print(l.__file__); print(l.template_dir())"],
                 cwd=work, env=env).split()
    assert all(Path(w).resolve().is_relative_to(venv.resolve()) for w in where), where
    assert where[1].endswith(os.path.join("symgpt", "templates"))


def test_latex_blocks_from_the_wheel(installed):
    _, venv, env, work = installed
    tex = _run([str(venv / "bin" / "symgpt"), "latex", "gpt2-small", "--what", "blocks"], cwd=work, env=env)
    assert "7{,}087{,}872" in tex                      # 12·768² + 13·768, by hand
    ours = _run([sys.executable, "-m", "symgpt", "latex", "gpt2-small", "--what", "blocks"], cwd=ROOT)
    assert tex == ours


def test_report_from_the_wheel_equals_the_committed_one(installed):
    _, venv, env, work = installed
    out = work / "report"
    _run([str(venv / "bin" / "symgpt"), "report", "gpt2-small", "--no-pdf", "-o", str(out)], cwd=work, env=env)
    got = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    want = {str(p.relative_to(REPORT)) for p in REPORT.rglob("*") if p.is_file()} - {"latex/report.pdf"}
    assert got == want
    listings = {"index.md", ".symgpt-files"}  # they name the PDF, which --no-pdf leaves out
    for name in sorted(want - listings):
        assert (out / name).read_bytes() == (REPORT / name).read_bytes(), name
    for name in sorted(listings):
        lines = [line for line in (REPORT / name).read_text().splitlines() if "report.pdf" not in line]
        assert (out / name).read_text().splitlines() == lines, name


def test_an_editable_install_reads_the_top_level_templates(tmp_path):
    src = tmp_path / "src"
    _copy_sources(src)
    venv, env = _venv(tmp_path / "venv")
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--no-build-isolation",
          "--no-index", "-q", "-e", str(src)], cwd=tmp_path, env=env)
    code = ("import symgpt, symgpt.render.latex as l; print(l.template_dir()); "
            "print(symgpt.fragment(symgpt.load('gpt2-small'), 'blocks'))")
    out = _run([str(venv / "bin" / "python"), "-c", code], cwd=tmp_path, env=env)
    where, tex = out.split("\n", 1)
    assert Path(where) == src / "templates"
    assert "7{,}087{,}872" in tex

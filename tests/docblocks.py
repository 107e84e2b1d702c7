"""Run the code blocks of a Markdown file as a reader would: the README and every page of the
documentation site (docs/pages/) go through the same runner (tests/test_readme.py,
tests/test_docs_site.py). tests/readme_blocks.py says how each kind of block is read.

Commands run through symgpt's CLI in this process (models and derivations are shared between
blocks), each block in its own temporary folder holding links to ``examples/`` and ``tests/configs/``. Python blocks
run in a fresh interpreter each, as a reader pasting one would. Exempt, and only these: the
install and test commands that `.ci/run` itself runs (``bash scripts/setup.sh [--test]``,
``python3 -m pytest ...``) and the wheel build and install, which tests/test_wheel.py runs.
Every failure names the file and line of the command or statement that failed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import clirun
import readme_blocks as rb

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = ROOT / "docs" / "pages"
SHELL = ("console", "bash", "sh", "shell")
EXEMPT = (("bash", "scripts/setup.sh"), ("python3", "-m", "pytest"), ("python3", "-m", "pip", "wheel"),
          ("pip", "install"))


def site_pages() -> list[Path]:
    return sorted(PAGES.rglob("*.md"))


def label(path: Path) -> str:
    return path.resolve().relative_to(ROOT).as_posix()


def runnable(path: Path) -> list[tuple[str, rb.Block]]:
    """(label, block) for every console, bash and Python block of one Markdown file."""
    name = label(path)
    return [(name, b) for b in rb.read(path) if b.lang in SHELL + ("python",)]


def block_id(item) -> str:
    name, block = item
    return f"{name}:{block.line}"


def exempt(words: list[str]) -> bool:
    return any(tuple(words[:len(e)]) == e for e in EXEMPT)


def symgpt_argv(words: list[str]) -> list[str] | None:
    if words[:1] == ["symgpt"]:
        return words[1:]
    if words[:3] in (["python3", "-m", "symgpt"], ["python", "-m", "symgpt"]):
        return words[3:]
    return None


def folder(tmp_path: Path) -> Path:
    """A folder like a clone's root for what the blocks read: ``examples/`` and the stored
    configurations under ``tests/configs/`` (links, so nothing there is written)."""
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "configs").symlink_to(ROOT / "tests" / "configs", target_is_directory=True)
    return tmp_path


def shell_failures(name: str, block: rb.Block, cwd: Path) -> list[str]:
    """Run a console or bash block's commands; one line per command that fails or differs."""
    failures, ran = [], 0
    for cmd in rb.shell_commands(block):
        if exempt(cmd.words):
            continue
        argv = symgpt_argv(cmd.words)
        if argv is None:
            failures.append(f"{name}:{cmd.line}: the test does not know how to run {' '.join(cmd.words)!r}")
            continue
        r = clirun.run(argv, cwd=cwd, columns=100)
        ran += 1
        where = f"{name}:{cmd.line}: symgpt {' '.join(argv)}"
        if r.returncode != 0:
            failures.append(f"{where}: exit {r.returncode}: {r.stderr.strip()[:300]}")
            continue
        if cmd.output is not None:
            got = [line.rstrip() for line in r.stdout.rstrip("\n").splitlines()]
            want = [line.rstrip() for line in cmd.output]
            while want and not want[-1]:
                want.pop()
            if got != want:
                failures.append(f"{where}: prints\n" + "\n".join(got) + f"\n  but {name} shows\n" + "\n".join(want))
        for v in rb.stated_values(cmd.expect):
            if v not in r.stdout:
                failures.append(f"{where}: {name} says {v!r}; not in the output:\n{r.stdout[:1500]}")
    if not ran and not all(exempt(c.words) for c in rb.shell_commands(block)):
        failures.append(f"{name}:{block.line}: no command of the block ran")
    return failures


def python_failure(name: str, block: rb.Block, cwd: Path) -> str | None:
    """Run a Python block in a fresh interpreter (an excerpt: the file it shows); None when it runs as shown."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    if block.excerpt_of:
        path = ROOT / block.excerpt_of
        if not path.is_file():
            return f"{name}:{block.line}: {block.excerpt_of} does not exist"
        full = [line.strip() for line in path.read_text().splitlines()]
        at = 0
        for n, line in enumerate(block.lines[1:], block.line + 1):
            if not line.strip():
                continue
            try:
                at = full.index(line.strip(), at) + 1
            except ValueError:
                return f"{name}:{n}: not in {block.excerpt_of} (in this order): {line.strip()!r}"
        r = subprocess.run([sys.executable, str(path)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    else:
        r = subprocess.run([sys.executable, str(ROOT / "tests" / "readme_pyrun.py"), str(block.line), name],
                           input=block.text, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return f"{name}:{block.line}:\n{r.stdout}\n{r.stderr[-2500:]}"
    return None


def check_block(item, tmp_path: Path) -> None:
    """The whole check of one block, as a test runs it: fails with every line that went wrong."""
    import pytest

    name, block = item
    cwd = folder(tmp_path)
    if block.lang == "python":
        bad = python_failure(name, block, cwd)
        if bad:
            pytest.fail(bad, pytrace=False)
        return
    failures = shell_failures(name, block, cwd)
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)

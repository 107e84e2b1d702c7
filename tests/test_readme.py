"""The README runs as written: every console, bash and Python block in README.md is extracted
(tests/readme_blocks.py says how each kind is read) and run, and what the README shows is
compared with what runs. Each block is its own test, named ``README.md:LINE``, and each failure
names the README line of the command or statement that failed, so a block added later (by any
branch) is run and checked without touching this file.

Commands run through symgpt's CLI in this process (models and derivations are shared between
blocks), each block in its own temporary folder holding a link to ``examples/``. Python blocks
run in a fresh interpreter each, as a reader pasting one would. Exempt, and only these: the
install and test commands that `.ci/run` itself runs (``bash scripts/setup.sh [--test]``,
``python3 -m pytest ...``) and the wheel build and install, which tests/test_wheel.py runs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import clirun
import readme_blocks as rb

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCKS = [b for b in rb.read(README) if b.lang in ("console", "bash", "sh", "shell", "python")]
EXEMPT = (("bash", "scripts/setup.sh"), ("python3", "-m", "pytest"), ("python3", "-m", "pip", "wheel"),
          ("pip", "install"))


def _exempt(words: list[str]) -> bool:
    return any(tuple(words[:len(e)]) == e for e in EXEMPT)


def _symgpt_argv(words: list[str]) -> list[str] | None:
    if words[:1] == ["symgpt"]:
        return words[1:]
    if words[:3] in (["python3", "-m", "symgpt"], ["python", "-m", "symgpt"]):
        return words[3:]
    return None


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    return tmp_path


def test_the_readme_has_blocks_of_every_kind():
    kinds = {b.lang for b in BLOCKS}
    assert {"console", "bash", "python"} <= kinds, kinds
    assert sum(len(rb.shell_commands(b)) for b in BLOCKS if b.lang != "python") >= 40


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang != "python"], ids=lambda b: f"README.md:{b.line}")
def test_shell_block_runs_as_written(block, tmp_path):
    cwd, failures, ran = _folder(tmp_path), [], 0
    for cmd in rb.shell_commands(block):
        if _exempt(cmd.words):
            continue
        argv = _symgpt_argv(cmd.words)
        if argv is None:
            failures.append(f"README.md:{cmd.line}: the README test does not know how to run {' '.join(cmd.words)!r}")
            continue
        r = clirun.run(argv, cwd=cwd, columns=100)
        ran += 1
        where = f"README.md:{cmd.line}: symgpt {' '.join(argv)}"
        if r.returncode != 0:
            failures.append(f"{where}: exit {r.returncode}: {r.stderr.strip()[:300]}")
            continue
        if cmd.output is not None:
            got = [line.rstrip() for line in r.stdout.rstrip("\n").splitlines()]
            want = [line.rstrip() for line in cmd.output]
            while want and not want[-1]:
                want.pop()
            if got != want:
                failures.append(f"{where}: prints\n" + "\n".join(got) + "\n  but the README shows\n" + "\n".join(want))
        for v in rb.stated_values(cmd.expect):
            if v not in r.stdout:
                failures.append(f"{where}: the README says {v!r}; not in the output:\n{r.stdout[:1500]}")
    assert not failures, "\n".join(failures)
    assert ran or all(_exempt(c.words) for c in rb.shell_commands(block))


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang == "python"], ids=lambda b: f"README.md:{b.line}")
def test_python_block_runs_as_written(block, tmp_path):
    cwd = _folder(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    if block.excerpt_of:
        path = ROOT / block.excerpt_of
        assert path.is_file(), f"README.md:{block.line}: {block.excerpt_of} does not exist"
        full = [line.strip() for line in path.read_text().splitlines()]
        at = 0
        for n, line in enumerate(block.lines[1:], block.line + 1):
            if not line.strip():
                continue
            try:
                at = full.index(line.strip(), at) + 1
            except ValueError:
                pytest.fail(f"README.md:{n}: not in {block.excerpt_of} (in this order): {line.strip()!r}")
        r = subprocess.run([sys.executable, str(path)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    else:
        r = subprocess.run([sys.executable, str(ROOT / "tests" / "readme_pyrun.py"), str(block.line)], input=block.text,
                           cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"README.md:{block.line}:\n{r.stdout}\n{r.stderr[-2500:]}"


def test_the_harness_catches_what_a_reader_would_hit(tmp_path):
    # the oracle: blocks written wrong on purpose, each mistake the issue found in the README
    md = "\n".join([
        "```console", "$ symgpt params gpt2-small --json", "{}", "```",
        "```bash", "symgpt params gpt2-small   # 124,439,809", "symgpt rule gpt2-small params --as d --as V",
        "                            # -0.73 %", "make install", "```",
        "```python", "import symgpt", "symgpt.load('gpt2-small').params.value   # 124439808", "```",
    ])
    bs = rb.blocks(md)
    assert [b.lang for b in bs] == ["console", "bash", "python"] and bs[1].line == 6
    console, bash = rb.shell_commands(bs[0]), rb.shell_commands(bs[1])
    assert console[0].output == ["{}"]
    assert [c.line for c in bash] == [6, 7, 9] and "-0.73 %" in rb.stated_values(bash[1].expect)
    assert rb.stated_values(bash[0].expect) == ["124,439,809"]
    out = clirun.run(["params", "gpt2-small"]).stdout
    assert "124,439,809" not in out and "124,439,808" in out
    assert "-0.73 %" not in clirun.run(["rule", "gpt2-small", "params", "--as", "d", "--as", "V"]).stdout
    assert _symgpt_argv(bash[2].words) is None and not _exempt(bash[2].words)
    assert rb.python_value_comment("124439808, a SymPy Integer") == "124439808"
    assert rb.python_value_comment("one block: 7087872") == "7087872"
    assert rb.python_value_comment("the networkx DiGraph of ops") is None
    assert rb.python_value_comment("12·L·d² + 2·d") == "12·L·d² + 2·d"
    assert rb.value_matches("[(8, 1024), ...]", ["[(8, 1024), (8, 1024, 768)]"])
    assert not rb.value_matches("124439808", ["124439809"])

"""Paths the file system refuses as paths -- a name longer than it allows, a path past PATH_MAX,
a symlink loop, a file used as a folder -- wherever a user's path reaches it (configs, checkpoint
folders, notation files, every -o and --figure, report folders, the cache folder): one
``symgpt: error:`` line naming the path's fault, exit 2, nothing written. The errno each case
must meet is the file system's own answer (``os.stat`` of the same path), never a message text.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

import symgpt.documents.report
import symgpt.documents.reportparts.core
from attacks import PATH_SLOTS, bad_paths, check_cli, run_cli
from symgpt.core.errors import SymgptError
from symgpt.core.io import path_error, read_bounded, write_atomic
from symgpt.core.io_folders import atomic_dir

#: the words each fault adds to the system's message
EXPLAINED = {errno.ENAMETOOLONG: "system allows", errno.ELOOP: "a symlink loop",
             errno.ENOTDIR: "is a file, not a folder"}


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(symgpt.documents.report, "REPORT_PARTS", (symgpt.documents.reportparts.core,))
    return tmp_path


def _errno_of(path: str) -> int:
    """What the file system answers for *path* (the oracle for each case)."""
    try:
        os.stat(path)
    except OSError as e:
        return e.errno
    raise AssertionError(f"{path[:80]} exists")


def test_the_bad_paths_fail_as_named(work):
    for name, (path, code) in bad_paths(work).items():
        for suffix in ("", ".json"):
            assert _errno_of(path + suffix) == code, name
        if code == errno.ENAMETOOLONG:
            assert len(os.fsencode(path)) > 255


@pytest.mark.parametrize("slot", PATH_SLOTS, ids=[" ".join(s[:2]) + " " + next(a for a in s if "{}" in a)
                                                  for s in PATH_SLOTS])
def test_every_path_slot(slot, work):
    cases = bad_paths(work)
    made = sorted(p.name for p in work.iterdir())
    for name, (path, code) in cases.items():
        argv = [a.replace("{}", path) for a in slot]
        r = run_cli(argv, seconds=60)
        check_cli(r, allow=(2,))
        line = r.err.strip()
        assert os.strerror(code) in line and EXPLAINED[code] in line, f"{name}: {line[:400]}"
        assert "internal error" not in line
        assert sorted(p.name for p in work.iterdir()) == made, f"{name}: wrote something"


def test_a_long_config_name_via_the_api(work):
    for name, (path, code) in bad_paths(work).items():
        with pytest.raises(SymgptError, match=os.strerror(code)):
            symgpt.load(path + ".json")
        with pytest.raises(SymgptError, match=os.strerror(code)):
            read_bounded(path, 100, "notation file")
        with pytest.raises(SymgptError, match=f"cannot write .*{os.strerror(code)}"):
            write_atomic(path, "x")
        with pytest.raises(SymgptError, match=f"cannot write .*{os.strerror(code)}"):
            with atomic_dir(path) as stage:
                (stage / "index.md").write_text("# symgpt report: x\n")


def test_a_report_folder_under_a_file(work):
    """mkdir answers EEXIST where a part of the folder is a file: still told as that file."""
    (work / "a-file").write_text("x\n")
    r = run_cli(["report", "gpt2-small", "--no-pdf", "-o", "a-file/deeper/rep"])
    check_cli(r, allow=(2,))
    assert "Not a directory (a-file is a file, not a folder)" in r.err, r.err


def test_the_limits_are_named(work):
    long = work / ("x" * 300)
    e = OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG))
    assert "a name in it has 300 bytes; the file system allows 255" in str(path_error(long, e))
    deep = work / "/".join(["y" * 200] * 25)
    expected = len(os.fsencode(str(deep)))
    assert f"the path has {expected:,} bytes; the system allows 4,096" in str(path_error(deep, e))


def test_a_symlink_loop_as_a_report_folder(work):
    (work / "loop-a").symlink_to("loop-b")
    (work / "loop-b").symlink_to("loop-a")
    r = run_cli(["report", "gpt2-small", "--no-pdf", "-o", "loop-a"])
    check_cli(r, allow=(2,))
    assert "cannot write loop-a: Too many levels of symbolic links (a symlink loop)" in r.err, r.err


@pytest.mark.parametrize("which", ["long-name", "symlink-loop", "file-as-folder"])
def test_a_bad_cache_folder(work, monkeypatch, which):
    path, code = bad_paths(work)[which]
    monkeypatch.setenv("SYMGPT_CACHE_DIR", path)
    r = run_cli(["cache", "clear"])
    check_cli(r, allow=(2,))
    assert "cannot read the cache folder" in r.err and os.strerror(code) in r.err, r.err
    r = run_cli(["params", "gpt2-small"])  # an unusable cache is skipped, not fatal
    check_cli(r, allow=(0,))


def test_a_missed_path_fault_is_still_one_line(work, monkeypatch, capsys):
    """The CLI's last guard: an OSError of a path fault that escaped its call site."""
    import symgpt.cli.cmd_shapes as cmd
    from symgpt import cli

    def fail(args):
        raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), "z" * 300)

    monkeypatch.setattr(cmd, "run", fail)  # the parser main() builds takes the command from here
    assert cli.main(["shapes", "gpt2-small"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("symgpt: error: cannot use zzz"), err
    assert "File name too long (a name in it has 300 bytes" in err, err

"""Nothing half-written. A crash or a SIGKILL mid-write leaves the previous file
or report intact; temporaries vanish (at once, or on the next write after a kill); a report never
mixes old and new files; a folder symgpt did not write is never replaced."""

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import symgpt
from symgpt.core import io as sio
from symgpt.core import io_folders
from symgpt.core.errors import SymgptError
from symgpt.documents.report import write_report
from symgpt.documents.reportparts import core as core_part

from attacks import check_cli, run_cli

ROOT = Path(__file__).resolve().parent.parent
CORE = (core_part,)  # the JSON/Markdown part: enough to test the swap, and fast


@pytest.fixture(autouse=True)
def core_parts_only(monkeypatch):
    import symgpt.documents.report

    monkeypatch.setattr(symgpt.documents.report, "REPORT_PARTS", CORE)


def tree(folder: Path) -> dict:
    """relative path -> bytes of every file under *folder* (hidden ones included)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- write_atomic ------------------------------------------------------------------------------
class Boom(Exception):
    pass


@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_write_atomic_crash_keeps_previous_file(tmp_path, monkeypatch, where):
    target = tmp_path / "out.tex"
    target.write_text("previous\n")

    def boom(*a, **k):
        raise Boom(where)

    if where == "write":
        real_fdopen = os.fdopen

        class Half:
            def __init__(self, f):
                self.f = f

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.f.close()

            def write(self, data):
                self.f.write(data[: len(data) // 2])
                self.f.flush()
                raise Boom("mid-write")

        monkeypatch.setattr(sio.os, "fdopen", lambda fd, mode: Half(real_fdopen(fd, mode)))
    elif where == "fsync":
        monkeypatch.setattr(sio.os, "fsync", boom)
    else:
        monkeypatch.setattr(sio.os, "replace", boom)
    with pytest.raises(Boom):
        sio.write_atomic(target, "new content " * 1000)
    assert target.read_text() == "previous\n"
    assert siblings(tmp_path) == ["out.tex"]  # no temporary left


def test_write_atomic_os_error_is_one_clean_message(tmp_path, monkeypatch):
    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(sio.os, "replace", refuse)
    with pytest.raises(SymgptError, match="cannot write .*out.csv: Permission denied"):
        sio.write_atomic(tmp_path / "out.csv", "a,b\n")
    assert siblings(tmp_path) == []


def test_write_atomic_refuses_a_folder_and_long_names(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(SymgptError, match="it is a folder; give a file name"):
        sio.write_atomic(tmp_path / "d", "x")
    with pytest.raises(SymgptError, match="File name too long"):
        sio.write_atomic(tmp_path / ("x" * 300), "x")


def test_write_atomic_replaces_a_symlinks_target_and_keeps_the_link(tmp_path):
    """-o through a symlink writes what the link points to (as shells and
    editors do), atomically, and the link stays a link."""
    target = tmp_path / "sub" / "target.txt"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "out.txt"
    link.symlink_to(Path("sub") / "target.txt")
    sio.write_atomic(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(Path("sub") / "target.txt")
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["target.txt"]  # no temporaries


def test_written_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        f = sio.write_atomic(tmp_path / "a.txt", "x")
        with io_folders.atomic_dir(tmp_path / "rep") as stage:
            sio.write_atomic(stage / "index.md", "# symgpt report: test\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(f.stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "rep").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "rep" / "index.md").stat().st_mode) == 0o644


# --- atomic_dir and the report -----------------------------------------------------------------
def test_report_crash_mid_write_keeps_previous_report(tmp_path, monkeypatch):
    out = tmp_path / "rep"
    write_report(symgpt.load("gpt2-small"), out, pdf=False)
    before = tree(out)
    import symgpt.documents.reportparts.core as core

    real = core.write

    def crash(model, folder, **options):
        real(model, folder, **options)  # some new files are already staged...
        raise Boom("a part failed")       # ...then the report dies

    monkeypatch.setattr(core, "write", crash)
    with pytest.raises(Boom):
        write_report(symgpt.load("gpt2-small", tied=False), out, pdf=False)
    assert tree(out) == before
    assert siblings(tmp_path) == ["rep"]  # the staging folder is gone


def test_report_never_mixes_old_and_new_files(tmp_path):
    out = tmp_path / "rep"
    write_report(symgpt.load("gpt2-small"), out, pdf=False)
    (out / "stale-from-an-old-version.md").write_text("old\n")  # as if an older symgpt wrote it:
    with open(out / io_folders.MANIFEST, "a") as f:                    # its manifest lists it
        f.write("stale-from-an-old-version.md\n")
    first = tree(out)
    write_report(symgpt.load("gpt2-small", tied=False), out, pdf=False)
    second = tree(out)
    assert "stale-from-an-old-version.md" not in second
    changed = [f for f in second if f in first and first[f] != second[f]]
    assert "params.json" in changed and b"163037184" in second["params.json"]
    assert siblings(tmp_path) == ["rep"]


def test_report_refuses_a_folder_it_did_not_write(tmp_path):
    """`symgpt report -o ~` must not wipe a home folder."""
    home = tmp_path / "home"
    (home / "docs").mkdir(parents=True)
    (home / "docs" / "thesis.tex").write_text("years of work\n")
    before = tree(home)
    r = run_cli(["report", "gpt2-small", "-o", str(home), "--no-pdf"])
    check_cli(r, allow=(2,))
    assert "is a folder that symgpt did not write" in r.err
    with pytest.raises(SymgptError, match="choose a new or empty folder"):
        write_report(symgpt.load("gpt2-small"), home, pdf=False)
    assert tree(home) == before
    assert siblings(tmp_path) == ["home"]


def test_report_refuses_the_current_folder_and_its_parents(tmp_path, monkeypatch):
    work = tmp_path / "empty" / "deeper"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    for target in (".", "..", str(tmp_path), "/"):
        r = run_cli(["report", "gpt2-small", "-o", target, "--no-pdf"])
        check_cli(r, allow=(2,))
        assert "it is the current folder or one above it" in r.err, (target, r.err)
    assert siblings(work) == [] and siblings(tmp_path) == ["empty"]


def test_report_refuses_a_file_and_accepts_an_empty_folder(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("mine\n")
    r = run_cli(["report", "gpt2-small", "-o", str(f), "--no-pdf"])
    check_cli(r, allow=(2,))
    assert "is not a folder" in r.err and f.read_text() == "mine\n"
    empty = tmp_path / "empty"
    empty.mkdir()
    write_report(symgpt.load("gpt2-small"), empty, pdf=False)
    assert (empty / "params.json").exists() and (empty / "index.md").exists()


# --- SIGKILL: a real process killed mid-write ----------------------------------------------------
KILLER = textwrap.dedent("""
    import os, signal, sys
    import symgpt, symgpt.core.io as sio, symgpt.documents.report
    from symgpt.documents.report import write_report
    import symgpt.documents.reportparts.core as core
    symgpt.documents.report.REPORT_PARTS = (core,)
    where, out = sys.argv[1], sys.argv[2]
    def die(*a, **k):
        os.kill(os.getpid(), signal.SIGKILL)
    if where == "part":                    # mid-report: some files staged, then killed
        real = core.write
        def write(model, folder, **o):
            real(model, folder, **o)
            die()
        core.write = write
    elif where == "swap":                  # between the two renames of the swap
        real_replace = os.replace
        def replace(a, b):
            real_replace(a, b)
            if str(b).endswith("/x"):
                die()
        sio.os.replace = replace
    elif where == "file":                  # mid-write of one file
        sio.os.fsync = die
        sio.write_atomic(out, "new " * 10000)
    write_report(symgpt.load("gpt2-small", tied=False), out, pdf=False)
""")


def _env():
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize("where", ["part", "swap"])
def test_sigkill_mid_report_keeps_previous_report(tmp_path, where):
    out = tmp_path / "rep"
    write_report(symgpt.load("gpt2-small"), out, pdf=False)
    before = tree(out)
    r = subprocess.run([sys.executable, "-c", KILLER, where, str(out)], env=_env(), capture_output=True)
    assert r.returncode == -signal.SIGKILL, r.stderr.decode()[-2000:]
    if where == "part":
        assert tree(out) == before  # untouched while the killed writer's staging folder lingers
    # the next report cleans up after the killed one (and puts back a report caught mid-swap)
    write_report(symgpt.load("gpt2-small"), out, pdf=False)
    assert tree(out) == before
    assert siblings(tmp_path) == ["rep"]


def test_sigkill_mid_file_keeps_previous_file(tmp_path):
    target = tmp_path / "table.tex"
    target.write_text("previous\n")
    r = subprocess.run([sys.executable, "-c", KILLER, "file", str(target)], env=_env(), capture_output=True)
    assert r.returncode == -signal.SIGKILL, r.stderr.decode()[-2000:]
    assert target.read_text() == "previous\n"
    sio.write_atomic(target, "next\n")  # the next write sweeps the dead writer's temporary
    assert target.read_text() == "next\n"
    assert siblings(tmp_path) == ["table.tex"]


def test_a_folder_without_its_signature_is_not_swapped_in(tmp_path):
    out = tmp_path / "rep"
    write_report(symgpt.load("gpt2-small"), out, pdf=False)
    before = tree(out)
    with pytest.raises(SymgptError, match="the new folder has no index.md"):
        with io_folders.atomic_dir(out) as stage:
            (stage / "a.txt").write_text("a")
    assert tree(out) == before and siblings(tmp_path) == ["rep"]


def test_temporaries_of_live_writers_are_left_alone(tmp_path):
    live = tmp_path / f".rep.new-{os.getppid()}-abc"
    live.mkdir()
    with io_folders.atomic_dir(tmp_path / "rep") as stage:
        (stage / "index.md").write_text("# symgpt report: test\n")
    assert live.exists()


# --- a staged folder's files reach the disk together, before the folder is published -----------
def _recording_fsync(monkeypatch, fail=False):
    synced = []
    real = os.fsync

    def fsync(fd):
        synced.append(os.path.realpath(f"/proc/self/fd/{fd}"))
        if fail:
            raise OSError(5, "Input/output error")
        return real(fd)

    monkeypatch.setattr(sio.os, "fsync", fsync)
    return synced


def test_a_staged_folder_syncs_every_file_before_the_swap(tmp_path, monkeypatch):
    synced = _recording_fsync(monkeypatch)
    published = []
    real_replace = os.replace

    def replace(a, b):
        if Path(b) == out:
            published.append(sorted(synced))  # what was on disk when the folder was swapped in
        return real_replace(a, b)

    monkeypatch.setattr(sio.os, "replace", replace)
    out = tmp_path / "rep"
    with io_folders.atomic_dir(out) as stage:
        sio.write_atomic(stage / "index.md", "# symgpt report: x\n")
        sio.write_atomic(stage / "a" / "b.txt", "b")
        assert synced == []  # inside the stage: not one file at a time
        staged = os.path.realpath(stage)
    expected = sorted([os.path.join(staged, n) for n in ("index.md", "a/b.txt", io_folders.MANIFEST)]
                      + [staged, os.path.join(staged, "a")])
    assert published == [expected]
    sio.write_atomic(tmp_path / "alone.txt", "x")  # outside any stage: synced on its own
    assert os.path.basename(synced[-1]).startswith(".alone.txt.tmp-")  # its temporary, before the rename


def test_a_failed_sync_keeps_the_previous_folder(tmp_path, monkeypatch):
    out = tmp_path / "rep"
    with io_folders.atomic_dir(out) as stage:
        sio.write_atomic(stage / "index.md", "# symgpt report: old\n")
    before = tree(out)
    _recording_fsync(monkeypatch, fail=True)
    with pytest.raises(SymgptError, match="cannot write .*Input/output error"):
        with io_folders.atomic_dir(out) as stage:
            sio.write_atomic(stage / "index.md", "# symgpt report: new\n")
    assert tree(out) == before and siblings(tmp_path) == ["rep"]
    assert sio.STAGED == set()

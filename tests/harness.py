"""A subprocess harness for hostile runs of ``symgpt``: its exit code, stderr lines, time, peak
memory and the files it touched, in a sandbox of its own folders (``sandbox``, ``sandbox_env``,
``run_measured``, ``snapshot``/``touched``, ``check_measured``). The attack strings and the
in-process runner are in ``attacks.py``."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

# --- a subprocess harness: exit code, stderr lines, time, peak memory, files touched -----------
@dataclass
class Measured:
    argv: list
    code: int          # exit status; -N when killed by signal N; None when it ran past its time
    out: bytes
    err: str
    seconds: float
    peak_mb: float     # the child's peak resident memory (ru_maxrss of os.wait4)


def sandbox(tmp: Path) -> dict:
    """Folders for one hostile run: ``work`` (its cwd), ``home`` (HOME, XDG folders) and ``tmp``
    (TMPDIR); everything a run may touch lies under *tmp*, so a snapshot sees it all."""
    dirs = {k: tmp / k for k in ("work", "home", "tmp")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    return dirs


def sandbox_env(dirs: dict, **extra) -> dict:
    home = str(dirs["home"])
    env = {**os.environ, "HOME": home, "TMPDIR": str(dirs["tmp"]), "XDG_CACHE_HOME": home + "/.cache",
           "XDG_CONFIG_HOME": home + "/.config", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("SYMGPT_DEBUG", None)
    env.update(extra)
    return env


#: address space a hostile run may map (a guard for the machine: a blow-up fails fast instead
#: of exhausting memory; the bound a case asserts is its peak resident memory, far lower)
ADDRESS_SPACE = 4 << 30

#: a small Python that forks and execs symgpt, then reports the child's peak memory. A child
#: forked by the test process itself would count the test process's memory as its own (Linux
#: keeps the pre-exec high-water mark in ru_maxrss); a fork of this small one adds ~10 MB.
_LAUNCHER = r"""
import os, resource, signal, sys
limit, report, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.execv(sys.executable, [sys.executable, "-m", "symgpt", *args])
with open(report + ".pid", "w") as f:
    f.write(str(pid))
while True:
    try:
        _, status, usage = os.wait4(pid, 0)
        break
    except InterruptedError:
        continue
with open(report, "w") as f:
    f.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
if code < 0:  # die of the same signal
    if -code not in (signal.SIGKILL, signal.SIGSTOP):
        signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def symgpt_pid(proc, seconds: float = 30) -> int:
    """The pid of the symgpt process that ``run_measured``'s launcher *proc* started."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with contextlib.suppress(OSError, ValueError):
            return int(Path(proc.report + ".pid").read_text())
        time.sleep(0.01)
    raise AssertionError("symgpt did not start")


def run_measured(argv: list[str], dirs: dict, seconds: float = 30, stdout=None, env=None,
                 on_start=None) -> Measured:
    """``python -m symgpt ARGV`` in ``dirs['work']`` with HOME and TMPDIR in the sandbox; its
    stdout goes to *stdout* (a file descriptor, or a temporary file read back), stderr to a
    file. Killed (with its process group) past *seconds*; its address space is capped at
    ADDRESS_SPACE. *on_start(proc)* runs while it runs (``symgpt_pid(proc)`` is symgpt's pid)."""
    with tempfile.TemporaryFile() as err_f, tempfile.TemporaryFile() as out_f, \
            tempfile.TemporaryDirectory() as side:
        report = os.path.join(side, "maxrss")
        start = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(ADDRESS_SPACE), report, *argv],
                                cwd=dirs["work"], env=env or sandbox_env(dirs),
                                stdin=subprocess.DEVNULL, stdout=out_f if stdout is None else stdout,
                                stderr=err_f, start_new_session=True)
        proc.report = report
        late = threading.Event()

        def kill():
            late.set()
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(seconds, kill)
        timer.start()
        try:
            if on_start:
                on_start(proc)
            proc.wait()
        finally:
            timer.cancel()
        elapsed = time.monotonic() - start
        try:
            peak = int(Path(report).read_text()) / 1024
        except (OSError, ValueError):
            peak = float("nan")
        err_f.seek(0)
        out_f.seek(0)
        code = None if late.is_set() else proc.returncode
        return Measured(argv, code, out_f.read(), err_f.read().decode("utf-8", "replace"),
                        elapsed, peak)


def snapshot(root: Path) -> dict:
    """relative path -> (kind, size, mtime_ns, content hash) of everything under *root*."""
    import hashlib

    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(folder) / name
            st = os.lstat(p)
            kind = stat.S_IFMT(st.st_mode)
            digest = ""
            if stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(p.read_bytes()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                digest = os.readlink(p)
            out[str(p.relative_to(root))] = (kind, st.st_size if not stat.S_ISDIR(st.st_mode) else 0,
                                              st.st_mtime_ns if stat.S_ISREG(st.st_mode) else 0, digest)
    return out


def touched(before: dict, after: dict) -> set[str]:
    """Paths created, removed or changed between two snapshots."""
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def check_measured(r: Measured, code: int, message: str = "", seconds: float = 20,
                   peak_mb: float = 500) -> None:
    """The contract of a hostile case: the exit code, exactly one ``symgpt: error:`` line on
    stderr on exit 2 (naming *message*), no traceback, and time and memory within bounds."""
    shown = repr(r.argv)[:200]
    assert r.code is not None, f"{shown}: still running after its time limit"
    assert "Traceback" not in r.err and "internal error" not in r.err, f"{shown}: {r.err[-1500:]}"
    assert r.code == code, f"{shown}: exit {r.code}, stderr {r.err[-500:]!r}"
    if code == 2:
        lines = r.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("symgpt: error: "), f"{shown}: {r.err[:600]!r}"
    if message:
        assert message in r.err, f"{shown}: {r.err[:600]!r}"
    assert r.seconds <= seconds, f"{shown}: took {r.seconds:.1f} s (bound {seconds} s)"
    assert r.peak_mb <= peak_mb, f"{shown}: peak memory {r.peak_mb:.0f} MB (bound {peak_mb} MB)"

"""Programs run in a process group of their own that dies with symgpt.

``start_group`` starts a program in a new session (its own process group) whose leader is
killed when symgpt dies (Linux ``prctl(PR_SET_PDEATHSIG)``); ``wait_group`` joins it and, on a
timeout, an error or a signal in symgpt (Ctrl-C, SIGTERM), kills the whole group (the program
and its children) before returning or raising.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from ..core.errors import SymgptError


def die_with_parent() -> None:
    """In the child, before exec: be killed when symgpt dies (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def start_group(argv: list[str], cwd: Path, env: dict) -> subprocess.Popen:
    """Start *argv* in a new process group that dies with symgpt (see ``run_group``): its
    output (stdout and stderr together) is read as text."""
    return subprocess.Popen([*argv], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", start_new_session=True,
                            preexec_fn=die_with_parent)


def wait_group(proc: subprocess.Popen, timeout: float, what: str) -> tuple[int, str]:
    """(exit code, output) of *proc*, waited for; on a timeout, an error or a signal in symgpt, its whole group is killed
    before this returns or raises."""
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise SymgptError(f"{what} took more than {timeout} s") from None
    except BaseException:
        kill_group(proc)
        raise
    return proc.returncode, out


def run_group(argv: list[str], cwd: Path, env: dict, timeout: float, what: str) -> tuple[int, str]:
    """(exit code, output) of *argv* run in a new process group; on a timeout, an error or a
    signal in symgpt, the whole group (the program and its children) is killed before this returns or
    raises."""
    return wait_group(start_group(argv, cwd, env), timeout, what)


def kill_group(proc: subprocess.Popen) -> None:
    """Kill *proc*'s whole process group and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()

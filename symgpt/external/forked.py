"""Work run in a forked process, so that it computes while the parent goes on.

``start(work, running, what)`` forks (where the platform can) and calls ``work()`` in the
child; it returns ``finish()``, which joins the child and returns what ``work`` returned (a
value JSON can carry). What the work writes into files is the parent's to read once it has
finished; its error is raised by ``finish`` in the parent: a ``SymgptError`` with the child's
message, a ``MemoryError``, ``RecursionError`` or ``KeyboardInterrupt`` as such, anything else
as an internal error carrying the child's traceback (*what* names the work in the messages).
The child dies with its parent (Linux) and is killed if the parent fails first (registered with
*running*, an ``ExitStack``). Where ``os.fork`` does not exist the work runs at once, in this
process.

The child inherits what the parent imported and built so far and copies of its open files (a
pipe to TeX among them), which it never touches; it leaves with ``os._exit``, running none of
the parent's clean-ups. Nothing it does reaches the parent but its files and its answer.
"""

from __future__ import annotations

import json
import os
import signal
import traceback

from ..core.errors import SymgptError
from .processes import die_with_parent

#: exceptions a child's failure is raised as in the parent (by name); anything else is internal
_AS = {"SymgptError": SymgptError, "MemoryError": MemoryError, "RecursionError": RecursionError,
       "KeyboardInterrupt": KeyboardInterrupt}


def start(work, running, what: str):
    """Start ``work()`` in a child process; returns ``finish()``, its answer (see the module)."""
    if not hasattr(os, "fork"):
        value = work()
        return lambda: value
    read, write = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: write, answer, and leave without running the parent's clean-ups
        try:
            os.close(read)
            _child(work, write, parent)
        finally:
            os._exit(0)
    os.close(write)
    state = {"joined": False, "open": True}

    def close_read() -> None:
        if state["open"]:
            state["open"] = False
            os.close(read)

    def stop() -> None:  # the parent failed before finish(): the child's work is not wanted
        if not state["joined"]:
            state["joined"] = True
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:  # already reaped
                pass
        close_read()

    running.callback(stop)

    def finish():
        try:
            with os.fdopen(read, "rb", closefd=False) as f:
                data = f.read()
        finally:
            close_read()
        _, status = os.waitpid(pid, 0)
        state["joined"] = True
        try:
            answer = json.loads(data)
        except ValueError:
            raise RuntimeError(f"{what} stopped without an answer (wait status {status})") from None
        if "value" in answer:
            return answer["value"]
        kind = _AS.get(answer["kind"])
        if kind is None:
            raise RuntimeError(f"{what} failed: {answer['message']}\n"
                               f"{answer['traceback']}")
        raise kind(answer["message"])

    return finish


def _child(work, write: int, parent: int) -> None:
    _die_with(parent)
    try:
        answer = {"value": work()}
    except BaseException as e:  # noqa: BLE001  (every failure is handed to the parent)
        kind = next((n for n, t in _AS.items() if isinstance(e, t)), type(e).__name__)
        answer = {"kind": kind, "message": str(e), "traceback": traceback.format_exc()}
    with os.fdopen(write, "wb") as f:
        f.write(json.dumps(answer).encode("utf-8", "backslashreplace"))


def _die_with(parent: int) -> None:
    """Be killed when the parent dies (Linux prctl PR_SET_PDEATHSIG); leave if it already has."""
    die_with_parent()
    if os.getppid() != parent:
        os._exit(1)


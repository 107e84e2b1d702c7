"""A report part run in a forked process, so that it derives while the other parts are written.

``start(part, model, folder, running, **options)`` forks (where the platform can) and runs
``part.write(model, folder, **options)`` in the child; it returns ``finish() -> [names]``,
which joins the child. The child's files are in *folder* (the report's staging folder, replaced
whole or not at all); its error is raised by ``finish`` in the parent: a ``SymgptError`` with
the child's message, a ``MemoryError``, ``RecursionError`` or ``KeyboardInterrupt`` as such,
anything else as an internal error carrying the child's traceback. The child dies with its
parent (Linux) and is killed if the report fails first (registered with *running*, an
``ExitStack``). Where ``os.fork`` does not exist the part runs at once, in this process.

The child inherits what the parent imported and built so far (a report forks the page after the
LaTeX part, so SymPy's simplify and jinja2 are imported once) and copies of its open files (TeX's
pipe among them), which it never touches; it leaves with ``os._exit``, running none of the
parent's clean-ups. Its output is the same bytes either way: the part sees the same model, and
nothing it does reaches the parent but its files and its answer.
"""

from __future__ import annotations

import json
import os
import signal
import traceback

from ..core.errors import SymgptError
from ..render.latex_build import _die_with_parent

#: exceptions a child's failure is raised as in the parent (by name); anything else is internal
_AS = {"SymgptError": SymgptError, "MemoryError": MemoryError, "RecursionError": RecursionError,
       "KeyboardInterrupt": KeyboardInterrupt}


def start(part, model, folder, running, **options):
    """Start *part* writing into *folder*; returns ``finish() -> [names]`` (see the module)."""
    if not hasattr(os, "fork"):
        names = part.write(model, folder, **options)
        return lambda: names
    read, write = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: write, answer, and leave without running the parent's clean-ups
        try:
            os.close(read)
            _child(part, model, folder, options, write, parent)
        finally:
            os._exit(0)
    os.close(write)
    state = {"joined": False, "open": True}

    def close_read() -> None:
        if state["open"]:
            state["open"] = False
            os.close(read)

    def stop() -> None:  # the report failed before finish(): the child's work is not wanted
        if not state["joined"]:
            state["joined"] = True
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:  # already reaped
                pass
        close_read()

    running.callback(stop)

    def finish() -> list[str]:
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
            raise RuntimeError(f"the {_name(part)} part of the report stopped without an answer "
                               f"(wait status {status})") from None
        if "names" in answer:
            return answer["names"]
        kind = _AS.get(answer["kind"])
        if kind is None:
            raise RuntimeError(f"the {_name(part)} part of the report failed: {answer['message']}\n"
                               f"{answer['traceback']}")
        raise kind(answer["message"])

    return finish


def _child(part, model, folder, options, write: int, parent: int) -> None:
    _die_with(parent)
    try:
        answer = {"names": list(part.write(model, folder, **options))}
    except BaseException as e:  # noqa: BLE001  (every failure is handed to the parent)
        kind = next((n for n, t in _AS.items() if isinstance(e, t)), type(e).__name__)
        answer = {"kind": kind, "message": str(e), "traceback": traceback.format_exc()}
    with os.fdopen(write, "wb") as f:
        f.write(json.dumps(answer).encode("utf-8", "backslashreplace"))


def _die_with(parent: int) -> None:
    """Be killed when the parent dies (Linux prctl PR_SET_PDEATHSIG); leave if it already has."""
    _die_with_parent()
    if os.getppid() != parent:
        os._exit(1)


def _name(part) -> str:
    return part.__name__.rsplit(".", 1)[-1]

"""Atomic file output: a crash or a kill mid-write leaves the previous file (or folder) intact.

Files are written to a temporary sibling and renamed over the target; folders are staged
whole and swapped in with two renames. Temporaries carry the writer's process id
(``.NAME.new-PID-xxxx``), so whatever a killed writer left behind is cleaned up -- and a
previous folder caught mid-swap is put back -- the next time the same path is written.

A folder is only ever replaced whole if it is empty or symgpt wrote it, as its signature file
says (a report's ``index.md`` starts with ``# symgpt report:``): ``symgpt report -o ~`` must
never wipe a home folder.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import SymgptError

#: (file, first-line prefix) that marks a folder as a symgpt report (and so replaceable whole)
REPORT_SIGNATURE = ("index.md", "# symgpt report:")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fail(path: Path, e: OSError) -> SymgptError:
    return SymgptError(f"cannot write {path}: {e.strerror or e}")


def _prefix(path: Path, kind: str) -> str:
    """The name prefix of *path*'s temporaries of *kind* (tmp, new, old) made by this process."""
    return f".{path.name[:100]}.{kind}-{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but is not ours
        return True
    return True


def _leftovers(path: Path):
    """(kind, temporary) for each temporary of *path* whose writer has died."""
    pattern = re.compile(re.escape(f".{path.name[:100]}.") + r"(tmp|new|old)-(\d+)-")
    try:
        siblings = list(path.parent.iterdir())
    except OSError:
        return []
    found = []
    for p in siblings:
        m = pattern.match(p.name)
        if m and int(m.group(2)) != os.getpid() and not _alive(int(m.group(2))):
            found.append((m.group(1), p))
    return found


def _clean_up(path: Path) -> None:
    """Remove what killed writers of *path* left behind; put back a folder caught mid-swap."""
    for kind, p in _leftovers(path):
        if kind == "old" and (p / "x").is_dir() and not path.exists() and not path.is_symlink():
            os.replace(p / "x", path)  # the previous report, moved out just before the kill
        shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)


def write_atomic(path: Path | str, data: str | bytes) -> Path:
    """Write *data* to *path* through a temporary file in the same folder and a rename."""
    path = Path(path)
    try:
        if path.is_dir():
            raise SymgptError(f"cannot write {path}: it is a folder; give a file name")
        path.parent.mkdir(parents=True, exist_ok=True)
        _clean_up(path)
        fd, tmp = tempfile.mkstemp(prefix=_prefix(path, "tmp"), dir=path.parent)
    except OSError as e:
        raise _fail(path, e) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a written file is an ordinary file
        os.replace(tmp, path)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise _fail(path, e) from None
        raise
    return path


def _signed(path: Path, signature: tuple[str, str]) -> bool:
    name, prefix = signature
    try:
        with open(path / name, encoding="utf-8", errors="replace") as f:
            return f.readline(len(prefix) + 1).startswith(prefix)
    except OSError:
        return False


def _replaceable(path: Path, signature: tuple[str, str]) -> bool:
    """True if *path* is absent, an empty folder, or a folder symgpt wrote (it is signed)."""
    if not path.exists() and not path.is_symlink():
        return True
    if path.is_symlink() or not path.is_dir():
        return False
    return _signed(path, signature) or not any(path.iterdir())


@contextmanager
def atomic_dir(path: Path | str, signature: tuple[str, str] = REPORT_SIGNATURE) -> Iterator[Path]:
    """Yield a fresh staging folder; on success it replaces *path* whole, on failure it vanishes.

    The swap is two renames (old out of the way, new in place), so a reader never sees a mix of
    old and new files. An existing *path* is replaced only if it is empty or symgpt wrote it:
    its *signature* file starts with the signature's line (the staged folder must have it too).
    """
    path = Path(path)
    try:
        here = Path.cwd().resolve()
        if path.resolve() in (here, *here.parents):
            raise SymgptError(f"cannot write {path}: it is the current folder or one above it; "
                              "give a new folder")
        if path.parent.is_dir():
            _clean_up(path)
        if not _replaceable(path, signature):
            what = "is not a folder" if path.is_symlink() or not path.is_dir() else \
                f"is a folder that symgpt did not write (its {signature[0]} is not a symgpt one)"
            raise SymgptError(f"cannot write {path}: it {what}; choose a new or empty folder")
    except OSError as e:
        raise _fail(path, e) from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=_prefix(path, "new"), dir=path.parent))
        os.chmod(stage, 0o777 & ~_umask())  # mkdtemp makes 0700
    except OSError as e:
        raise _fail(path, e) from None
    try:
        yield stage
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    old = None
    try:
        if not _signed(stage, signature):
            raise SymgptError(f"cannot write {path}: the new folder has no {signature[0]} "
                              f"starting with {signature[1]!r}")
        if not _replaceable(path, signature):  # it changed while we wrote
            raise SymgptError(f"cannot write {path}: it appeared while the report was written")
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=_prefix(path, "old"), dir=path.parent))
            os.replace(path, old / "x")
        os.replace(stage, path)
    except BaseException as e:
        shutil.rmtree(stage, ignore_errors=True)
        if old is not None:
            if (old / "x").exists() and not path.exists():
                os.replace(old / "x", path)  # put the previous folder back
            if not (old / "x").exists():
                old.rmdir()
        if isinstance(e, OSError):
            raise _fail(path, e) from None
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)

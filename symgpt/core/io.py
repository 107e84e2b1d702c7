"""Atomic file output: a crash or a kill mid-write leaves the previous file (or folder) intact.

Files are written to a temporary sibling and renamed over the target. Temporaries carry the
writer's process id (``.NAME.new-PID-xxxx``), so whatever a killed writer left behind is cleaned up -- and a
previous folder caught mid-swap is put back -- the next time the same path is written.

Folders (``atomic_dir``) and which files in them symgpt wrote are ``symgpt.core.io_folders``.

Special targets: ``-`` is standard output; a device file, a FIFO or ``/dev/stdout`` (anything
reached through ``/proc`` or ``/dev/fd``) is written into directly (``/dev/null`` discards); a
symlink's target is replaced atomically and the link is kept. Reads (``read_bounded``) take
regular files only, and never more than their limit.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
import stat
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import SymgptError, TooLarge, printable

#: symlinks followed to find the real target of an output
MAX_LINKS = 40
#: staging folders (``io_folders.atomic_dir``, absolute paths) being written: a file written
#: inside one is not synced on its own; the folder syncs all its files at once before it is
#: swapped in (``sync_tree``), so nothing is published before its bytes are on disk
STAGED: set[str] = set()


def umask() -> int:
    """The process's file-creation mask (read without changing it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: faults of a path itself (not of the file it names): each gets its reason in words
PATH_ERRNOS = (errno.ENAMETOOLONG, errno.ELOOP, errno.ENOTDIR)
#: the longest name of one file or folder, and of a whole path, where the system does not say
NAME_MAX, PATH_MAX = 255, 4096


def _limit(path: Path, name: str, default: int) -> int:
    """The file system's *name* limit (``PC_NAME_MAX``, ``PC_PATH_MAX``) at the deepest folder
    of *path* that exists."""
    for folder in [*Path(os.path.abspath(path)).parents]:
        try:
            return os.pathconf(folder, name)
        except (OSError, ValueError):
            continue
    return default


def _file_in_the_way(path: Path) -> Path | None:
    """The first part of *path*'s folders that exists and is not a folder (a file)."""
    parts = Path(path).parts
    for i in range(1, len(parts)):
        p = Path(*parts[:i])
        try:
            if not stat.S_ISDIR(os.stat(p).st_mode):
                return p
        except OSError:
            return None
    return None


def path_reason(path: Path | str, e: OSError) -> str:
    """Why *e* happened on *path*, in words. A fault of the path itself is told by its errno
    (never by its message): a name longer than the file system allows, a symlink loop, a file
    where a folder should be; anything else is the system's message."""
    path = Path(path)
    text = e.strerror or str(e)
    if e.errno == errno.ENAMETOOLONG:
        longest = max((len(os.fsencode(part)) for part in path.parts), default=0)
        name_max = _limit(path, "PC_NAME_MAX", NAME_MAX)
        if longest > name_max:
            return (f"{text} (a name in it has {longest:,} bytes; the file system allows "
                    f"{name_max:,})")
        path_max = _limit(path, "PC_PATH_MAX", PATH_MAX)
        return f"{text} (the path has {len(os.fsencode(os.path.abspath(path))):,} bytes; the " \
               f"system allows {path_max:,})"
    if e.errno == errno.ELOOP:
        return f"{text} (a symlink loop)"
    if e.errno in (errno.ENOTDIR, errno.EEXIST):
        blocker = _file_in_the_way(path)
        if blocker is not None:
            return f"Not a directory ({printable(str(blocker))} is a file, not a folder)"
    return text


def path_error(path: Path | str, e: OSError | RuntimeError, verb: str = "write") -> SymgptError:
    """The one-line error for *e* on the user's *path* (``cannot write PATH: reason``). A
    ``RuntimeError`` is Python's report of a symlink loop (``Path.resolve`` before 3.13)."""
    if isinstance(e, RuntimeError):
        e = OSError(errno.ELOOP, os.strerror(errno.ELOOP))
    return SymgptError(f"cannot {verb} {printable(str(path), 1 << 16)}: {path_reason(path, e)}")


def temp_prefix(path: Path, kind: str) -> str:
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


def clean_dead(folder: Path | str, prefix: str) -> None:
    """Remove what killed processes left in *folder* under ``PREFIX<pid>-...`` names (a TeX
    build folder after a ``kill -9``); those of live processes are left alone."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)-")
    try:
        entries = list(Path(folder).iterdir())
    except OSError:
        return
    for p in entries:
        m = pattern.match(p.name)
        if m and int(m.group(1)) != os.getpid() and not _alive(int(m.group(1))):
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)


def clean_up(path: Path) -> None:
    """Remove what killed writers of *path* left behind; put back a folder caught mid-swap."""
    for kind, p in _leftovers(path):
        if kind == "old" and (p / "x").is_dir() and not path.exists() and not path.is_symlink():
            os.replace(p / "x", path)  # the previous report, moved out just before the kill
        shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)


def _through_proc(p: Path) -> bool:
    return str(p).startswith(("/proc/", "/dev/fd/"))


def _output_target(path: Path) -> tuple[Path, bool]:
    """(the file to write, whether to write into it directly): a symlink is followed to its
    target, which is replaced atomically; a device, a FIFO, or a link through ``/proc`` or
    ``/dev/fd`` (``/dev/stdout``) is written into, never replaced."""
    p = path
    for _ in range(MAX_LINKS):
        if _through_proc(p):
            return path, True
        if not p.is_symlink():
            break
        p = Path(os.path.join(p.parent, os.readlink(p)))
    else:
        raise SymgptError(f"cannot write {path}: more than {MAX_LINKS} symlinks in a row")
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        return p, False
    if stat.S_ISDIR(mode):
        raise SymgptError(f"cannot write {path}: it is a folder; give a file name")
    return (p, False) if stat.S_ISREG(mode) else (path, True)


def _open_into(path: Path) -> int:
    """A descriptor to write into an existing device, FIFO or /proc link, without replacing
    it. A FIFO that no process reads is refused at once instead of blocking."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise SymgptError(f"cannot write {path}: no process is reading it (a FIFO)") from None
        raise
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def is_stream(path: Path | str) -> bool:
    """True when writing *path* writes into a stream (``-``, a device, a FIFO, ``/dev/stdout``)
    rather than replacing a file."""
    try:
        return str(path) == "-" or _output_target(Path(path))[1]
    except (OSError, SymgptError):
        return False


def write_atomic(path: Path | str, data: str | bytes) -> Path:
    """Write *data* to *path* through a temporary file in the same folder and a rename.

    ``-`` writes to standard output; a device file, a FIFO or ``/dev/stdout`` is written into
    (never replaced); a symlink's target is replaced and the link kept."""
    # a lone surrogate (from a file name that is not UTF-8) is written as its escape, \udcff
    raw = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    with open_atomic(path) as f:
        f.write(raw)
    return Path(path)


@contextmanager
def open_atomic(path: Path | str) -> Iterator:
    """A binary file to stream into; when the block ends without error it replaces *path*
    (as ``write_atomic`` does: ``-``, devices, FIFOs and symlinks alike), else it vanishes."""
    if str(path) == "-":
        yield from _into_stdout()
        return
    given = Path(path)
    try:
        path, direct = _output_target(given)
        if direct:
            fd = _open_into(path)
    except OSError as e:
        raise path_error(given, e) from None
    if direct:
        try:
            with os.fdopen(fd, "wb") as f:
                yield f
        except OSError as e:
            raise path_error(given, e) from None
        return
    try:
        if path.is_dir():
            raise SymgptError(f"cannot write {path}: it is a folder; give a file name")
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_up(path)
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path, "tmp"), dir=path.parent)
    except OSError as e:
        raise path_error(path, e) from None
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            if not _staged(path):
                os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~umask())  # mkstemp makes 0600; a written file is an ordinary file
        os.replace(tmp, path)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise path_error(path, e) from None
        raise


def _staged(path: Path) -> bool:
    """Whether *path* lies inside a staging folder being written (see ``STAGED``)."""
    if not STAGED:
        return False
    p = os.path.abspath(path)
    return any(p.startswith(root + os.sep) for root in STAGED)


def _sync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_tree(root: Path | str) -> None:
    """fsync every regular file and folder under *root* (symlinks not followed), all at once:
    the file system commits concurrent syncs together, so a few dozen files cost about one."""
    from concurrent.futures import ThreadPoolExecutor

    paths = []
    for top, dirs, files in os.walk(root):
        paths.append(top)
        paths += [p for p in (os.path.join(top, f) for f in files)
                  if stat.S_ISREG(os.lstat(p).st_mode)]
    with ThreadPoolExecutor(max_workers=min(32, len(paths))) as pool:
        list(pool.map(_sync, paths))  # raises the first OSError


class _TextSink:
    """Bytes into a text stream without a binary buffer (stdout redirected to a StringIO)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, data: bytes) -> int:
        return self.stream.write(data.decode("utf-8", "replace"))

    def flush(self) -> None:
        self.stream.flush()


def _into_stdout():
    if sys.stdout is None:
        raise SymgptError("cannot write to standard output: it is closed")
    try:
        sys.stdout.flush()
        out = getattr(sys.stdout, "buffer", None) or _TextSink(sys.stdout)
    except ValueError:
        raise SymgptError("cannot write to standard output: it is closed") from None
    try:
        yield out
        out.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        raise SymgptError(f"cannot write to standard output: {e.strerror or e}") from None


def read_bounded(path: Path | str, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file *path*, refused (one line, naming the limit) if it has
    more than *limit*; a FIFO, a device or a folder is refused without blocking or reading."""
    shown = printable(str(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        raise SymgptError(f"no such file: {shown}") from None
    except OSError as e:
        raise path_error(path, e, f"read {what}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise SymgptError(f"{what} {shown} is a folder; give a file")
        if not stat.S_ISREG(mode):
            kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or
                    stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file")
            raise SymgptError(f"{what} {shown} is not a regular file ({kind}); give a file")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise SymgptError(f"cannot read {what} {shown}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if size > limit:
        raise TooLarge(f"{what} {shown} is larger than the limit of {limit:,} bytes", limit)
    return b"".join(chunks)

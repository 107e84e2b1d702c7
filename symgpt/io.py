"""Atomic file output: a crash or a kill mid-write leaves the previous file (or folder) intact."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import SymgptError


def write_atomic(path: Path | str, data: str | bytes) -> Path:
    """Write *data* to *path* through a temporary file in the same folder and a rename."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise SymgptError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@contextmanager
def atomic_dir(path: Path | str) -> Iterator[Path]:
    """Yield a fresh staging folder; on success it replaces *path* whole, on failure it vanishes.

    The swap is two renames (old out of the way, new in place), so a reader never sees a mix of
    old and new files.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{path.name}.new-", dir=path.parent))
    except OSError as e:
        raise SymgptError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        yield stage
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    if path.exists() and not path.is_dir():
        shutil.rmtree(stage, ignore_errors=True)
        raise SymgptError(f"cannot write the report: {path} exists and is not a folder")
    old = None
    if path.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
        os.replace(path, old / "x")
    os.replace(stage, path)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)

"""Report folders, replaced atomically, and which files in them are symgpt's.

A folder is staged whole and swapped in with two renames (``atomic_dir``). It is only ever
replaced if it is empty or symgpt wrote it, as its signature file says (a report's ``index.md``
starts with ``# symgpt report:``): ``symgpt report -o ~`` must never wipe a home folder. A folder
also lists the files symgpt wrote into it (``MANIFEST``); anything else found there is the
user's and is carried over into the new folder (hard links), and a user's file where the new
folder puts one of its own is refused, never overwritten. A previous folder caught mid-swap by a
kill is put back the next time the same path is written (``io.clean_up``). The files of a
staged folder are synced to disk all at once (``io.sync_tree``) before the swap, not one by one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import SymgptError, printable
from .io import STAGED, clean_up, path_error, read_bounded, sync_tree, temp_prefix, umask, write_atomic

#: (file, first-line prefix) that marks a folder as a symgpt report (and so replaceable whole)
REPORT_SIGNATURE = ("index.md", "# symgpt report:")
#: the file, in a folder symgpt wrote, that lists (one relative path a line) what it wrote
MANIFEST = ".symgpt-files"
_MANIFEST_HEAD = "# files written by symgpt; anything else here is kept when the folder is rewritten"
#: the most bytes a manifest may have (a report has a few dozen files)
MAX_MANIFEST = 1 << 20


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


def _entries(root: Path) -> list[str]:
    """Relative paths of everything under *root* that is not a folder (links not followed), and
    of empty folders (with a trailing '/'), sorted."""
    out = []
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root)
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            out.append(str(rel / name))
        if not dirs and not files and folder != str(root):
            out.append(f"{rel}/")
    return sorted(out)


def owned_files(path: Path | str) -> set[str] | None:
    """The files symgpt wrote into folder *path*, as its MANIFEST lists them (None: no manifest,
    e.g. a report written before manifests existed)."""
    try:
        text = read_bounded(Path(path) / MANIFEST, MAX_MANIFEST, "manifest").decode("utf-8", "replace")
    except SymgptError:
        return None
    return {line for line in text.splitlines() if line and not line.startswith("#")} | {MANIFEST}


def foreign_files(path: Path | str) -> list[str]:
    """What is in folder *path* that symgpt did not write (kept when the folder is rewritten).
    Without a manifest nothing is known to be symgpt's own: every entry is listed."""
    path = Path(path)
    if not path.is_dir() or path.is_symlink():
        return []
    owned = owned_files(path) or set()
    return [e for e in _entries(path) if e not in owned]


def _carry_over(old: Path, stage: Path, signature: tuple[str, str]) -> None:
    """Put the user's files of *old* (what its manifest does not list) into *stage*, as hard
    links (copies where links fail); refuse where the new folder has a file of that name."""
    owned = owned_files(old)
    new = set(_entries(stage))
    found = _entries(old)
    if owned is None:  # an older symgpt folder: its own files are the ones the new one writes
        foreign = [e for e in found if e not in new and e.rstrip("/") + "/" not in new]
        if foreign:
            raise SymgptError(
                f"cannot write {old}: it holds {_listed(foreign)}, which symgpt does not write, and "
                f"has no {MANIFEST} telling its own files from yours; move them or choose a new folder")
        return
    foreign = [e for e in found if e not in owned]
    clash = [e for e in foreign if e in new or any(e.startswith(n.rstrip("/") + "/") for n in new)]
    if clash:
        raise SymgptError(f"cannot write {old}: {_listed(clash)} would be replaced, but symgpt "
                          f"did not write it; move it away or choose a new folder")
    for rel in foreign:
        src, dst = old / rel, stage / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith("/"):
            dst.mkdir(exist_ok=True)
        elif src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            try:
                os.link(src, dst, follow_symlinks=False)
            except OSError:
                shutil.copy2(src, dst, follow_symlinks=False)


def _listed(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(printable(n, 80) for n in names[:limit])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return f"{shown}{more}"


def _write_manifest(stage: Path) -> None:
    lines = [_MANIFEST_HEAD, *(e for e in _entries(stage) if e != MANIFEST)]
    write_atomic(stage / MANIFEST, "\n".join(lines) + "\n")


@contextmanager
def atomic_dir(path: Path | str, signature: tuple[str, str] = REPORT_SIGNATURE) -> Iterator[Path]:
    """Yield a fresh staging folder; on success it replaces *path*, on failure it vanishes.

    The swap is two renames (old out of the way, new in place), so a reader never sees a mix of
    old and new files. An existing *path* is replaced only if it is empty or symgpt wrote it:
    its *signature* file starts with the signature's line (the staged folder must have it too).
    What the staged folder holds is listed in its MANIFEST; files of the old folder that its
    manifest does not list are the user's and are carried into the new one (``foreign_files``
    says which), and a new file that would take a user's file's place is refused.
    """
    path = Path(path)
    try:
        here = Path.cwd().resolve()
        if path.resolve() in (here, *here.parents):
            raise SymgptError(f"cannot write {path}: it is the current folder or one above it; "
                              "give a new folder")
        if path.parent.is_dir():
            clean_up(path)
        if not _replaceable(path, signature):
            what = "is not a folder" if path.is_symlink() or not path.is_dir() else \
                f"is a folder that symgpt did not write (its {signature[0]} is not a symgpt one)"
            raise SymgptError(f"cannot write {path}: it {what}; choose a new or empty folder")
    except (OSError, RuntimeError) as e:  # RuntimeError: a symlink loop (Path.resolve, Python < 3.13)
        raise path_error(path, e) from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=temp_prefix(path, "new"), dir=path.parent))
        os.chmod(stage, 0o777 & ~umask())  # mkdtemp makes 0700
    except OSError as e:
        raise path_error(path, e) from None
    staged = os.path.abspath(stage)
    STAGED.add(staged)  # its files are synced together, before the swap
    try:
        yield stage
    except BaseException:
        STAGED.discard(staged)
        shutil.rmtree(stage, ignore_errors=True)
        raise
    old = None
    try:
        if not _signed(stage, signature):
            raise SymgptError(f"cannot write {path}: the new folder has no {signature[0]} "
                              f"starting with {signature[1]!r}")
        if not _replaceable(path, signature):  # it changed while we wrote
            raise SymgptError(f"cannot write {path}: it appeared while the report was written")
        _write_manifest(stage)
        STAGED.discard(staged)
        sync_tree(stage)  # every file on disk before the folder is published
        if path.exists():
            _carry_over(path, stage, signature)
            old = Path(tempfile.mkdtemp(prefix=temp_prefix(path, "old"), dir=path.parent))
            os.replace(path, old / "x")
        os.replace(stage, path)
    except BaseException as e:
        STAGED.discard(staged)
        shutil.rmtree(stage, ignore_errors=True)
        if old is not None:
            if (old / "x").exists() and not path.exists():
                os.replace(old / "x", path)  # put the previous folder back
            if not (old / "x").exists():
                old.rmdir()
        if isinstance(e, OSError):
            raise path_error(path, e) from None
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)

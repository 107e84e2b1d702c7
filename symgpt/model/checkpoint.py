"""The tensors a safetensors checkpoint holds -- names, dtypes, shapes, bytes -- from the file
headers alone, never the weights.

The format (https://huggingface.co/docs/safetensors, "Format"): 8 bytes, an unsigned 64-bit
little-endian N; then N bytes of UTF-8 JSON, ``{name: {"dtype", "shape", "data_offsets": [begin,
end]}, "__metadata__": {str: str}}``; then the data. A checkpoint is a folder with
``model.safetensors.index.json`` (its ``weight_map`` names each tensor's file) or with
``*.safetensors`` files, one such file, or a Hub repository (``huggingface_hub``'s
``get_safetensors_metadata``: HTTP range reads of the headers). Every fault is one line.
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import NamedTuple

from ..core.errors import SymgptError, printable

#: the largest header read (the safetensors library refuses headers past 100 MB too)
MAX_HEADER = 100_000_000
MAX_INDEX = 64 << 20     # a model.safetensors.index.json
MAX_FILES = 10_000       # shards of one checkpoint
MAX_RANK = 16

#: safetensors dtype -> bits per element
DTYPE_BITS = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E4M3": 8, "F8_E5M2": 8, "F8_E8M0": 8,
              "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32,
              "I64": 64, "U64": 64, "F64": 64, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6}

_SHARD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}\.safetensors")


class Tensor(NamedTuple):
    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    file: str

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


class Checkpoint(NamedTuple):
    source: str              # what was read, as shown to the user
    tensors: tuple[Tensor, ...]
    files: int


def _entry(name, info, file: str, where: str, data_len: int | None) -> Tensor:
    shown = printable(name[:80])
    if not isinstance(info, dict):
        raise SymgptError(f"{where}: tensor {shown} is not an object in the header")
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if dtype not in DTYPE_BITS:
        raise SymgptError(f"{where}: tensor {shown} has dtype {printable(str(dtype)[:20])!r}, not a safetensors dtype")
    if (not isinstance(shape, list) or len(shape) > MAX_RANK
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
        raise SymgptError(f"{where}: tensor {shown} has no valid shape (a list of at most "
                          f"{MAX_RANK} non-negative integers)")
    if (not isinstance(offsets, list) or len(offsets) != 2
            or not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offsets)
            or offsets[1] < offsets[0]):
        raise SymgptError(f"{where}: tensor {shown} has no valid data_offsets [begin, end]")
    t = Tensor(name, dtype, tuple(shape), offsets[1] - offsets[0], file)
    bits = DTYPE_BITS[dtype] * t.numel
    if bits % 8 == 0 and bits // 8 != t.nbytes:
        raise SymgptError(f"{where}: tensor {shown} holds {t.nbytes:,} bytes, but {dtype} {tuple(shape)} "
                          f"is {bits // 8:,}")
    if data_len is not None and offsets[1] > data_len:
        raise SymgptError(f"{where}: tensor {shown} ends past the end of the file (truncated?)")
    return t


def _no_constant(name):
    raise SymgptError(f"{name} is not a number JSON allows")


def read_header(path: Path) -> list[Tensor]:
    """The tensors of one .safetensors file, from its header (at most MAX_HEADER bytes read)."""
    where = printable(str(path))
    try:
        if not path.is_file():  # a FIFO or a device would block or never end
            raise SymgptError(f"{where} is not a regular file")
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            f.seek(0)
            head = f.read(8)
            if len(head) < 8:
                raise SymgptError(f"{where} is not a safetensors file (shorter than its 8-byte header length)")
            (n,) = struct.unpack("<Q", head)
            if n > MAX_HEADER:
                raise SymgptError(f"{where}: a header of {n:,} bytes (at most {MAX_HEADER:,}): not a safetensors file?")
            if 8 + n > size:
                raise SymgptError(f"{where}: the header says {n:,} bytes but the file is {size:,} bytes (truncated?)")
            raw = f.read(n)
    except OSError as e:
        raise SymgptError(f"cannot read {where}: {e.strerror or e}") from None
    try:
        header = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise SymgptError(f"{where}: the header is not UTF-8 text (not a safetensors file?)") from None
    except json.JSONDecodeError as e:
        raise SymgptError(f"{where}: the header is not valid JSON ({e.msg})") from None
    except RecursionError:
        raise SymgptError(f"{where}: the header is nested too deeply") from None
    if not isinstance(header, dict):
        raise SymgptError(f"{where}: the header is not a JSON object")
    meta = header.get("__metadata__", {})
    if not isinstance(meta, dict):
        raise SymgptError(f"{where}: __metadata__ must be an object")
    data_len = size - 8 - n
    return [_entry(k, v, path.name, where, data_len) for k, v in header.items() if k != "__metadata__"]


def _index_files(folder: Path, index: Path) -> tuple[list[str], set[str]]:
    from ..core.io import read_bounded

    where = printable(str(index))
    try:
        data = json.loads(read_bounded(index, MAX_INDEX, "index").decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise SymgptError(f"{where} is not valid JSON") from None
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise SymgptError(f"{where}: no weight_map {{tensor: file}} object")
    files = sorted(set(weight_map.values()))
    for f in files:
        if not _SHARD.fullmatch(f):
            raise SymgptError(f"{where}: {printable(f[:80])!r} is not a .safetensors file name in the folder")
    return files, set(weight_map)


def read_local(path: Path) -> Checkpoint:
    """The tensors of a local checkpoint: a folder (its index, or every ``*.safetensors``) or
    one .safetensors file."""
    path = Path(path)
    where = printable(str(path))
    try:
        is_dir = path.is_dir()
        is_file = path.is_file()
    except OSError as e:
        raise SymgptError(f"cannot read {where}: {e.strerror or e}") from None
    if is_file:
        if path.suffix != ".safetensors":
            raise SymgptError(f"{where} is not a .safetensors file (verify reads safetensors headers)")
        return Checkpoint(str(path), tuple(read_header(path)), 1)
    if not is_dir:
        raise SymgptError(f"{where}: no such file or folder")
    index = path / "model.safetensors.index.json"
    names = None
    if index.is_file():
        files, names = _index_files(path, index)
    else:
        files = sorted(p.name for p in path.glob("*.safetensors") if p.is_file())
    if not files:
        raise SymgptError(f"{where} holds no *.safetensors file (verify reads safetensors checkpoints; "
                          "a .bin or .pt checkpoint is not read)")
    if len(files) > MAX_FILES:
        raise SymgptError(f"{where}: {len(files):,} shards (at most {MAX_FILES:,})")
    tensors: list[Tensor] = []
    seen: dict[str, str] = {}
    for f in files:
        for t in read_header(path / f):
            if t.name in seen:
                raise SymgptError(f"{where}: tensor {printable(t.name[:80])} is in {seen[t.name]} and in {f}")
            seen[t.name] = f
            tensors.append(t)
    if names is not None and names != set(seen):
        missing = sorted(names - set(seen))
        extra = sorted(set(seen) - names)
        what = (f"the index names {printable(missing[0][:80])} but no shard holds it" if missing
                else f"{printable(extra[0][:80])} is in a shard but not in the index")
        raise SymgptError(f"{printable(str(index))}: {what}")
    return Checkpoint(str(path), tuple(tensors), len(files))


def safetensors_metadata(repo_id: str, revision: str | None):
    """``huggingface_hub.get_safetensors_metadata`` (a module-level function, so that tests can
    replace it): the headers of a Hub repository's safetensors files, read with HTTP range
    requests (no weights are downloaded)."""
    from huggingface_hub import get_safetensors_metadata

    return get_safetensors_metadata(repo_id, revision=revision)


def read_hub(hub_id) -> Checkpoint:
    """The tensors of a Hub repository's safetensors checkpoint (headers only)."""
    from .hub import QuietHub, hub_error

    try:
        with QuietHub():
            meta = safetensors_metadata(hub_id.repo, hub_id.revision)
    except Exception as e:
        from huggingface_hub import errors as E

        if isinstance(e, E.NotASafetensorsRepoError):
            raise SymgptError(f"Hub repository {hub_id.repo} holds no safetensors checkpoint "
                              "(verify reads safetensors headers)") from None
        if isinstance(e, E.SafetensorsParsingError):
            raise SymgptError(f"Hub repository {hub_id.repo}: a safetensors header cannot be parsed") from None
        err = hub_error(e, hub_id, "the safetensors headers")
        if err is None:
            raise
        raise err from None
    tensors = []
    files = getattr(meta, "files_metadata", {}) or {}
    for fname, fmeta in sorted(files.items()):
        for name, info in fmeta.tensors.items():
            raw = {"dtype": info.dtype, "shape": list(info.shape), "data_offsets": list(info.data_offsets)}
            tensors.append(_entry(name, raw, fname, f"hf:{hub_id} {printable(fname)}", None))
    if not tensors:
        raise SymgptError(f"Hub repository {hub_id.repo} holds no safetensors tensors")
    return Checkpoint(f"hf:{hub_id}", tuple(tensors), len(files))

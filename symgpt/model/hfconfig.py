"""HF-style ``config.json`` files as models: no network, no weights, no transformers import.

``read_config(cfg, name)`` reads the JSON object, picks the family's reader by ``model_type``
(``symgpt.families.readers``) and reads the fields that family uses, with transformers' defaults
for missing ones (taken from transformers' configuration classes); ``symgpt.model.model.from_config``
makes the Model of it. A config whose ``architectures`` names a class the reader does not model is
refused. A field it does not understand is named in the notes, never guessed at; fields that do
not change any count (token ids, dtypes, epsilons, RoPE bases) stay silent. Faults are one-line
:class:`SymgptError` messages.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..core.errors import SymgptError, TooLarge, printable
from ..families import family as get_family, readers
from ..families.fields import ConfigModel, Fields

MAX_BYTES = 1 << 20  # a config.json is a few kilobytes
MAX_DIGITS = 1001  # digits of one integer in a config (the same bound as --set's 1e1000)

_DROPOUTS = ("attention_dropout", "hidden_dropout", "resid_pdrop", "embd_pdrop", "attn_pdrop",
             "dropout", "activation_dropout", "residual_dropout",  # SeedOssConfig
             "hidden_dropout_prob", "attention_probs_dropout_prob", "dropout_rate",  # BERT, ViT; T5
             "embed_dropout", "resid_dropout")  # GPT-Neo

_MISSING = object()


def _strict_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise SymgptError(f"an integer of {len(text.lstrip('-')):,} digits (at most {MAX_DIGITS})")
    return int(text)


def _strict_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise SymgptError(f"the number {text[:40]} is too large for a float")
    return value


def _no_constant(name: str):
    raise SymgptError(f"{name} is not a number JSON allows")


def read_json(path: Path) -> dict:
    """The JSON object in *path*; a one-line error for anything else (a FIFO or a device is
    refused, at most MAX_BYTES are read, NaN/Infinity and integers past MAX_DIGITS refused)."""
    from ..core.io import path_error, read_bounded

    shown = printable(str(path))
    try:
        if path.is_dir():
            raise SymgptError(f"{shown} is a directory with no config.json")
    except OSError as e:
        raise path_error(path, e, "read config") from None
    try:
        data = read_bounded(path, MAX_BYTES, "config")
    except TooLarge:
        raise SymgptError(f"{shown} is larger than {MAX_BYTES // 1024} KiB; a config.json is a few KiB") from None
    if not data.strip():
        raise SymgptError(f"{shown} is empty")
    try:
        cfg = json.loads(data.decode("utf-8-sig"), parse_int=_strict_int, parse_float=_strict_float,
                         parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise SymgptError(f"{shown} is not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise SymgptError(f"{shown} is not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except SymgptError as e:
        raise SymgptError(f"{shown}: {e}") from None
    except RecursionError:
        raise SymgptError(f"{shown} is nested too deeply") from None
    if not isinstance(cfg, dict):
        raise SymgptError(f"{shown} must hold a JSON object, got a JSON {_json_kind(cfg)}")
    return cfg


def _json_kind(value) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def read_config(cfg: dict, name: str, source: str = "") -> ConfigModel:
    """The family, flags, sizes and notes of an already parsed config object."""
    where = printable(source or name)
    if not isinstance(cfg, dict):
        raise SymgptError(f"{where}: a config must be a JSON object, got a JSON {_json_kind(cfg)}")
    known = readers()
    model_type = cfg.get("model_type", _MISSING)
    if model_type is _MISSING:
        raise SymgptError(f"{where}: missing field 'model_type' (one of {', '.join(sorted(known))})")
    if not isinstance(model_type, str):
        raise SymgptError(f"{where}: field 'model_type' must be a string")
    if model_type not in known:
        from ..families.unmodelled import NOT_MODELLED

        if model_type in NOT_MODELLED:
            raise SymgptError(f"{where}: model_type {model_type!r} is not modelled yet: it needs "
                              f"{NOT_MODELLED[model_type]}")
        raise SymgptError(f"{where}: unknown model_type {model_type[:60]!r}; supported: {', '.join(sorted(known))}")
    reader = known[model_type]
    f = Fields(cfg, where, _architecture(cfg, where, model_type, reader.architectures))
    fam_name, flags, sizes = reader.read(f)
    notes = list(f.notes)
    ps = sorted({k for k in _DROPOUTS if isinstance(cfg.get(k), (int, float)) and not isinstance(cfg.get(k), bool)
                 and cfg[k] > 0})
    if ps:
        notes.append(f"dropout in the config ({', '.join(ps)}) is not modelled; set dropout=true "
                     "to include its masks")
    for key in f.leftovers():
        notes.append(f"field {key[:60]!r} is not understood by symgpt ({model_type} reader): ignored")
    fam = get_family(fam_name)
    if "h_kv" in sizes and sizes.get("h_kv") == sizes.get("h") and not fam.flags.get("gqa"):
        del sizes["h_kv"]  # plain multi-head attention: keep h_kv out of the formulas
    return ConfigModel(fam_name, flags, sizes, tuple(notes))


def _architecture(cfg: dict, where: str, model_type: str, modelled: tuple[str, ...]) -> str | None:
    """The class the config's ``architectures`` field names first (None when it has none); a
    class the reader does not model is refused: its parameters are another count (a task head,
    a decoder alone), which symgpt would otherwise report silently as the modelled class's."""
    arch = cfg.get("architectures")
    if arch is None:
        return None
    if not isinstance(arch, list) or not arch or not all(isinstance(a, str) for a in arch):
        raise SymgptError(f"{where}: field 'architectures' must be a list of class names")
    for name in arch:
        if name not in modelled:
            raise SymgptError(f"{where}: architectures names {printable(name, 60)}, which symgpt does not model "
                              f"for model_type {model_type} (it counts {', '.join(modelled)})")
    return arch[0]


def locate(path: Path) -> tuple[Path, str]:
    """The ``config.json`` at *path* (or in the folder *path*, as a checkpoint folder holds it)
    and the model's name: the file's stem (the folder's name for a folder)."""
    path = Path(path)
    name = path.stem
    try:
        if path.is_dir() and (path / "config.json").is_file():
            path, name = path / "config.json", path.resolve().name
    except (OSError, RuntimeError) as e:  # a name too long, a symlink loop, a file as a folder
        from ..core.io import path_error

        raise path_error(path, e, "read config") from None
    return path, name or "config"

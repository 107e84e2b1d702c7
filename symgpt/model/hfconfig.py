"""HF-style ``config.json`` files as models: no network, no weights, no transformers import.

``read_config(cfg, name)`` reads the JSON object, picks the family by ``model_type`` and reads
the fields that family uses, with transformers' defaults for missing ones (taken from
transformers' configuration classes); ``symgpt.model.model.from_config`` makes the Model of it. A field
it does not understand is named in the notes, never guessed at; fields that do not change any
count (token ids, dtypes, epsilons, RoPE bases) stay silent. Faults are
one-line :class:`SymgptError` messages.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import NamedTuple

from ..core.errors import SymgptError, printable
from .hfreaders import READERS as _READERS
from .hfreaders_decoders import READERS as _DECODER_READERS

#: model_type -> reader: hfreaders' table, then issue 16's decoders' (hfreaders_decoders)
READERS = {**_READERS, **_DECODER_READERS}

MAX_BYTES = 1 << 20  # a config.json is a few kilobytes
MAX_DIGITS = 1001  # digits of one integer in a config (the same bound as --set's 1e1000)

#: fields that change no count symgpt derives: read silently
IGNORABLE = frozenset("""
    architectures torch_dtype dtype transformers_version model_type _name_or_path auto_map
    bos_token_id eos_token_id pad_token_id sep_token_id decoder_start_token_id
    use_cache initializer_range init_std rms_norm_eps layer_norm_eps layer_norm_epsilon
    rope_theta rope_scaling rotary_emb_base rope_parameters pretraining_tp
    output_attentions output_hidden_states return_dict id2label label2id problem_type
    tokenizer_class prefix is_decoder is_encoder_decoder chunk_size_feed_forward
    attention_dropout hidden_dropout resid_pdrop embd_pdrop attn_pdrop dropout
    activation_dropout classifier_dropout layerdrop summary_type summary_use_proj
    summary_activation summary_proj_to_labels summary_first_dropout
    router_aux_loss_coef output_router_logits router_jitter_noise
    original_max_position_embeddings use_bidirectional_attention task_specific_params
""".split())

_DROPOUTS = ("attention_dropout", "hidden_dropout", "resid_pdrop", "embd_pdrop", "attn_pdrop",
             "dropout", "activation_dropout",
             "hidden_dropout_prob", "attention_probs_dropout_prob", "dropout_rate")  # BERT, ViT; T5

#: HF activation names -> the decoder's ``activation`` flag
ACTIVATIONS = {"silu": "silu", "swish": "silu", "gelu": "gelu", "gelu_pytorch_tanh": "gelu_tanh",
               "gelu_new": "gelu_new", "gelu_fast": "gelu_tanh", "relu": "relu"}

_MISSING = object()


class Fields:
    """Typed access to a config's fields with defaults; remembers which fields were read."""

    def __init__(self, cfg: dict, where: str):
        self.cfg, self.where, self.used = cfg, where, {"model_type"}
        self.notes: list[str] = []

    def _get(self, key, default):
        self.used.add(key)
        value = self.cfg.get(key, _MISSING)
        if value is _MISSING:
            if default is _MISSING:
                raise SymgptError(f"{self.where}: missing field {key!r}")
            return default, True
        return value, False

    def int(self, key, default=_MISSING, optional=False, minimum=1):
        """An integer >= *minimum* (``None``/null allowed when *optional*)."""
        value, defaulted = self._get(key, default)
        if defaulted or (value is None and optional):
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise SymgptError(f"{self.where}: field {key!r} must be an integer, got {json.dumps(value)[:40]}")
        if value < minimum:
            raise SymgptError(f"{self.where}: field {key!r} must be "
                              f"{'positive' if minimum == 1 else f'at least {minimum}'}, got {value}")
        return value

    def bool(self, key, default=_MISSING):
        value, defaulted = self._get(key, default)
        if not defaulted and not isinstance(value, bool):
            raise SymgptError(f"{self.where}: field {key!r} must be true or false, got {json.dumps(value)[:40]}")
        return value

    def str(self, key, default=_MISSING, optional=False):
        value, defaulted = self._get(key, default)
        if defaulted or (value is None and optional):
            return value
        if not isinstance(value, str):
            raise SymgptError(f"{self.where}: field {key!r} must be a string, got {json.dumps(value)[:40]}")
        return value

    def fraction(self, key, default=_MISSING) -> Fraction:
        """A number in (0, 1], exactly as written in decimal (0.25 -> 1/4)."""
        value, defaulted = self._get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SymgptError(f"{self.where}: field {key!r} must be a number, got {json.dumps(value)[:40]}")
        f = Fraction(str(value)) if isinstance(value, float) else Fraction(value)
        if not 0 < f <= 1:
            raise SymgptError(f"{self.where}: field {key!r} must be in (0, 1], got {value}")
        return f

    def activation(self, key, default):
        return self.activation_named(key, self.str(key, default))

    def activation_named(self, key, name):
        """The activation flag for an HF activation *name* read from field *key* (T5 spells it
        inside ``feed_forward_proj``); an unknown one is noted and counted as silu."""
        if name not in ACTIVATIONS:
            self.notes.append(f"{key} {name!r} is not modelled: counted as silu (only elementwise costs differ)")
            return "silu"
        return ACTIVATIONS[name]

    def leftovers(self) -> list[str]:
        return sorted(k for k in self.cfg if k not in self.used and k not in IGNORABLE)


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
    except SymgptError as e:
        if "larger than the limit" in str(e):
            raise SymgptError(f"{shown} is larger than {MAX_BYTES // 1024} KiB; a config.json is a few KiB") from None
        raise
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


class ConfigModel(NamedTuple):
    """What a config.json says: the family, its flags and sizes, and notes on what was not
    understood. ``symgpt.model.model.from_config`` turns it into a Model."""

    family: str
    flags: dict
    sizes: dict
    notes: tuple[str, ...]


def read_config(cfg: dict, name: str, source: str = "") -> ConfigModel:
    """The family, flags, sizes and notes of an already parsed config object."""
    from ..families import family as get_family

    where = printable(source or name)
    if not isinstance(cfg, dict):
        raise SymgptError(f"{where}: a config must be a JSON object, got a JSON {_json_kind(cfg)}")
    model_type = cfg.get("model_type", _MISSING)
    if model_type is _MISSING:
        raise SymgptError(f"{where}: missing field 'model_type' (one of {', '.join(sorted(READERS))})")
    if not isinstance(model_type, str):
        raise SymgptError(f"{where}: field 'model_type' must be a string")
    if model_type not in READERS:
        raise SymgptError(f"{where}: unknown model_type {model_type[:60]!r}; supported: {', '.join(sorted(READERS))}")
    f = Fields(cfg, where)
    fam_name, flags, sizes = READERS[model_type](f)
    notes = list(f.notes)
    ps = sorted({k for k in _DROPOUTS if isinstance(cfg.get(k), (int, float)) and not isinstance(cfg.get(k), bool)
                 and cfg[k] > 0})
    if ps:
        notes.append(f"dropout in the config ({', '.join(ps)}) is not modelled; set dropout=true "
                     "to include its masks")
    for key in f.leftovers():
        notes.append(f"field {key[:60]!r} is not understood by symgpt ({model_type} reader): ignored")
    fam = get_family(fam_name)
    if sizes.get("h_kv") == sizes["h"] and not fam.flags.get("gqa"):
        del sizes["h_kv"]  # plain multi-head attention: keep h_kv out of the formulas
    return ConfigModel(fam_name, flags, sizes, tuple(notes))


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

"""Reading an HF-style ``config.json``: typed access to its fields with defaults (:class:`Fields`),
what a family's reader is (:class:`Reader`), what a reading gives (:class:`ConfigModel`), and the
reading helpers several families share (rotary fraction, heads, sliding windows, the fields every
LLaMA-like config has).

A reader takes :class:`Fields` and returns ``(family name, flags, sizes)``. It declares each field it
reads with transformers' default (its configuration class's ``__init__`` default, transformers
5.x), so a missing field means what it means there; a field it does not read is named in the notes
(``Fields.leftovers``), never guessed at. Faults are one-line :class:`SymgptError` messages. Light:
no SymPy, no family builder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, NamedTuple

from ..core.errors import SymgptError

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

#: HF activation names -> the families' ``activation`` flag
ACTIVATIONS = {"silu": "silu", "swish": "silu", "gelu": "gelu", "gelu_pytorch_tanh": "gelu_tanh",
               "gelu_new": "gelu_new", "gelu_fast": "gelu_tanh", "relu": "relu",
               "relu2": "relu2", "xielu": "xielu"}

#: the default of a field that must be present (``Fields.int("n_layer")`` raises if it is missing)
REQUIRED = object()


class Fields:
    """Typed access to a config's fields with defaults; remembers which fields were read.

    ``architecture`` is the transformers class the config's ``architectures`` field names first
    (None when it names none); ``symgpt.model.hfconfig.read_config`` has checked that the reader
    models it. ``notes`` collects what a reader wants said beside the answer."""

    def __init__(self, cfg: dict, where: str, architecture: str | None = None):
        self.cfg, self.where, self.used = cfg, where, {"model_type"}
        self.architecture = architecture
        self.notes: list[str] = []

    def get(self, key, default=REQUIRED) -> tuple[object, bool]:
        """The raw value of *key* and whether it was defaulted (a missing field without a
        default raises); the field counts as read."""
        self.used.add(key)
        if key not in self.cfg:
            if default is REQUIRED:
                raise SymgptError(f"{self.where}: missing field {key!r}")
            return default, True
        return self.cfg[key], False

    def silent(self, *keys) -> None:
        """Count *keys* as read: fields that change no count for this model type."""
        self.used.update(keys)

    def int(self, key, default=REQUIRED, optional=False, minimum=1):
        """An integer >= *minimum* (``None``/null allowed when *optional*)."""
        value, defaulted = self.get(key, default)
        if defaulted or (value is None and optional):
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise SymgptError(f"{self.where}: field {key!r} must be an integer, got {json.dumps(value)[:40]}")
        if value < minimum:
            raise SymgptError(f"{self.where}: field {key!r} must be "
                              f"{'positive' if minimum == 1 else f'at least {minimum}'}, got {value}")
        return value

    def aliased(self, key, alias, default):
        """An integer field that transformers also accepts under *alias* (its ``attribute_map``):
        the alias, when present, wins whatever the order (T5's ``num_hidden_layers`` sets
        ``num_layers``)."""
        if alias in self.cfg:
            self.used.add(key)
            return self.int(alias, default)
        return self.int(key, default)

    def rename(self, attribute_map: dict) -> None:
        """transformers' ``attribute_map`` (alias -> field) for this config class: each alias present
        is read as its field, and wins over the field (transformers sets the field from it)."""
        cfg = dict(self.cfg)
        for alias, key in attribute_map.items():
            if alias in cfg:
                cfg[key] = cfg.pop(alias)
        self.cfg = cfg

    def whole(self, key, default):
        """A positive whole number that config.json may write as a float (a soft cap of 50.0), or
        None when the field is null."""
        value, _ = self.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 \
                or Fraction(str(value)).denominator != 1:
            raise SymgptError(f"{self.where}: field {key!r} must be a positive whole number or null, got {value!r}")
        return int(value)

    def bool(self, key, default=REQUIRED):
        value, defaulted = self.get(key, default)
        if not defaulted and not isinstance(value, bool):
            raise SymgptError(f"{self.where}: field {key!r} must be true or false, got {json.dumps(value)[:40]}")
        return value

    def str(self, key, default=REQUIRED, optional=False):
        value, defaulted = self.get(key, default)
        if defaulted or (value is None and optional):
            return value
        if not isinstance(value, str):
            raise SymgptError(f"{self.where}: field {key!r} must be a string, got {json.dumps(value)[:40]}")
        return value

    def fraction(self, key, default=REQUIRED) -> Fraction:
        """A number in (0, 1], exactly as written in decimal (0.25 -> 1/4)."""
        value, defaulted = self.get(key, default)
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


@dataclass(frozen=True)
class Reader:
    """How one ``model_type``'s config.json reads: ``read(fields) -> (family, flags, sizes)``, and
    the transformers classes (``architectures``) whose parameters it counts. A config whose
    ``architectures`` names another class is refused (``symgpt.model.hfconfig.read_config``): a
    different head or a decoder alone is a different count."""

    read: Callable[[Fields], tuple[str, dict, dict]]
    architectures: tuple[str, ...]


#: the words a reader's note uses for a model run in a way transformers does not cache or generate
#: with (an encoder under a causal mask, GIT's mixed mask): ``inference.*`` refuses such a model
NO_GENERATION = "a KV cache and generation are not modelled"


def unread_layers_note(layers: int, layer: int) -> str | None:
    """The note for a vision tower whose projector reads hidden state *layer* (transformers'
    ``vision_feature_layer``: 0 the embeddings, -1 the last layer) of *layers*: the layers after it
    run forward (transformers asks for every hidden state) but no gradient reaches them, which the
    backward here still counts. None when the projector reads the last layer."""
    unread = -layer - 1 if layer < 0 else layers - layer
    if unread <= 0:
        return None
    return (f"in training, no gradient reaches the last {unread} vision layer(s) (the projector reads hidden "
            f"state {layer}): PyTorch runs no backward through them, while flops.backward and flops.train count "
            f"theirs, an overcount of twice their forward FLOPs (not modelled; the forward and the saved tensors "
            f"are exact)")


class ConfigModel(NamedTuple):
    """What a config.json says: the family, its flags and sizes, and notes on what was not
    understood. ``symgpt.model.model.from_config`` turns it into a Model."""

    family: str
    flags: dict
    sizes: dict
    notes: tuple[str, ...]


# --- helpers several families' readers share ----------------------------------------------------
def sub_fields(f: Fields, key: str) -> Fields:
    """The nested config object *key* (a ``vision_config``, an ``audio_config``) as Fields of its own."""
    cfg, _ = f.get(key, {})
    if not isinstance(cfg, dict):
        raise SymgptError(f"{f.where}: field {key!r} must be a JSON object")
    return Fields(cfg, f"{f.where} {key}")


def note_leftovers(f: Fields, sub: Fields, key: str) -> None:
    """Carry a nested object's notes to *f*, and note each of its fields symgpt did not read."""
    f.notes.extend(sub.notes)
    for k in sub.leftovers():
        f.notes.append(f"field {key}.{k[:60]!r} is not understood by symgpt: ignored")


def rotary_pct(f: Fields, legacy_key: str | None = None, default=Fraction(1)) -> int | None:
    """Percent of the head dimension rotated, from rope_parameters / partial_rotary_factor /
    a legacy key (GPT-NeoX's ``rotary_pct``); None for 100%."""
    rope = f.cfg.get("rope_parameters")
    if rope is not None and not isinstance(rope, dict):
        raise SymgptError(f"{f.where}: field 'rope_parameters' must be an object")
    if isinstance(rope, dict) and "partial_rotary_factor" in rope:
        frac = type(f)(rope, f"{f.where}: rope_parameters").fraction("partial_rotary_factor")
    elif "partial_rotary_factor" in f.cfg:
        frac = f.fraction("partial_rotary_factor")
    elif legacy_key and legacy_key in f.cfg:
        frac = f.fraction(legacy_key)
    else:
        frac = default
    f.used.update({"partial_rotary_factor", legacy_key} - {None})
    pct = frac * 100
    if pct.denominator != 1:
        raise SymgptError(f"{f.where}: a partial rotary factor of {float(frac)} is not a whole percentage")
    return None if pct == 100 else int(pct)


def heads(f: Fields, sizes: dict, kv_default=None, head_dim_default=None) -> None:
    """Set ``h_kv`` in *sizes* (``num_key_value_heads``; h when the config says none) and
    ``d_head`` (when ``head_dim`` is set). *sizes* already holds ``h``."""
    kv = f.int("num_key_value_heads", kv_default, optional=True)
    sizes["h_kv"] = kv if kv is not None else sizes["h"]
    head_dim = f.int("head_dim", head_dim_default, optional=True)
    if head_dim is not None:
        sizes["d_head"] = head_dim


def window(f: Fields, flags: dict, sizes: dict, default=None) -> None:
    """``sliding_window``: the ``window`` flag and the size ``W`` when it is set."""
    w = f.int("sliding_window", default, optional=True)
    flags["window"] = w is not None
    if w is not None:
        sizes["W"] = w


def llama_like(f: Fields, defaults: dict) -> tuple[dict, dict]:
    """The fields LLaMA-like configs share (LLaMA, Mistral, Mixtral, Qwen, Gemma, Phi, ...):
    vocabulary, widths, layers, heads (``heads``), positions, ``tie_word_embeddings``,
    ``hidden_act`` and the rotary fraction. *defaults* holds the configuration class's defaults:
    ``V``, ``d``, ``d_ff``, ``L``, ``h``, ``T_max`` and optionally ``h_kv``, ``head_dim``,
    ``tied`` (False) and ``act`` (``silu``). Returns ``(flags, sizes)``."""
    D = defaults
    sizes = {"V": f.int("vocab_size", D["V"]), "d": f.int("hidden_size", D["d"]),
             "d_ff": f.int("intermediate_size", D["d_ff"]), "L": f.int("num_hidden_layers", D["L"]),
             "h": f.int("num_attention_heads", D["h"]),
             "T_max": f.int("max_position_embeddings", D["T_max"])}
    flags = {"tied": f.bool("tie_word_embeddings", D.get("tied", False)),
             "activation": f.activation("hidden_act", D.get("act", "silu")),
             "rotary_pct": rotary_pct(f)}
    heads(f, sizes, kv_default=D.get("h_kv"), head_dim_default=D.get("head_dim"))
    return flags, sizes


def every_pth_full(L: int, p: int) -> list[str]:
    """The layer pattern most configs default to: every *p*-th of *L* layers full attention, the
    others sliding-window (Gemma 2: p = 2; Gemma 3, Cohere2: 4 or 6; OLMo 3: 4; Kolibri: 5)."""
    return ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(L)]


def layer_types(f: Fields, L: int, default: list[str]) -> list[str]:
    """``layer_types`` (each layer ``full_attention`` or ``sliding_attention``), *default* when
    the config has none; a list of another length than *L* raises."""
    types = f.cfg.get("layer_types")
    f.used.add("layer_types")
    if types is None:
        return default
    if not isinstance(types, list) or not all(t in ("full_attention", "sliding_attention") for t in types):
        raise SymgptError(f"{f.where}: field 'layer_types' must be a list of 'full_attention' / 'sliding_attention'")
    if len(types) != L:
        raise SymgptError(f"{f.where}: layer_types lists {len(types)} layers, num_hidden_layers is {L}")
    return types


def windows(f: Fields, flags: dict, sizes: dict, types: list[str], window) -> None:
    """Sliding-window layers among full ones: every layer alike, or one full layer in every p
    (``full_every``; the layer pattern must be that periodic one, which the decoder declares as
    two stacks of L - floor(L/p) sliding and floor(L/p) full layers). The full layer may stand at
    any place of its period (Gemma 2: last, CWM: first) as long as floor(L/p) layers are full: the
    order of the layers changes no count."""
    kinds = set(types)
    flags["window"] = "sliding_attention" in kinds
    flags["full_every"] = None  # set below when the layers mix (a family's default is overridden)
    if not flags["window"]:
        return
    if window is None:
        raise SymgptError(f"{f.where}: sliding_attention layers need a 'sliding_window' length")
    sizes["W"] = window
    if kinds == {"sliding_attention"}:
        return
    L = len(types)
    full = [i for i, t in enumerate(types) if t == "full_attention"]
    first = full[0]
    if len(full) > 1:
        p = full[1] - first
    else:  # one full layer: its period ends with it, or spans every layer
        p = first + 1 if L // (first + 1) == 1 else L
    if first >= p or len(full) != L // p \
            or types != ["full_attention" if i % p == first else "sliding_attention" for i in range(L)]:
        raise SymgptError(f"{f.where}: layer_types is not one full-attention layer in every p with "
                          "floor(L/p) full layers (the pattern symgpt declares as two stacks)")
    flags["full_every"] = p


def periodic_windows(f: Fields, flags: dict, sizes: dict, types: list[str], window) -> None:
    """Like :func:`windows`, for a pattern of one full-attention layer in every p at any phase
    (GPT-Neo's global layer comes first, Cohere2's last) when p divides L: the full layers are
    then L/p whatever the phase, and the order of the stacks changes no count."""
    kinds = set(types)
    if len(kinds) < 2:
        windows(f, flags, sizes, types, window)
        return
    full = [i for i, t in enumerate(types) if t == "full_attention"]
    L = len(types)
    p = full[1] - full[0] if len(full) > 1 else L
    if p < 2 or L % p or full != list(range(full[0], L, p)) or full[0] >= p:
        raise SymgptError(f"{f.where}: the layer pattern is not one full-attention layer in every p layers "
                          "with p dividing the layer count (the pattern symgpt declares as two stacks)")
    if window is None:
        raise SymgptError(f"{f.where}: sliding_attention layers need a window length")
    flags["window"], flags["full_every"] = True, p
    sizes["W"] = window


def exaone_windows(f: Fields, flags: dict, sizes: dict) -> list[str]:
    """EXAONE 4's layer pattern (Exaone4Config, ExaoneMoeConfig): ``sliding_window_pattern`` p
    makes every p-th layer full (none when sliding_window is null), or ``layer_types`` says it;
    the full layers have no rotary when a window is set. Sets the window flags; returns the types."""
    window = f.int("sliding_window", 4096, optional=True)
    p, _ = f.get("sliding_window_pattern", 4)
    L = sizes["L"]
    if window is None:
        default = ["full_attention"] * L
    elif isinstance(p, int) and not isinstance(p, bool) and p > 0:
        default = every_pth_full(L, p)
    elif "layer_types" not in f.cfg:
        raise SymgptError(f"{f.where}: sliding_window_pattern {p!r} without layer_types is not modelled")
    else:
        default = None
    types = layer_types(f, L, default)
    if window is not None and "sliding_attention" not in types:
        raise SymgptError(f"{f.where}: a sliding_window with no sliding layer makes every layer one "
                          "without positions (not modelled)")
    flags["full_every"] = None
    periodic_windows(f, flags, sizes, types, window)
    flags["nope_full"] = bool(flags["full_every"])
    return types

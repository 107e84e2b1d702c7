"""A model: a family, its flags and its bindings -- the object users load and query.

>>> import symgpt
>>> m = symgpt.load("gpt2-small")
>>> m.params.value
124439808
>>> symgpt.load("gpt2-small", tied=False).params == 163_037_184
True
"""

from __future__ import annotations

from functools import cached_property, lru_cache
from pathlib import Path
from typing import Mapping

import sympy

from ..core.errors import SymgptError
from ..families import family as get_family, families, find_preset, presets
from ..families.base import Family, Preset
from ..graph.arch import Arch
from ..derive.params import params as count_params
from ..core.lazy import Ref
from ..derive.quantity import Quantity, evaluate
from ..core.symbols import CANONICAL, FLAG_SYMBOLS, LENGTHS, MEANING, ZERO_ALLOWED
from ..core.flag_symbols import LAYER_KINDS

#: the parallel dimensions ``comm.DIMS`` prices (``tests/test_lazy.py`` checks they agree)
COMM_DIMS = ("dp", "tp", "pp", "ep", "cp")

#: quantity name -> its ``provider(model, **options) -> Quantity``, in the order they are listed
#: (``params`` is ``Model.params``). An explicit table of lazy references (``symgpt.core.lazy.Ref``):
#: a provider's module is imported the first time the quantity is asked for, and a provider
#: that is missing raises then (``tests/test_lazy.py`` resolves every one).
QUANTITIES = {
    "flops.forward": Ref("symgpt.derive.flops", "forward"),
    "flops.backward": Ref("symgpt.derive.flops", "backward"),
    "flops.train": Ref("symgpt.derive.flops", "train"),
    "time.step": Ref("symgpt.derive.time", "step"),
    "time.throughput": Ref("symgpt.derive.time", "throughput"),
    "time.mfu": Ref("symgpt.derive.time", "mfu"),
    "time.training": Ref("symgpt.derive.time", "training"),
    "loss.initial": Ref("symgpt.derive.time", "initial_loss"),
    "memory.weights": Ref("symgpt.derive.memory", "weights"),
    "memory.gradients": Ref("symgpt.derive.memory", "gradients"),
    "memory.optimizer": Ref("symgpt.derive.memory", "optimizer"),
    "memory.activations": Ref("symgpt.derive.memory", "activations"),
    "memory.logits": Ref("symgpt.derive.memory", "logits"),
    "memory.kv_cache": Ref("symgpt.derive.memory", "kv_cache"),
    "memory.total": Ref("symgpt.derive.memory", "total"),
    "memory.host": Ref("symgpt.derive.memory", "host"),
    "memory.megatron": Ref("symgpt.derive.megatron", "megatron"),
    **{f"comm.{dim}": Ref("symgpt.derive.comm", "provider", (dim,)) for dim in COMM_DIMS},
    "comm.total": Ref("symgpt.derive.comm", "total"),
    "time.compute": Ref("symgpt.derive.steptime", "compute"),
    "time.comm": Ref("symgpt.derive.steptime", "comm"),
    "time.bubble": Ref("symgpt.derive.steptime", "bubble"),
    "time.mfu_cluster": Ref("symgpt.derive.steptime", "mfu"),
    "time.hfu": Ref("symgpt.derive.steptime", "hfu"),
    "time.to_train": Ref("symgpt.derive.steptime", "to_train"),
    "time.device_hours": Ref("symgpt.derive.steptime", "device_hours"),
    # offloading to host memory: bytes across the host link per step and their seconds
    "offload.traffic": Ref("symgpt.derive.offload", "traffic"),
    "offload.time": Ref("symgpt.derive.offload", "host_time"),
    # MoE load imbalance: token copies dropped under a capacity limit
    "moe.dropped": Ref("symgpt.derive.moe_load", "dropped"),
    "params.active": Ref("symgpt.derive.active", "active"),
    # parameter-efficient fine-tuning (derive.finetune): what gets a gradient and what stays frozen
    "params.trainable": Ref("symgpt.derive.finetune", "trainable"),
    "params.frozen": Ref("symgpt.derive.finetune", "frozen"),
    "inference.prefill.flops": Ref("symgpt.derive.inference", "prefill_flops"),
    "inference.prefill.bytes": Ref("symgpt.derive.inference", "prefill_bytes"),
    "inference.prefill.time": Ref("symgpt.derive.inference_time", "prefill_time"),
    "inference.decode.flops": Ref("symgpt.derive.inference", "decode_flops"),
    "inference.decode.bytes": Ref("symgpt.derive.inference", "decode_bytes"),
    "inference.decode.time": Ref("symgpt.derive.inference_time", "decode_time"),
    "inference.kv_cache": Ref("symgpt.derive.inference", "kv_cache"),
    "inference.weights": Ref("symgpt.derive.inference", "weights"),
    "inference.memory": Ref("symgpt.derive.inference", "memory"),
    "inference.intensity": Ref("symgpt.derive.inference_time", "intensity"),
    "inference.critical_batch": Ref("symgpt.derive.inference_time", "critical_batch"),
    "inference.generate.time": Ref("symgpt.derive.inference_time", "generate_time"),
    "inference.ttft": Ref("symgpt.derive.inference_time", "ttft"),
    "inference.tpot": Ref("symgpt.derive.inference_time", "tpot"),
    "inference.tokens_per_s": Ref("symgpt.derive.inference_time", "tokens_per_s"),
    # the recurrent state of state-space and linear-attention layers
    "inference.state": Ref("symgpt.derive.inference", "state"),
}

_PROVIDERS: dict[str, object] = dict(QUANTITIES)


def _provider(name: str):
    """The provider of quantity *name* (its module imported if need be); KeyError if unknown."""
    p = _PROVIDERS[name]
    return p.get() if isinstance(p, Ref) else p


def register_quantity(name: str, provider) -> None:
    """Add ``provider(model, **options) -> Quantity`` as quantity *name* (your own quantity, next
    to the built-in ones of ``QUANTITIES``; a name taken already raises)."""
    if name in _PROVIDERS or name == "params":
        raise SymgptError(f"quantity {name!r} is registered twice")
    _PROVIDERS[name] = provider


def quantity_names() -> list[str]:
    return list(_PROVIDERS)


def _missing_options(provider, options) -> list[str]:
    """The options *provider* requires (parameters without a default) that *options* lacks."""
    import inspect

    try:
        params = list(inspect.signature(provider).parameters.values())[1:]  # after the model
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in options]


@lru_cache(maxsize=512)
def _build(fam: Family, flags: tuple, bound: frozenset) -> Arch:
    return fam.build(dict(flags), bound)


def _check_flag(fam: Family, name: str, value):
    default = fam.flags[name]
    if isinstance(default, str):
        allowed = fam.choices.get(name, (default,))  # a family's own container may accept a well-formed spec
        if value not in allowed:
            raise SymgptError(f"flag {name} takes one of {', '.join(tuple(allowed))}, got {value!r}")
        return value
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise SymgptError(f"flag {name} takes true or false, got {value!r}")
    elif isinstance(value, bool) or not (value is None or isinstance(value, int)):
        raise SymgptError(f"flag {name} takes a positive integer, got {value!r}")
    elif value is not None and value <= 0:
        raise SymgptError(f"flag {name} must be a positive integer, got {value}")
    return value


def _check_size(name: str, value) -> sympy.Integer:
    if isinstance(value, bool) or not isinstance(value, (int, sympy.Integer)):
        raise SymgptError(f"{name} must be a positive integer, got {value!r}")
    if value < 0 or (value == 0 and name not in ZERO_ALLOWED):
        kind = "a non-negative" if name in ZERO_ALLOWED else "a positive"
        raise SymgptError(f"{name} must be {kind} integer, got {value}")
    return sympy.Integer(value)


def _check_conflicts(m: "Model", explicit) -> "Model":
    """Refuse a flag set explicitly true that another flag of *m* makes ineffective."""
    for name, (other, value) in m.family.overridden_by.items():
        if name in explicit and m.flags.get(name) and m.flags.get(other) == value:
            shown = str(value).lower() if isinstance(value, bool) else value
            why = m.family.flag_help.get(other, "")
            raise SymgptError(f"conflicting flags: {name}=true has no effect with {other}={shown}"
                              + (f" ({other}: {why})" if why else "") + "; set only one of them")
    return m


class Model:
    """A family with its flags and bound sizes. Immutable; ``with_`` returns a changed copy."""

    def __init__(self, name: str, fam: Family, flags: Mapping[str, object] | None = None,
                 sizes: Mapping[str, int] | None = None, preset: Preset | None = None,
                 source: str | None = None, notes: tuple[str, ...] = ()):
        self.name = name
        self.family = fam
        self.preset = preset
        self.source = source
        self.notes = tuple(notes)
        merged = dict(fam.flags)
        for k, v in (flags or {}).items():
            if k not in fam.flags:
                raise SymgptError(f"unknown flag {k!r} for family {fam.name}; flags: {', '.join(fam.flags)}")
            merged[k] = _check_flag(fam, k, v)
        self.flags = merged
        self.sizes: dict[str, sympy.Integer] = {}
        for k, v in (sizes or {}).items():
            if k not in CANONICAL:
                raise SymgptError(f"unknown symbol {k!r}; symbols: {', '.join(CANONICAL)}")
            self.sizes[k] = _check_size(k, v)
        for flag, name in FLAG_SYMBOLS.items():  # a size flag's symbol is bound to the flag's value
            if flag in merged:
                self.sizes.pop(name, None)
                if isinstance(merged[flag], int) and not isinstance(merged[flag], bool):
                    self.sizes[name] = sympy.Integer(merged[flag])
        # a layer kind's count set on a model whose layers are not counted that way: refused
        kinds = {name for flag, name in FLAG_SYMBOLS.items() if flag in merged}
        for name in sorted(LAYER_KINDS & set(self.sizes) - kinds):
            from .layer_kinds import not_a_count

            raise SymgptError(not_a_count(self, name))
        self._check_constraints(waive=preset.waive if preset else ())

    # --- construction -----------------------------------------------------------------------
    def with_(self, /, **changes) -> "Model":
        """A copy with flags set and symbols bound (``m.with_(tied=False, B=8, T=1024)``)."""
        flags, sizes = _split(self.family, changes)
        flags, sizes = {**self.flags, **flags}, {**self.sizes, **sizes}
        return _check_conflicts(Model(self.name, self.family, flags, sizes, self.preset, self.source,
                                      self.notes), changes)

    def free(self, *names: str) -> "Model":
        """A copy with the sizes *names* unbound, its graph built as if they were bound (so an
        optional size such as ``d_ff`` stays its own symbol). Sweeps evaluate it over a grid."""
        for n in names:
            if n not in CANONICAL:
                raise SymgptError(f"unknown symbol {n!r}; symbols: {', '.join(CANONICAL)}")
        sizes = {k: v for k, v in self.sizes.items() if k not in names}
        m = Model(self.name, self.family, self.flags, sizes, self.preset, self.source, self.notes)
        for n in names:  # a size flag's symbol (r_kv) too: the flag still chooses the graph
            m.sizes.pop(n, None)
        bound = frozenset(k for k in (*sizes, *names) if k not in LENGTHS)
        m.__dict__["arch"] = _build(self.family, tuple(sorted(self.flags.items(), key=lambda kv: kv[0])), bound)
        return m

    # --- the graph --------------------------------------------------------------------------
    @cached_property
    def arch(self) -> Arch:
        bound = frozenset(k for k in self.sizes if k not in LENGTHS)
        return _build(self.family, tuple(sorted(self.flags.items(), key=lambda kv: kv[0])), bound)

    @property
    def graph(self):
        """The op graph, a ``networkx.DiGraph`` (built on first use; the derivations use
        ``arch.graph``, the same graph held without networkx: see ``symgpt.graph.digraph``)."""
        return self.arch.networkx()

    @property
    def bindings(self) -> dict[sympy.Symbol, sympy.Integer]:
        """Symbol -> exact integer for every bound size."""
        return {CANONICAL[k]: v for k, v in self.sizes.items()}

    def _check_constraints(self, waive=(), strict: bool = False) -> None:
        for c in self.arch.constraints:
            if c.id is not None and c.id in waive and not strict:
                continue
            v = evaluate(c.expr, self.bindings)
            if v is None:
                continue
            bad = (not v.is_Integer or v <= 0) if c.kind == "integer" else bool(v > 0)
            if bad:
                shown = ", ".join(f"{s}={self.sizes[s.name]}" for s in sorted(c.expr.free_symbols, key=str)
                                  if s.name in self.sizes)
                raise SymgptError(f"{self.name}: {c.message} ({shown})")

    # --- quantities ------------------------------------------------------------------------
    @cached_property
    def params(self) -> Quantity:
        """The exact parameter count, with its breakdown by op path."""
        return count_params(self.arch, self.bindings)

    def quantity(self, name: str, /, **options) -> Quantity:
        """Any registered quantity by name: ``params``, ``flops.forward``, ``memory.total``, ..."""
        if name == "params":
            if options:
                raise SymgptError(f"params takes no options, got {', '.join(options)}")
            return self.params
        try:
            provider = _provider(name)
        except KeyError:
            raise SymgptError(
                f"unknown quantity {name!r}; known: {', '.join(['params', *_PROVIDERS])}"
            ) from None
        missing = _missing_options(provider, options)
        if missing:
            how = getattr(provider, "needs", "") or f"give --option {missing[0]}=VALUE"
            raise SymgptError(f"quantity {name} needs the option {', '.join(missing)}: {how}")
        try:  # a model is immutable and providers are pure: derive each (name, options) once
            key = (name, tuple(sorted(options.items())))
            hash(key)
        except TypeError:
            return provider(self, **options)
        cache = self.__dict__.setdefault("_quantity_cache", {})
        if key not in cache:
            cache[key] = provider(self, **options)
        return cache[key]

    def shapes(self, /, **values: int):
        """The shape trace, symbolic; concrete where sizes (and ``B``, ``T`` given here) are bound."""
        m = self.with_(**values) if values else self
        m._check_constraints(strict=True)
        from ..derive.shapes import TensorShape, trace

        b = m.bindings
        return [TensorShape(t.name, t.label, t.op, tuple(s.xreplace(b) for s in t.shape), t.group)
                for t in trace(m.arch)]

    def value(self, expr: sympy.Expr):
        """The exact value of any expression over the canonical symbols at this model's sizes."""
        return evaluate(expr, self.bindings)

    def describe(self) -> str:
        sizes = ", ".join(f"{k}={v}" for k, v in self.sizes.items())
        return f"{self.name} ({self.family.name}: {sizes})"

    def __repr__(self) -> str:
        return f"<Model {self.describe()}>"


def _split(fam: Family, overrides: Mapping[str, object]):
    flags, sizes = {}, {}
    by_symbol = {name: flag for flag, name in FLAG_SYMBOLS.items() if flag in fam.flags}
    for k, v in overrides.items():
        if k in fam.flags:
            flags[k] = v
        elif k in by_symbol:  # r_kv=256 sets the flag kv_lora_rank the symbol shows
            if by_symbol[k] in overrides:
                raise SymgptError(f"{k} is the value of the flag {by_symbol[k]}: set only one of them")
            flags[by_symbol[k]] = v
        elif k in CANONICAL:
            sizes[k] = v
        else:
            raise SymgptError(
                f"unknown setting {k!r}: not a symbol ({', '.join(CANONICAL)}) "
                f"nor a flag of {fam.name} ({', '.join(fam.flags)})"
            )
    return flags, sizes


def from_config(cfg: dict, name: str, source: str = "", /, **overrides) -> Model:
    """A :class:`Model` from an already parsed HF-style config object (``name`` is kept as data);
    keyword overrides as in :func:`load`."""
    from .hfconfig import read_config

    spec = read_config(cfg, name, source)
    fam = get_family(spec.family)
    o_flags, o_sizes = _split(fam, overrides)
    return Model(name, fam, {**spec.flags, **o_flags}, {**spec.sizes, **o_sizes}, source=source or None,
                 notes=spec.notes)


def load(model, /, **overrides) -> Model:
    """Load a preset (``"gpt2-small"``), a family (``"gpt2"``: all sizes symbolic), a path to an
    HF-style ``config.json`` (or its folder), or a Hub id (``"Qwen/Qwen3-8B"``, ``"org/name@rev"``,
    ``"hf:name"``: its config.json only, through ``symgpt.model.hub``); keyword overrides set flags (``tied=False``) and bind symbols
    (``B=8, T=1024``)."""
    if isinstance(model, Model):
        return model.with_(**overrides) if overrides else model
    if isinstance(model, str) and (model.startswith("hf:") or _hub_name(model)):
        from .hfconfig import read_json
        from .hub import config_path, parse

        hub_id = parse(model)
        cfg = read_json(config_path(hub_id))
        name = hub_id.repo.rsplit("/", 1)[-1]
        return _check_conflicts(from_config(cfg, name, f"hf:{hub_id}", **overrides), overrides)
    if isinstance(model, Path) or (isinstance(model, str) and (model.endswith(".json") or "/" in model)):
        from .hfconfig import locate, read_json

        path, name = locate(Path(model))
        return _check_conflicts(from_config(read_json(path), name, str(path), **overrides), overrides)
    if not isinstance(model, str):
        raise SymgptError(f"a model is a preset name, a path to a config.json or a Hub id, got {type(model).__name__}")
    p = find_preset(model)
    if p is not None:
        fam = get_family(p.family)
        flags, sizes = _split(fam, overrides)
        return _check_conflicts(Model(p.name, fam, {**p.flags, **flags}, {**p.sizes, **sizes}, p,
                                      notes=(p.note,) if p.note else ()), flags)
    if model in families():
        fam = get_family(model)
        flags, sizes = _split(fam, overrides)
        return _check_conflicts(Model(model, fam, flags, sizes), flags)
    close = suggestions(model, [*presets(), *families()])
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    shown = repr(model if len(model) <= 60 else model[:57] + "...")
    raise SymgptError(f"unknown model {shown}{hint}; run 'symgpt models' for the presets, or give a path to a config.json")


def suggestions(name: str, names) -> list[str]:
    """The names a typo most likely meant: spelled alike once case, ``_``, ``-``, ``.`` and
    spaces are ignored (``gpt2_small``, ``GPT-2``), then by similarity (``llama2-7b``)."""
    import difflib

    def key(s: str) -> str:
        return "".join(ch for ch in s.lower() if ch.isalnum())

    names = list(names)
    k = key(name)
    same = [n for n in names if key(n) == k]
    if same:
        return same
    keys = {key(n): n for n in names}
    close = [keys[c] for c in difflib.get_close_matches(k, list(keys), n=3, cutoff=0.75)]
    return close or [n for n in names if k and (k in key(n) or key(n) in k)][:3]


def _hub_name(model: str) -> bool:
    """Whether *model* names a Hub repository: ``org/name[@revision]`` that is no local path and
    no preset (a local path wins, then a preset, then the Hub)."""
    if "/" not in model or find_preset(model) is not None:
        return False
    from .hub import looks_like_id

    if not looks_like_id(model):
        return False
    try:
        return not Path(model).exists()
    except (OSError, ValueError):
        return False


def symbol_help() -> dict[str, str]:
    return dict(MEANING)

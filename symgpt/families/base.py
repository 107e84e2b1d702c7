"""What a family of architectures is (:class:`Family`: its flags, its sizes, a function that builds its
graph) and what a preset is (:class:`Preset`: one named configuration, a plain data row with its
public source).

A family module (``symgpt.families.<name>``) declares ``FAMILIES``, ``READERS`` and ``PRESETS`` and
is named in the table of ``symgpt.families``; that table registers its families. It imports nothing
heavy: its builder is a lazy reference (``symgpt.core.lazy.Ref``), and flag tables that live with a
builder are read through :class:`Extended` on first use. Families of your own go through
``symgpt.families.register_family`` (a second family of one name raises).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Callable, Iterator

from ..core.errors import SymgptError
from ..core.lazy import Ref


class Extended(Mapping):
    """The mapping a :class:`~symgpt.core.lazy.Ref` names, with *changes* on top and *added* keys
    after it, read on first use (a decoder family's flags: the generic decoder's table, which lives
    with its builder, and the family's own defaults). A change that is not a key of the base
    mapping, or an added key that is, raises then."""

    def __init__(self, base: Ref, changes: Mapping | None = None, added: Mapping | None = None):
        self.base, self.changes, self.added = base, dict(changes or {}), dict(added or {})
        self._data: dict | None = None

    def _resolved(self) -> dict:
        if self._data is None:
            base = self.base.get()
            unknown, clash = sorted(set(self.changes) - set(base)), sorted(set(self.added) & set(base))
            if unknown or clash:
                raise SymgptError(f"{self.base!r} has no keys {unknown}" if unknown
                                  else f"{self.base!r} already has the keys {clash}")
            self._data = {**base, **self.changes, **self.added}
        return self._data

    def __getitem__(self, key):
        return self._resolved()[key]

    def __iter__(self) -> Iterator:
        return iter(self._resolved())

    def __len__(self) -> int:
        return len(self._resolved())

    def __repr__(self) -> str:
        return f"Extended({self.base!r}, {self.changes!r}, {self.added!r})"


@dataclass(frozen=True, eq=False)
class Family:
    """A family: ``build(flags, bound)`` returns its :class:`~symgpt.graph.arch.Arch`.

    ``flags`` maps each flag to its default (bool, int or None); ``sizes`` names the symbols a
    configuration must bind; ``optional`` the symbols it may bind (binding ``d_ff`` replaces the
    default width 4d by the symbol ``d_ff``). ``bound`` passed to build is the set of bound
    symbol names, so a family can choose ``d_ff`` over ``4*d`` when the user set it. ``build`` may
    be a lazy reference (``functools.partial(Ref(module, "build"), name=...)``): its module is
    imported on the first build.
    """

    name: str
    description: str
    flags: Mapping[str, object]
    sizes: tuple[str, ...]
    build: Callable
    optional: tuple[str, ...] = ()
    flag_help: Mapping[str, str] = field(default_factory=dict)
    #: the allowed values of each text-valued flag (``norm``: layernorm, rmsnorm)
    choices: Mapping[str, tuple] = field(default_factory=dict)
    #: flag -> (other flag, value): setting the flag true explicitly while the other flag has
    #: that value is a conflict (gpt2: ``qkv_bias=true`` does nothing under ``bias=false``)
    overridden_by: Mapping[str, tuple] = field(default_factory=dict)


@dataclass(frozen=True)
class Preset:
    """One named configuration as a data row: its family, sizes, flags, public source and caveats."""

    name: str
    family: str
    sizes: Mapping[str, int]
    flags: Mapping[str, object] = field(default_factory=dict)
    source: str = ""
    note: str = ""
    #: ids of the constraints (``Builder.require(..., id=...)``) not enforced at load time because
    #: the published row breaks them (they are enforced when concrete shapes are asked for)
    waive: tuple[str, ...] = ()


_FAMILIES: dict[str, Family] = {}


def register_family(family: Family) -> Family:
    """Register a family of your own (``symgpt.families.register_family`` checks the built-in
    names first)."""
    if family.name in _FAMILIES:
        raise SymgptError(f"family {family.name!r} is registered twice")
    _FAMILIES[family.name] = family
    return family


def registered() -> dict[str, Family]:
    """The families registered by the user so far (the built-in ones are declared by the modules
    that ``symgpt.families`` names)."""
    return dict(_FAMILIES)

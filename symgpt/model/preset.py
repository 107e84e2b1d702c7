"""A preset: one named configuration as a data row (family, sizes, flags, source, caveats).
The tables of presets are ``presets`` and ``presets_decoder``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


@dataclass(frozen=True)
class Preset:
    name: str
    family: str
    sizes: Mapping[str, int]
    flags: Mapping[str, object] = field(default_factory=dict)
    source: str = ""
    note: str = ""
    #: constraint messages not enforced at load time because the published row breaks them
    #: (they are enforced when concrete shapes are asked for)
    waive: tuple[str, ...] = ()

"""What a family of architectures is: its flags, its sizes, and a function that builds its graph.

A family is data plus one build function that declares the graph on the op catalog
(``symgpt.graph.arch.Builder``). The registry is loud: a second family of the same name raises.
Look families up with ``symgpt.families.family``, which imports a built-in family's module first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..core.errors import SymgptError
from ..graph.arch import Arch


@dataclass(frozen=True, eq=False)
class Family:
    """A family: ``build(flags, bound)`` returns its :class:`Arch`.

    ``flags`` maps each flag to its default (bool, int or None); ``sizes`` names the symbols a
    configuration must bind; ``optional`` the symbols it may bind (binding ``d_ff`` replaces the
    default width 4d by the symbol ``d_ff``). ``bound`` passed to build is the set of bound
    symbol names, so a family can choose ``d_ff`` over ``4*d`` when the user set it.
    """

    name: str
    description: str
    flags: Mapping[str, object]
    sizes: tuple[str, ...]
    build: Callable[[Mapping[str, object], frozenset], Arch]
    optional: tuple[str, ...] = ()
    flag_help: Mapping[str, str] = field(default_factory=dict)
    #: the allowed values of each text-valued flag (``norm``: layernorm, rmsnorm)
    choices: Mapping[str, tuple] = field(default_factory=dict)
    #: flag -> (other flag, value): setting the flag true explicitly while the other flag has
    #: that value is a conflict (gpt2: ``qkv_bias=true`` does nothing under ``bias=false``)
    overridden_by: Mapping[str, tuple] = field(default_factory=dict)


_FAMILIES: dict[str, Family] = {}


def register_family(family: Family) -> Family:
    if family.name in _FAMILIES:
        raise SymgptError(f"family {family.name!r} is registered twice")
    _FAMILIES[family.name] = family
    return family


def registered() -> dict[str, Family]:
    """The families registered so far (``symgpt.families.family`` and ``families`` import the
    built-in ones on first use)."""
    return dict(_FAMILIES)

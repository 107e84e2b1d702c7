"""A published formula as data: what it says, where it comes from, under which convention."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


@dataclass(frozen=True)
class Formula:
    name: str                       # a short id: "megatron-params"
    expression: str                 # over the canonical symbols (and ``names``)
    quantity: str                   # "params", "flops.forward", ...
    source: str                     # paper or model, section
    convention: str                 # in words: what the formula counts and how
    model: str = "gpt2"             # preset or family ("gpt2": every size symbolic)
    settings: Mapping[str, object] = field(default_factory=dict)  # flags and sizes
    options: Mapping[str, object] = field(default_factory=dict)   # provider options
    part: str | None = None         # a breakdown prefix, or several joined by commas
    roles: tuple[str, ...] = ()     # the entries with these roles (symgpt.graph.roles; STACK: a stack)
    per_block: bool = False         # divided by the number of blocks
    regime: str | None = None       # a rule: compared at leading order as these grow
    names: Mapping[str, str] = field(default_factory=dict)        # N -> "12*L*d^2"
    expect: str = "equal"           # "equal", the documented ``formula - derived``, or ""
    #                                 (the source documents no exact verdict)
    why: str = ""                   # where the expected discrepancy is documented

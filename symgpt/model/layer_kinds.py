"""Why a layer kind's count (``L_attn``, ``L_ssm_mlp``, ...: ``symgpt.core.flag_symbols.LAYER_KINDS``)
cannot be set on a model whose layers are not counted that way: one line for the refusal."""

from __future__ import annotations

from ..core.errors import SymgptError
from ..core.flag_symbols import LAYER_KINDS
from ..core.symbols import CANONICAL, MEANING


#: the flags whose period makes each layer's kind a function of its index (a fixed interleave)
_PERIODS = {"full_every": "full-attention", "moe_every": "mixture-of-experts", "nope_every": "position-free"}


def not_a_count(m, name: str) -> str:
    """Why the layer-kind count *name* cannot be set on *m* (one line)."""
    what = f"{m.name}: {name} ({MEANING[name]}) is not a count of this model"
    periods = [f"{flag}={m.flags[flag]}: one layer in every {m.flags[flag]} is {kind}"
               for flag, kind in _PERIODS.items() if (m.flags.get(flag) or 0) > 1]
    if periods:
        return (f"{what}: its layer kinds follow a fixed interleave ({'; '.join(periods)}), so each kind's count "
                "is a floor of L over the period; set L")
    stacks = m.arch.stacks()
    if len(stacks) == 1:
        return f"{what}: its layers are all of one kind, {stacks[0].repeat} of them"
    shown = ", ".join(f"{g.name} × {g.repeat}" for g in stacks)
    return f"{what}: its stacks are {shown}"


def check_free(m, arch, names) -> None:
    """Refuse to leave free (a sweep's grid, a rule's growth) a layer kind's count that no stack of
    *arch* is counted in: its values would change nothing (Zamba2's hybrid layers dealt round
    several shared blocks keep integer counts per block: set the count instead)."""
    used = set().union(*(g.repeat.free_symbols for g in arch.stacks()))
    for name in sorted(LAYER_KINDS.intersection(names)):
        if CANONICAL[name] in used:
            continue
        if name not in m.sizes:
            raise SymgptError(not_a_count(m, name))
        shown = ", ".join(f"{g.name} × {g.repeat}" for g in arch.stacks())
        raise SymgptError(f"{m.name}: {name} counts no stack of the formula (its stacks are {shown}: a fixed "
                          f"interleave); set {name} to rebuild the model with that count")

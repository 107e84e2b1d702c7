"""Granite with sliding windows and attention sinks (transformers' ``GraniteSWAForCausalLM`` and
``GraniteMoeSWAForCausalLM``): Granite's block (and Granite MoE's, with its shared expert) with
its scalar multipliers, sliding-window layers among full-attention ones (by default the first of
every four full), and in every layer a learned sink logit per head applied as a scale of each
head's output rows, σ(logsumexp(S) - sink) (``ops.SinkScale``: h parameters per layer). A layer
whose ``layer_rope_theta`` is 0 has no positions."""

from __future__ import annotations

from ..core.errors import SymgptError
from .decoders import decoder_family
from .fields import Fields, Reader, layer_types
from .granite import MULTIPLIERS, multipliers
from .granitemoe import ROUTER
from .granitemoe import granitemoe_fields
from .llama import read_llama_like

#: the flags these families add to the generic decoder's (read by ``blocks/decoder_layers.py`` and
#: ``blocks/stacks.py``)
ADDED = {"sink_scale": True, "full_layers": None}
ADDED_HELP = {
    "sink_scale": "attention sinks as an output scale: each head's output rows times σ(logsumexp(S) - sink) "
                  "(h parameters per layer)",
    "full_layers": "with window: how many layers are full-attention, in any order (in place of full_every)",
}

FAMILIES = (
    decoder_family("granite_swa", "Granite-SWA: Granite's block with sliding-window layers among full ones and "
                   "attention sinks as an output scale", added=ADDED, added_help=ADDED_HELP, gqa=True,
                   window=True, full_every=4),
    decoder_family("granitemoe_swa", "Granite MoE-SWA: Granite MoE's block (shared expert optional) with "
                   "sliding-window layers among full ones and attention sinks as an output scale",
                   added=ADDED, added_help=ADDED_HELP, moe=True, gqa=True, window=True, full_every=4,
                   shared_expert="plain", **ROUTER),
)


def _windows(f: Fields, flags: dict, sizes: dict, default_window=128) -> None:
    """``layer_types`` (default: the first of every four layers full) as counts of sliding and full
    layers, and ``layer_rope_theta`` (0: no positions; allowed in the full layers only, all of them)."""
    L = sizes["L"]
    types = layer_types(f, L, ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(L)])
    window = f.int("sliding_window", default_window, optional=True)
    flags["window"] = "sliding_attention" in types
    flags["full_every"] = flags["full_layers"] = None
    if flags["window"]:
        if window is None:
            raise SymgptError(f"{f.where}: sliding_attention layers need a 'sliding_window' length")
        sizes["W"] = window
        flags["full_layers"] = types.count("full_attention") or None
    thetas = f.cfg.get("layer_rope_theta")
    f.used.add("layer_rope_theta")
    if thetas is None:
        return
    if not isinstance(thetas, list) or len(thetas) != L or \
            not all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in thetas):
        raise SymgptError(f"{f.where}: field 'layer_rope_theta' must list one number per layer")
    nope = [t == 0 for t in thetas]
    full = [t == "full_attention" for t in types]
    if any(nope) and (nope != full or not flags["window"]):
        raise SymgptError(f"{f.where}: layer_rope_theta 0 (no positions) in other layers than exactly the "
                          "full-attention ones is not modelled")
    flags["nope_full"] = any(nope)


def read_granite_swa(f: Fields):
    """transformers' GraniteSWAConfig (a GraniteConfig)."""
    flags, sizes = read_llama_like(f, dict(V=100352, d=2560, d_ff=8192, L=24, h=20, h_kv=4, T_max=8192, tied=True))
    multipliers(f, MULTIPLIERS, "Granite-SWA")
    _windows(f, flags, sizes)
    flags["sink_scale"] = True
    return "granite_swa", flags, sizes


def read_granitemoe_swa(f: Fields):
    """transformers' GraniteMoeSWAConfig (a GraniteMoeSharedConfig)."""
    flags, sizes = granitemoe_fields(f, "granitemoe_swa")
    shared = f.int("shared_intermediate_size", 0, minimum=0)
    flags["shared_expert"] = "plain" if shared else "none"
    flags["shared_ff"] = shared or None
    _windows(f, flags, sizes)
    flags["sink_scale"] = True
    return "granitemoe_swa", flags, sizes


READERS = {"granite_swa": Reader(read_granite_swa, ("GraniteSWAForCausalLM",)),
           "granitemoe_swa": Reader(read_granitemoe_swa, ("GraniteMoeSWAForCausalLM",))}

PRESETS = ()

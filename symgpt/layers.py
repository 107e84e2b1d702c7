"""The layers of symgpt, lowest first. A module may import modules of its own layer or of a layer
below it, never one above; and no import cycles, even through imports inside functions.
``tests/test_layers.py`` walks every module's imports and holds the package to this table.

A module belongs to the layer of the longest prefix below that names it.
"""

from __future__ import annotations

#: (layer, module prefixes) from the bottom up
LAYERS = (
    # vocabulary every layer speaks: errors, files, symbols, safe parsing, conventions, notation
    ("symbols", ("symgpt.errors", "symgpt.io", "symgpt.io_folders", "symgpt.symbols", "symgpt.exprparse",
                 "symgpt.numtext", "symgpt.version", "symgpt.conventions", "symgpt.notation", "symgpt.notation_profiles",
                 "symgpt.layers", "symgpt.lazy", "symgpt.hardware")),
    ("ops", ("symgpt.ops",)),                                   # the op catalog and its rules
    ("graph", ("symgpt.graph", "symgpt.digraph", "symgpt.roles")),                # Arch, Builder, Group; what a node is
    ("families", ("symgpt.families",)),                         # architectures declared on the ops
    ("derive", ("symgpt.quantity", "symgpt.derive")),           # params, shapes, FLOPs, memory, time
    ("model", ("symgpt.model", "symgpt.preset", "symgpt.presets", "symgpt.presets_decoder",
               "symgpt.presets_recent", "symgpt.presets_encdec", "symgpt.hfconfig", "symgpt.hfreaders",
               "symgpt.hfreaders_decoders", "symgpt.hfreaders_encdec")),  # Model, load, presets, config.json
    ("query", ("symgpt.query", "symgpt.sweep")),                # questions asked of derivations
    ("render", ("symgpt.render",)),                             # printers of given objects
    ("documents", ("symgpt.documents",)),                       # load models, run queries, assemble
    ("cli", ("symgpt.cli", "symgpt.__main__", "symgpt")),       # the command line and the facade
)

#: what printers must not import although it sits below them: they format what they are given,
#: so they never derive, load a model or run a query (``module: names``; an empty tuple forbids the module)
RENDER_FORBIDDEN = {
    "symgpt.derive": (),
    "symgpt.model": ("load",),
    "symgpt.preset": (),
    "symgpt.presets": (),
    "symgpt.presets_decoder": (),
    "symgpt.presets_recent": (),
    "symgpt.hfreaders_decoders": (),
    "symgpt.presets_encdec": (),
    "symgpt.hfconfig": (),
    "symgpt.hfreaders": (),
    "symgpt.hfreaders_encdec": (),
    "symgpt.query": (),
    "symgpt.sweep": (),
}

NAMES = tuple(name for name, _ in LAYERS)


def layer_of(module: str) -> str:
    """The layer of a module of symgpt (``symgpt.render.dot`` -> ``render``)."""
    best, found = -1, None
    for name, prefixes in LAYERS:
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, found = len(p), name
    if found is None:
        raise KeyError(f"{module} is in no layer of symgpt.layers.LAYERS")
    return found


def rank(module: str) -> int:
    """The height of a module's layer (0 is the bottom)."""
    return NAMES.index(layer_of(module))

"""The layers of symgpt, lowest first. A module may import modules of its own layer or of a layer
below it, never one above; and no import cycles, even through imports inside functions.
``tests/test_layers.py`` walks every module's imports and holds the package to this table.

A module belongs to the layer of the longest package prefix below that names it; the facade
``symgpt`` is placed by its exact name. A module no entry names raises (a new package needs its
line here).
"""

from __future__ import annotations

#: (layer, packages) from the bottom up. Every module of symgpt is in exactly one package named
#: here (the facade ``symgpt``, ``symgpt.__main__`` and ``symgpt.version`` are the only modules at
#: the top level); a module in no package of this table is an error, never a silent default.
LAYERS = (
    # vocabulary every layer speaks: errors, files, symbols, safe parsing, numbers, conventions,
    # notation, hardware profiles, the derivation cache, lazy references, this table
    ("core", ("symgpt.core", "symgpt.version")),
    ("ops", ("symgpt.ops",)),                  # the op catalog and its rules
    ("graph", ("symgpt.graph",)),              # Arch, Builder, Group; the digraph; roles
    ("families", ("symgpt.families",)),        # architectures declared on the ops
    ("derive", ("symgpt.derive",)),            # Quantity; params, shapes, FLOPs, memory, time
    ("model", ("symgpt.model",)),              # Model, load, config.json
    ("query", ("symgpt.query", "symgpt.sweep",   # questions asked of derivations
               "symgpt.simulate")),              # a request mix served: closed forms, simulation
    ("render", ("symgpt.render",)),            # printers of given objects
    ("external", ("symgpt.external",)),        # programs symgpt runs: pdflatex, dot; forked work
    ("documents", ("symgpt.documents",)),      # load models, run queries, assemble
    ("cli", ("symgpt.cli", "symgpt.__main__")),  # the command line
    ("facade", ()),                            # ``symgpt`` itself: lazy names for the API
)

#: modules placed by their exact name, not as a package prefix (so ``symgpt`` is no catch-all)
EXACT = {"symgpt": "facade"}

#: what printers must not import although it sits below them: they format what they are given,
#: so they never derive, load a model, look up what a model offers or run a query (``module:
#: names``; an empty tuple forbids the module and every module under it)
RENDER_FORBIDDEN = {
    "symgpt.derive": (),
    "symgpt.model": (),
    # the presets and config.json readers live with their families; printers never build a graph
    "symgpt.families": ("presets", "readers", "reader", "register_preset", "PRESETS", "READERS"),
    "symgpt.families.fields": (),
    "symgpt.families.blocks": (),
    "symgpt.query": (),
    "symgpt.sweep": (),
}

#: modules under a forbidden prefix that printers may import: the value types they print
#: (a Quantity is the answer a derivation hands over, with its breakdown, notes and convention)
RENDER_ALLOWED = frozenset({"symgpt.derive.quantity"})

NAMES = tuple(name for name, _ in LAYERS)


def layer_of(module: str) -> str:
    """The layer of a module of symgpt (``symgpt.render.dot`` -> ``render``)."""
    if module in EXACT:
        return EXACT[module]
    best, found = -1, None
    for name, prefixes in LAYERS:
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, found = len(p), name
    if found is None:
        raise KeyError(f"{module} is in no layer of symgpt.core.import_layers.LAYERS")
    return found


def rank(module: str) -> int:
    """The height of a module's layer (0 is the bottom)."""
    return NAMES.index(layer_of(module))

"""The CLI's choices, read from the engine: no list here repeats one of ``conventions.py``,
``derive/memory.py`` or the printers. The table below names each list by a lazy reference
(:class:`~symgpt.core.lazy.Ref`) to the engine's own collection (or the function that lists it);
an :class:`EngineChoices` imports that module only when argparse first checks or lists a value,
so ``symgpt --help`` (and a command's ``--help`` that shows no choices) stays free of SymPy and
networkx."""

from __future__ import annotations

import argparse
from typing import Iterator

from ..core.lazy import Ref


class EngineChoices:
    """argparse ``choices`` loaded on first use from the engine: *source* names a collection (its
    keys, for a mapping) or a function that returns one; *first* are values listed before it."""

    def __init__(self, what: str, source: Ref, first: tuple = ()):
        self.what = what
        self.source = source
        self.first = first
        self._values: tuple | None = None

    @property
    def values(self) -> tuple:
        if self._values is None:
            found = self.source.get()
            self._values = (*self.first, *(found() if callable(found) else found))
        return self._values

    def __contains__(self, value) -> bool:
        return value in self.values

    def __iter__(self) -> Iterator:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def parse(self, text: str):
        """An argparse ``type`` that accepts exactly these choices: the engine is read when a
        value is parsed, never for ``--help`` (argparse lists ``choices`` in every help text)."""
        for v in self.values:
            if str(v) == text:
                return v
        raise argparse.ArgumentTypeError(
            f"invalid choice: {text[:60]!r} (choose from {', '.join(str(v) for v in self.values)})")

    def __repr__(self) -> str:
        return f"EngineChoices({self.what})"


CONVENTIONS = EngineChoices("conventions", Ref("symgpt.core.conventions", "CONVENTIONS"))
RECOMPUTE = EngineChoices("recompute modes", Ref("symgpt.core.conventions", "RECOMPUTE"))
PER = EngineChoices("FLOP units", Ref("symgpt.core.conventions", "PER"))
ATTENTION = EngineChoices("attention kinds", Ref("symgpt.core.conventions", "ATTENTION"))
IMPLEMENTATIONS = EngineChoices("implementations", Ref("symgpt.core.conventions", "IMPLEMENTATIONS"))
PRECISIONS = EngineChoices("precisions", Ref("symgpt.derive.memory", "PRECISIONS"))
OPTIMIZERS = EngineChoices("optimizers", Ref("symgpt.derive.memory", "OPTIMIZERS"))
ZERO_STAGES = EngineChoices("ZeRO stages", Ref("symgpt.derive.memory", "ZERO_STAGES"))
STAGES = EngineChoices("pipeline stages", Ref("symgpt.derive.layout", "STAGES"))
SCHEDULES = EngineChoices("pipeline schedules", Ref("symgpt.derive.layout", "SCHEDULES"))
OFFLOAD = EngineChoices("offload targets", Ref("symgpt.derive.layout", "OFFLOAD"))  # offloading to host memory
SCHEDULE_FORMATS = EngineChoices("schedule formats", Ref("symgpt.render.cluster_fig", "SCHEDULE_FORMATS"))
FITS = EngineChoices("scaling-law fits", Ref("symgpt.derive.optimal", "FITS"))
NOTATIONS = EngineChoices("notations", Ref("symgpt.core.notation", "builtin_names"))
NUMBER_STYLES = EngineChoices("number styles", Ref("symgpt.render.latex_numbers", "STYLES"))
GRAPH_FORMATS = EngineChoices("diagram formats", Ref("symgpt.render.dot", "FORMATS"))
COLOR_BY = EngineChoices("diagram colourings", Ref("symgpt.render.dot", "COLOR_BY"))
DIAGRAM_FITS = EngineChoices("diagram fits", Ref("symgpt.render.dotfit", "FITS"))
TABLE_FORMATS = EngineChoices("table formats", Ref("symgpt.render.tables", "FORMATS"))
LATEX_PARTS = EngineChoices("LaTeX parts", Ref("symgpt.documents.latex_doc", "WHATS"))
QUANTITIES = EngineChoices("quantities", Ref("symgpt.model.model", "quantity_names"), first=("params",))
INFER_CONVENTIONS = EngineChoices("inference conventions", Ref("symgpt.derive.inference_setup", "CONVENTIONS"))
HARDWARE = EngineChoices("hardware profiles", Ref("symgpt.core.hardware", "names"))
WEIGHT_BITS = EngineChoices("weight and KV-cache bits", Ref("symgpt.derive.inference_setup", "BITS"))
ACT_BITS = EngineChoices("activation bits", Ref("symgpt.derive.inference_setup", "ACT_BITS"))
PHASES = EngineChoices("inference phases", Ref("symgpt.derive.step", "PHASES"))
# parameter-efficient fine-tuning (--finetune, --qlora-base)
FINETUNE = EngineChoices("fine-tuning methods", Ref("symgpt.derive.finetune", "METHODS"))
QLORA_BASES = EngineChoices("QLoRA base storage", Ref("symgpt.derive.finetune", "BASES"))


def listed(choices: EngineChoices) -> str:
    """The choices as help text lists them (``a, b, c``); reads the engine."""
    return ", ".join(str(v) for v in choices)

# --- the request-mix simulation (symgpt serve --scheduler)
SIM_SCHEDULERS = EngineChoices("schedulers", Ref("symgpt.simulate.engine", "SCHEDULERS"))
# --- expert-parallel serving (symgpt serve --dispatch-bits)
DISPATCH_BITS = EngineChoices("all-to-all dispatch bits", Ref("symgpt.derive.serving_ep", "DISPATCH_CHOICES"))
# --- multi-latent attention's decode form (symgpt infer/serve --mla)
MLA_FORMS = EngineChoices("MLA decode forms", Ref("symgpt.derive.mla_absorbed", "FORMS"))

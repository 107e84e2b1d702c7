"""The CLI's choices, read from the engine: no list here repeats one of ``conventions.py``,
``derive/memory.py`` or the printers. Each is an :class:`EngineChoices`, which imports its engine
module only when argparse first checks or lists a value, so ``symgpt --help`` (and a command's
``--help`` that shows no choices) stays free of SymPy and networkx."""

from __future__ import annotations

import argparse
from typing import Callable, Iterator


class EngineChoices:
    """argparse ``choices`` loaded on first use from the engine (``load() -> tuple``)."""

    def __init__(self, what: str, load: Callable[[], tuple]):
        self.what = what
        self._load = load
        self._values: tuple | None = None

    @property
    def values(self) -> tuple:
        if self._values is None:
            self._values = tuple(self._load())
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


def _conventions():
    from ..core.conventions import CONVENTIONS

    return tuple(CONVENTIONS)


def _recompute():
    from ..core.conventions import RECOMPUTE

    return RECOMPUTE


def _per():
    from ..core.conventions import PER

    return PER


def _attention():
    from ..core.conventions import ATTENTION

    return ATTENTION


def _implementations():
    from ..core.conventions import IMPLEMENTATIONS

    return IMPLEMENTATIONS


def _precisions():
    from ..derive.memory import PRECISIONS

    return tuple(PRECISIONS)


def _optimizers():
    from ..derive.memory import OPTIMIZERS

    return tuple(OPTIMIZERS)


def _zero_stages():
    from ..derive.memory import ZERO_STAGES

    return ZERO_STAGES


def _notations():
    from ..core.notation import builtin_names

    return tuple(builtin_names())


def _number_styles():
    from ..render.latex_numbers import STYLES

    return STYLES


def _graph_formats():
    from ..render.dot import FORMATS

    return FORMATS


def _color_by():
    from ..render.dot import COLOR_BY

    return COLOR_BY


def _diagram_fits():
    from ..render.dotfit import FITS

    return tuple(FITS)


def _table_formats():
    from ..render.tables import FORMATS

    return FORMATS


def _latex_parts():
    from ..documents.latex_doc import WHATS

    return WHATS


def _stages():
    from ..derive.layout import STAGES

    return STAGES


def _schedules():
    from ..derive.layout import SCHEDULES

    return SCHEDULES


def _schedule_formats():
    from ..render.cluster_fig import SCHEDULE_FORMATS

    return SCHEDULE_FORMATS


def _fits():
    from ..derive.optimal import FITS

    return tuple(FITS)


def _infer_conventions():
    from ..derive.inference_setup import CONVENTIONS

    return tuple(CONVENTIONS)


def _hardware():
    from ..core.hardware import names

    return names()


def _weight_bits():
    from ..derive.inference_setup import BITS

    return BITS


def _act_bits():
    from ..derive.inference_setup import ACT_BITS

    return ACT_BITS


def _phases():
    from ..derive.step import PHASES

    return PHASES


def _quantities():
    from ..model.model import quantity_names

    return ("params", *quantity_names())


CONVENTIONS = EngineChoices("conventions", _conventions)
RECOMPUTE = EngineChoices("recompute modes", _recompute)
PER = EngineChoices("FLOP units", _per)
ATTENTION = EngineChoices("attention kinds", _attention)
IMPLEMENTATIONS = EngineChoices("implementations", _implementations)
PRECISIONS = EngineChoices("precisions", _precisions)
OPTIMIZERS = EngineChoices("optimizers", _optimizers)
ZERO_STAGES = EngineChoices("ZeRO stages", _zero_stages)
STAGES = EngineChoices("pipeline stages", _stages)
SCHEDULES = EngineChoices("pipeline schedules", _schedules)
SCHEDULE_FORMATS = EngineChoices("schedule formats", _schedule_formats)
FITS = EngineChoices("scaling-law fits", _fits)
NOTATIONS = EngineChoices("notations", _notations)
NUMBER_STYLES = EngineChoices("number styles", _number_styles)
GRAPH_FORMATS = EngineChoices("diagram formats", _graph_formats)
COLOR_BY = EngineChoices("diagram colourings", _color_by)
DIAGRAM_FITS = EngineChoices("diagram fits", _diagram_fits)
TABLE_FORMATS = EngineChoices("table formats", _table_formats)
LATEX_PARTS = EngineChoices("LaTeX parts", _latex_parts)
QUANTITIES = EngineChoices("quantities", _quantities)
INFER_CONVENTIONS = EngineChoices("inference conventions", _infer_conventions)
HARDWARE = EngineChoices("hardware profiles", _hardware)
WEIGHT_BITS = EngineChoices("weight and KV-cache bits", _weight_bits)
ACT_BITS = EngineChoices("activation bits", _act_bits)
PHASES = EngineChoices("inference phases", _phases)


def listed(choices: EngineChoices) -> str:
    """The choices as help text lists them (``a, b, c``); reads the engine."""
    return ", ".join(str(v) for v in choices)
